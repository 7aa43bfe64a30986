#include <doctest/doctest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "nn/core/Error.h"
#include "nn/listeners/StatsStorage.h"

using namespace dl4cpp;

namespace {

IterationRecord iterationAt(int64_t iteration) {
  IterationRecord r;
  r.iteration = iteration;
  r.score = 1.0 / static_cast<double>(iteration);
  return r;
}

std::vector<int64_t> iterationsOf(const StatsSnapshot& s) {
  std::vector<int64_t> out;
  for (const auto& r : s.iterations) out.push_back(r.iteration);
  return out;
}

}  // namespace

TEST_SUITE("listeners") {
  TEST_CASE("StatsStorage: a full series drops every second record, keeping first and newest") {
    StatsStorage storage(4);
    for (int64_t i = 1; i <= 4; ++i) storage.addIteration(iterationAt(i));
    CHECK(iterationsOf(storage.snapshot()) == std::vector<int64_t>{1, 2, 3, 4});
    storage.addIteration(iterationAt(5));  // full: 1, 3 and the newest 4 stay, then 5
    CHECK(iterationsOf(storage.snapshot()) == std::vector<int64_t>{1, 3, 4, 5});
    storage.addIteration(iterationAt(6));  // 1, 4, 5 (newest) stay, then 6
    CHECK(iterationsOf(storage.snapshot()) == std::vector<int64_t>{1, 4, 5, 6});
    CHECK(storage.snapshot().iterations[1].score == doctest::Approx(0.25));  // records move whole
    CHECK(storage.revision() == 6);
  }

  TEST_CASE("StatsStorage: a long run stays within maxPoints per series and spans the whole run") {
    StatsStorage storage(50);
    for (int64_t i = 1; i <= 10000; ++i) {
      storage.addIteration(iterationAt(i));
      if (i % 3 == 0) storage.addUpdateRatios(UpdateRatioRecord{i, 0, 0, 1, {0.001}});
      if (i % 7 == 0) storage.addValidation(i, 0, 0.5);
    }
    const StatsSnapshot s = storage.snapshot();
    CHECK(s.iterations.size() <= 50);
    CHECK(s.updateRatios.size() <= 50);
    CHECK(s.validation.size() <= 50);
    CHECK(s.iterations.size() >= 25);
    CHECK(s.iterations.front().iteration == 1);
    CHECK(s.iterations.back().iteration == 10000);
    CHECK(s.updateRatios.back().iteration == 9999);
    CHECK(s.validation.back().iteration == 9996);
    for (size_t i = 1; i < s.iterations.size(); ++i)
      CHECK(s.iterations[i].iteration > s.iterations[i - 1].iteration);
    CHECK(s.revision == 10000 + 3333 + 1428);
  }

  TEST_CASE("StatsStorage: bad settings and validation points are ConfigErrors") {
    CHECK_THROWS_AS(StatsStorage(3), ConfigError);
    StatsStorage storage;
    CHECK(storage.maxPoints() == StatsStorage::kDefaultMaxPoints);
    CHECK_THROWS_WITH_AS(storage.addValidation(10, 0, 1.5),
                         doctest::Contains("accuracy must be in [0, 1], got 1.5"), ConfigError);
    CHECK_THROWS_AS(storage.addValidation(10, 0, -0.1), ConfigError);
    CHECK_THROWS_AS(storage.addValidation(10, 0, std::nan("")), ConfigError);
    CHECK_THROWS_AS(storage.addValidation(-1, 0, 0.5), ConfigError);
    CHECK(storage.revision() == 0);
    storage.addValidation(10, 2, 0.75);
    const auto v = storage.snapshot().validation;
    REQUIRE(v.size() == 1);
    CHECK(v[0].iteration == 10);
    CHECK(v[0].epoch == 2);
    CHECK(v[0].accuracy == 0.75);
  }

  TEST_CASE("StatsStorage: snapshots taken while another thread adds are consistent") {
    StatsStorage storage(64);
    std::thread writer([&] {
      for (int64_t i = 1; i <= 20000; ++i) storage.addIteration(iterationAt(i));
    });
    int64_t lastRevision = 0;
    for (int k = 0; k < 200; ++k) {
      const StatsSnapshot s = storage.snapshot();
      CHECK(s.revision >= lastRevision);
      lastRevision = s.revision;
      REQUIRE(s.iterations.size() <= 64);
      if (!s.iterations.empty()) CHECK(s.iterations.back().iteration == s.revision);
    }
    writer.join();
    CHECK(storage.revision() == 20000);
  }
}
