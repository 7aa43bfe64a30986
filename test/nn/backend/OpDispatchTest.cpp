// The one dispatch point of the op families (nn/backend/ops/OpDispatch.h): an observer sees every
// op of every family, and every planned kernel, with its phase and FLOPs, and changes no result;
// without one, ops run directly.
#include <doctest/doctest.h>

#include <vector>

#include "nn/backend/Backend.h"
#include "nn/backend/DeviceContext.h"

using namespace dl4cpp;

namespace {

struct Seen {
  OpPhase phase;
  double flops;
};

// Records each op it runs.
class RecordingObserver final : public OpObserver {
 public:
  void run(OpPhase phase, double (*flops)(const void*), const void* flopsArg,
           KernelRef op) override {
    op();
    seen.push_back({phase, flops(flopsArg)});
  }
  std::vector<Seen> seen;
};

Tensor filled(Shape shape, float start) {
  Tensor t(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = start + 0.25f * static_cast<float>(i % 7);
  return t;
}

}  // namespace

TEST_SUITE("OpDispatch") {
  TEST_CASE("an observer sees one op of each family with its phase, FLOPs and result") {
    DeviceContext ctx;
    Backend& ops = ctx.backend();
    const Tensor x = filled(Shape{2, 3, 6, 6}, -1.0f), w = filled(Shape{4, 3, 3, 3}, -0.5f);
    const Tensor b = filled(Shape{4}, 0.1f);
    WindowGeometry g;
    g.kernelH = g.kernelW = 3;
    Tensor expected(Shape{2, 4, 4, 4}), observed(Shape{2, 4, 4, 4});
    ops.convolutionForward(x, w, b, expected, g);

    RecordingObserver observer;
    ops.setObserver(&observer);
    ops.convolutionForward(x, w, b, observed, g);
    Tensor pooled(Shape{2, 4, 2, 2}), workspace;
    WindowGeometry pool;
    pool.kernelH = pool.kernelW = pool.strideH = pool.strideW = 2;
    ops.poolingForward(PoolingKind::MAX, observed, pooled, pool, true, workspace);
    Tensor normalized(x.shape()), lrnWorkspace;
    ops.lrnForward(LrnParams{}, x, normalized, false, lrnWorkspace);
    const double squares = ops.sumOfSquares(b);
    ops.runPlanned(OpPass::BACKWARD_WEIGHTS, 42.0, [] {});
    ops.setObserver(nullptr);
    ops.scale(observed, 1.0f);  // not seen

    REQUIRE(observer.seen.size() == 5);
    CHECK(observer.seen[0].phase == OpPhase::FORWARD);
    CHECK(observer.seen[0].flops == doctest::Approx(2.0 * 2 * 4 * 4 * 4 * 3 * 3 * 3));
    CHECK(observer.seen[1].phase == OpPhase::FORWARD);
    CHECK(observer.seen[1].flops == 0.0);
    CHECK(observer.seen[2].phase == OpPhase::FORWARD);
    CHECK(observer.seen[3].phase == OpPhase::OTHER);
    CHECK(observer.seen[4].phase == OpPhase::BACKWARD_WEIGHTS);
    CHECK(observer.seen[4].flops == 42.0);
    double direct = 0;
    for (int64_t i = 0; i < b.numel(); ++i) direct += double(b.data()[i]) * double(b.data()[i]);
    CHECK(squares == doctest::Approx(direct));
    for (int64_t i = 0; i < expected.numel(); ++i)
      REQUIRE(observed.data()[i] == expected.data()[i]);
  }
}
