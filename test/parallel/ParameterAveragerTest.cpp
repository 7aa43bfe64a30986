#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>

#include "parallel/ParameterAverager.h"
#include "parallel/WorkerPool.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;

TEST_SUITE("parallel") {
  TEST_CASE("ParameterAverager: example-weighted mean, by hand, written to every destination") {
    // Replicas trained 1, 3 and 0 examples: weights 1/4, 3/4, and no vote for the third.
    std::vector<Tensor> buffers{Tensor::fromVector({2}, {1, 2}), Tensor::fromVector({2}, {3, 4}),
                                Tensor::fromVector({2}, {100, 100})};
    std::vector<Tensor> destinations = buffers;
    Tensor root(Shape{2});
    destinations.push_back(root);
    ParameterAverager::average(buffers, {1, 3, 0}, destinations, 0, 2);
    // (1*1 + 3*3) / 4 = 2.5 and (1*2 + 3*4) / 4 = 3.5
    for (const Tensor& d : destinations) {
      CHECK(d.at(0) == doctest::Approx(2.5));
      CHECK(d.at(1) == doctest::Approx(3.5));
    }
  }

  TEST_CASE("ParameterAverager: one contributor is copied exactly, no examples changes nothing") {
    std::vector<Tensor> buffers{Tensor::fromVector({3}, {0.1f, 0.2f, 0.3f}),
                                Tensor::fromVector({3}, {9, 9, 9})};
    std::vector<Tensor> destinations{Tensor(Shape{3})};
    ParameterAverager::average(buffers, {5, 0}, destinations, 0, 3);
    CHECK(destinations[0].toVector() == buffers[0].toVector());
    ParameterAverager::average(buffers, {0, 0}, destinations, 0, 3);
    CHECK(destinations[0].toVector() == buffers[0].toVector());
  }

  TEST_CASE("ParameterAverager: slices tile the buffer without overlap on cache-line bounds") {
    for (int64_t length : {0, 1, 15, 16, 17, 1000, 431080}) {
      for (int parts : {1, 2, 3, 8}) {
        int64_t expectedBegin = 0;
        for (int p = 0; p < parts; ++p) {
          auto [begin, end] = ParameterAverager::slice(length, p, parts);
          CHECK(begin == expectedBegin);
          CHECK(end >= begin);
          if (end < length) CHECK(end % 16 == 0);
          expectedBegin = end;
        }
        CHECK(expectedBegin == length);
      }
    }
  }

  TEST_CASE("WorkerPool: every worker runs each phase once, the first exception reaches wait()") {
    WorkerPool pool(3);
    std::atomic<int> sum{0};
    pool.run([&](int w) { sum += w + 1; });
    CHECK(sum == 6);
    pool.start([](int w) {
      if (w == 1) throw std::runtime_error("worker 1 failed");
    });
    CHECK_THROWS_WITH_AS(pool.wait(), "worker 1 failed", std::runtime_error);
    // The pool stays usable after a failed phase.
    pool.run([&](int) { sum += 1; });
    CHECK(sum == 9);
  }
}
