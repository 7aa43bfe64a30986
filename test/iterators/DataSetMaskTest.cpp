#include <doctest/doctest.h>

#include <vector>

#include "iterators/DataSet.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

// n sequences of `steps` steps with 2 features: feature f of example e at step t is
// 100 e + 10 f + t + 1 (never 0, so padding is visible); labels (n, 1, steps) = e.
DataSet sequences(int64_t n, int64_t steps, float firstExample = 0) {
  std::vector<float> f, l;
  for (int64_t e = 0; e < n; ++e) {
    for (int64_t feature = 0; feature < 2; ++feature)
      for (int64_t t = 0; t < steps; ++t)
        f.push_back(100 * (firstExample + static_cast<float>(e)) +
                    10 * static_cast<float>(feature) + static_cast<float>(t) + 1);
    for (int64_t t = 0; t < steps; ++t) l.push_back(firstExample + static_cast<float>(e));
  }
  return DataSet(Tensor::fromVector({n, 2, steps}, f), Tensor::fromVector({n, 1, steps}, l));
}

std::vector<float> values(const Tensor& t) { return {t.data(), t.data() + t.numel()}; }

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("DataSet masks: a mask must be [examples, time steps] of a sequence tensor") {
    const DataSet data = sequences(3, 4);
    CHECK_NOTHROW(DataSet(data.features, data.labels, Tensor(Shape{3, 4}), Tensor(Shape{3, 4})));
    CHECK_THROWS_AS(DataSet(data.features, data.labels, Tensor(Shape{3, 5}), Tensor()),
                    DataMismatchError);
    CHECK_THROWS_AS(DataSet(data.features, data.labels, Tensor(), Tensor(Shape{2, 4})),
                    DataMismatchError);
    CHECK_THROWS_AS(DataSet(data.features, data.labels, Tensor(Shape{3, 4, 1}), Tensor()),
                    DataMismatchError);
    // A mask on feed-forward features names both shapes.
    try {
      (void)DataSet(Tensor(Shape{3, 2}), Tensor(), Tensor(Shape{3, 4}), Tensor());
      FAIL("a mask on [3, 2] features was accepted");
    } catch (const DataMismatchError& e) {
      CHECK(std::string(e.what()).find("featuresMask [3, 4]") != std::string::npos);
      CHECK(std::string(e.what()).find("features [3, 2]") != std::string::npos);
    }
  }

  TEST_CASE("DataSet masks: rows, copy and shuffled carry the masks with their examples") {
    DataSet data = sequences(4, 3);
    std::vector<float> mask = {1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1};
    data.featuresMask = Tensor::fromVector({4, 3}, mask);
    data.labelsMask = Tensor::fromVector({4, 3}, mask);
    data.validate();
    CHECK(values(data.rows(1, 3).featuresMask) == std::vector<float>{1, 1, 0, 1, 0, 0});
    const DataSet copy = data.copy();
    CHECK(copy.labelsMask.data() != data.labelsMask.data());
    CHECK(values(copy.labelsMask) == mask);
    const DataSet shuffled = data.shuffled(7);
    for (int64_t row = 0; row < 4; ++row) {
      const auto e = static_cast<int64_t>(shuffled.labels.data()[row * 3]);
      for (int64_t t = 0; t < 3; ++t) {
        CHECK(shuffled.featuresMask.data()[row * 3 + t] == mask[static_cast<size_t>(e * 3 + t)]);
        CHECK(shuffled.labelsMask.data()[row * 3 + t] == mask[static_cast<size_t>(e * 3 + t)]);
      }
    }
  }

  TEST_CASE("DataSet::merge pads shorter sequences at the end and masks the padding") {
    const DataSet a = sequences(1, 2, 0);
    DataSet b = sequences(2, 3, 1);
    b.featuresMask = Tensor::fromVector({2, 3}, {1, 1, 1, 1, 1, 0});
    const DataSet merged = DataSet::merge({a, b});
    REQUIRE(merged.features.shape() == Shape{3, 2, 3});
    // Example 0 (2 steps) padded with zeros after its own steps, feature by feature.
    CHECK(values(merged.features.rows(0, 1)) == std::vector<float>{1, 2, 0, 11, 12, 0});
    CHECK(values(merged.features.rows(2, 3)) == std::vector<float>{201, 202, 203, 211, 212, 213});
    CHECK(values(merged.featuresMask) == std::vector<float>{1, 1, 0, 1, 1, 1, 1, 1, 0});
    // Labels had no masks, but example 0's were padded: its padding is masked.
    CHECK(values(merged.labelsMask) == std::vector<float>{1, 1, 0, 1, 1, 1, 1, 1, 1});
    CHECK(values(merged.labels.rows(0, 1)) == std::vector<float>{0, 0, 0});

    // Equal lengths and no masks: no mask is made.
    const DataSet same = DataSet::merge({sequences(1, 3), sequences(2, 3)});
    CHECK(same.featuresMask.empty());
    CHECK(same.labelsMask.empty());
    // Sequences of a different size still cannot be merged.
    CHECK_THROWS_AS(DataSet::merge({sequences(1, 3), DataSet(Tensor(Shape{1, 5, 3}), Tensor())}),
                    DataMismatchError);
  }
}
