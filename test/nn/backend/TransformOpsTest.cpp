// The transform family's checks (ops/TransformOps.h), made once for every device: arguments that
// do not fit are a ShapeError naming the op, before any device runs it.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include "nn/backend/Backend.h"

using namespace dl4cpp;

TEST_SUITE("nn/backend") {
  TEST_CASE(
      "TransformOps: block copies, lookups and combinations outside their tensors are refused") {
    const auto backend = makeBackend(Device::cpu());
    const Tensor src = Tensor::fromVector({2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor dst(Shape{2, 2});
    backend->copyBlocks(src, 1, 3, dst, 0, 2, 2, 2);  // columns 1..2 of each row
    CHECK(dst.toVector() == std::vector<float>{2, 3, 5, 6});
    CHECK_THROWS_AS(backend->copyBlocks(src, 2, 3, dst, 0, 2, 2, 2), ShapeError);
    CHECK_THROWS_AS(backend->copyBlocks(src, 0, 3, dst, 1, 2, 2, 2), ShapeError);
    CHECK_THROWS_AS(backend->copyBlocks(src, -1, 3, dst, 0, 2, 2, 1), ShapeError);
    CHECK_THROWS_AS(backend->copyBlocks(src, 0, 1, dst, 0, 2, 2, 2), ShapeError);  // overlapping

    const Tensor table = Tensor::fromVector({3, 2}, {1, 2, 3, 4, 5, 6});
    const Tensor bias = Tensor::fromVector({2}, {10, 20});
    Tensor z(Shape{2, 2, 2});
    const std::vector<int64_t> index{2, -1, 0, 1};
    backend->embeddingForward(index, table, bias, z);
    // z[e][k][t]: example 0 looks up rows 2 and nothing, example 1 rows 0 and 1.
    CHECK(z.toVector() == std::vector<float>{15, 0, 26, 0, 11, 13, 22, 24});
    Tensor dw(table.shape()), db(bias.shape());
    backend->embeddingBackward(index, z, dw, db);
    CHECK(dw.toVector() == std::vector<float>{11, 22, 13, 24, 15, 26});
    CHECK(db.toVector() == std::vector<float>{39, 72});
    const std::vector<int64_t> outside{3, 0, 0, 0};
    CHECK_THROWS_AS(backend->embeddingForward(outside, table, bias, z), ShapeError);
    const std::vector<int64_t> tooFew{0, 0};
    CHECK_THROWS_AS(backend->embeddingForward(tooFew, table, bias, z), ShapeError);

    const Tensor a = Tensor::fromVector({3}, {1, 5, 2}), b = Tensor::fromVector({3}, {4, 5, 0});
    Tensor y(Shape{3});
    const Tensor both[] = {a, b};
    backend->combineForward(CombineOp::MAX, both, y);
    CHECK(y.toVector() == std::vector<float>{4, 5, 2});
    Tensor da(Shape{3}), dbGrad(Shape{3});
    Tensor grads[] = {da, dbGrad};
    backend->combineBackward(CombineOp::MAX, both, y, Tensor::fromVector({3}, {1, 1, 1}), grads);
    CHECK(da.toVector() == std::vector<float>{0, 1, 1});  // a tie goes to the first input
    CHECK(dbGrad.toVector() == std::vector<float>{1, 0, 0});
    // The output may be any of the inputs: the first (a gradient summed in place) or a later one.
    Tensor first = a.clone(), later = b.clone();
    const Tensor intoFirst[] = {first, b};
    backend->combineForward(CombineOp::SUBTRACT, intoFirst, first);
    CHECK(first.toVector() == std::vector<float>{-3, 0, 2});
    const Tensor intoLater[] = {a, later};
    backend->combineForward(CombineOp::SUBTRACT, intoLater, later);
    CHECK(later.toVector() == std::vector<float>{-3, 0, 2});
    const Tensor mismatched[] = {a, Tensor(Shape{4})};
    CHECK_THROWS_AS(backend->combineForward(CombineOp::ADD, mismatched, y), ShapeError);
    CHECK_THROWS_AS(backend->combineForward(CombineOp::ADD, std::span<const Tensor>(), y),
                    ShapeError);
  }
}
