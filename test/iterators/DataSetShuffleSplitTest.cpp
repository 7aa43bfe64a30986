#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "iterators/DataSet.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

// n examples: features (n, 2) = (i, 10 i), labels (n, 1) = i.
DataSet numbered(int64_t n) {
  std::vector<float> f, l;
  for (int64_t i = 0; i < n; ++i) {
    f.push_back(static_cast<float>(i));
    f.push_back(static_cast<float>(10 * i));
    l.push_back(static_cast<float>(i));
  }
  return DataSet(Tensor::fromVector({n, 2}, f), Tensor::fromVector({n, 1}, l));
}

std::vector<float> labelsOf(const DataSet& d) {
  return {d.labels.data(), d.labels.data() + d.labels.numel()};
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("DataSet::shuffled: a seeded permutation of whole examples, in fresh storage") {
    const DataSet data = numbered(50);
    const DataSet a = data.shuffled(3);
    CHECK(a.features.shape() == data.features.shape());
    CHECK(a.features.data() != data.features.data());
    std::set<float> seen;
    for (int64_t r = 0; r < 50; ++r) {
      const float i = a.labels.data()[r];
      CHECK(a.features.data()[2 * r] == i);  // features and labels move together
      CHECK(a.features.data()[2 * r + 1] == 10 * i);
      seen.insert(i);
    }
    CHECK(seen.size() == 50);
    CHECK(labelsOf(a) != labelsOf(data));
    CHECK(labelsOf(data.shuffled(3)) == labelsOf(a));
    CHECK(labelsOf(data.shuffled(4)) != labelsOf(a));
    CHECK(labelsOf(data) == labelsOf(numbered(50)));  // the original is untouched
  }

  TEST_CASE("DataSet::splitTestAndTrain: the first fraction for training, the rest for testing") {
    const DataSet data = numbered(10);
    const DataSet::TrainTest split = data.splitTestAndTrain(0.65);
    CHECK(split.train.numExamples() == 7);  // round(6.5)
    CHECK(split.test.numExamples() == 3);
    CHECK(labelsOf(split.test) == std::vector<float>{7, 8, 9});
    CHECK_THROWS_AS(data.splitTestAndTrain(0.0), ConfigError);
    CHECK_THROWS_AS(data.splitTestAndTrain(1.0), ConfigError);
    // A fraction outside (0, 1) is named as such, not as an empty training part.
    CHECK_THROWS_WITH_AS(data.splitTestAndTrain(1),
                         doctest::Contains("fractionTrain must be strictly between 0 and 1"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(data.splitTestAndTrain(-0.5), doctest::Contains("got -0.5"), ConfigError);
    CHECK_THROWS_AS(data.splitTestAndTrain(0.01), ConfigError);  // no training example
    CHECK_THROWS_AS(data.splitTestAndTrain(0.99), ConfigError);  // no test example
  }
}
