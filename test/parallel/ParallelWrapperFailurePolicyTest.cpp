// ParallelWrapper's FailurePolicy::DROP_WORKER: a worker whose step throws is dropped, its round
// discarded, and the run goes on with the others.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;
using testutil::bitIdentical;
using testutil::VectorIterator;

namespace {

MultiLayerNetwork initialized(const MultiLayerConfiguration& conf) {
  MultiLayerNetwork m(conf);
  m.init();
  return m;
}

// A minibatch the network cannot take (7 features for 6 inputs): the step of the worker it is
// dealt to throws ShapeError.
DataSet malformed() { return {Tensor(Shape{4, 7}), Tensor(Shape{4, 3})}; }

struct Drops : TrainingListener, WorkerFailureListener {
  std::vector<std::pair<int, int64_t>> dropped;  // (worker, iteration)
  std::vector<std::string> errors;
  int rounds = 0;
  void iterationDone(const Model&, const IterationInfo&) override { ++rounds; }
  void onWorkerDropped(const Model&, int worker, int64_t iteration,
                       const std::string& error) override {
    dropped.emplace_back(worker, iteration);
    errors.push_back(error);
  }
};

void fitWith(MultiLayerNetwork& root, int workers, std::vector<DataSet> data) {
  auto wrapper = testutil::wrapperOnCpu(root)
                     .workers(workers)
                     .threadsPerWorker(1)
                     .averagingFrequency(2)
                     .build();
  VectorIterator it(std::move(data));
  wrapper.fit(it);
}

}  // namespace

TEST_SUITE("parallel") {
  TEST_CASE("ParallelWrapper DROP_WORKER: a worker failing at its 5th step is dropped") {
    // Two workers, rounds of two local iterations: worker 1 is dealt minibatches 1, 3 | 5, 7 |
    // 9, 11; minibatch 9, its 5th step, throws.
    const auto conf = testutil::smallNet(Nesterovs(0.1, 0.9));
    auto data = testutil::batches(16, 4, 31);
    data[9] = malformed();

    MultiLayerNetwork survived = initialized(conf);
    auto drops = std::make_shared<Drops>();
    testutil::withinSeconds(30, [&] {
      auto wrapper = testutil::wrapperOnCpu(survived)
                         .workers(2)
                         .threadsPerWorker(1)
                         .averagingFrequency(2)
                         .prefetchBuffer(4)
                         .failurePolicy(FailurePolicy::DROP_WORKER)
                         .setListeners({drops})
                         .build();
      VectorIterator it(data);
      wrapper.fit(it);
    });
    REQUIRE(drops->dropped.size() == 1);
    CHECK(drops->dropped[0].first == 1);
    CHECK(drops->dropped[0].second == 6);  // the third round ends at iteration 6
    CHECK(drops->errors[0].find("7") != std::string::npos);
    // Rounds: three with both workers, then 12-13 and 14-15 on worker 0 alone.
    CHECK(drops->rounds == 5);

    // The same run without worker 1's failed round and later ones: two rounds of both workers,
    // worker 0's half of the third (minibatches 8 and 10), then worker 0 alone on the rest.
    MultiLayerNetwork expected = initialized(conf);
    fitWith(expected, 2, {data.begin(), data.begin() + 8});
    fitWith(expected, 1, {data[8], data[10]});
    fitWith(expected, 1, {data.begin() + 12, data.end()});
    CHECK(bitIdentical(survived.params(), expected.params()));
    CHECK(bitIdentical(survived.updaterState(), expected.updaterState()));
    CHECK(survived.getIterationCount() == expected.getIterationCount());
    CHECK(survived.getMinibatchesInEpoch() == 0);
    CHECK(survived.getEpochCount() == 1);
  }

  TEST_CASE("ParallelWrapper DROP_WORKER: the next fit starts with every worker") {
    const auto conf = testutil::smallNet(Sgd(0.1));
    auto data = testutil::batches(8, 4, 32);
    data[1] = malformed();
    MultiLayerNetwork root = initialized(conf);
    auto drops = std::make_shared<Drops>();
    auto wrapper = testutil::wrapperOnCpu(root)
                       .workers(2)
                       .threadsPerWorker(1)
                       .averagingFrequency(1)
                       .failurePolicy(FailurePolicy::DROP_WORKER)
                       .setListeners({drops})
                       .build();
    VectorIterator it(data);
    wrapper.fit(it);
    CHECK(drops->dropped.size() == 1);
    // Both workers again: worker 1 fails again on the same minibatch.
    it.reset();
    wrapper.fit(it);
    CHECK(drops->dropped.size() == 2);
    CHECK(drops->dropped[1].first == 1);
  }

  TEST_CASE("ParallelWrapper DROP_WORKER: when every worker has failed, fit throws") {
    const auto conf = testutil::smallNet(Sgd(0.1));
    auto data = testutil::batches(8, 4, 33);
    data[2] = malformed();
    data[5] = malformed();
    MultiLayerNetwork root = initialized(conf);
    testutil::withinSeconds(30, [&] {
      auto wrapper = testutil::wrapperOnCpu(root)
                         .workers(2)
                         .threadsPerWorker(1)
                         .failurePolicy(FailurePolicy::DROP_WORKER)
                         .build();
      VectorIterator it(data);
      // Minibatch 2 drops worker 0; worker 1 then takes every minibatch, 5 included.
      CHECK_THROWS_AS(wrapper.fit(it), ShapeError);
    });
  }

  TEST_CASE("ParallelWrapper FAIL_FAST (the default): a failing worker ends fit") {
    const auto conf = testutil::smallNet(Sgd(0.1));
    auto data = testutil::batches(8, 4, 34);
    data[3] = malformed();
    MultiLayerNetwork root = initialized(conf);
    testutil::withinSeconds(30, [&] {
      auto wrapper = testutil::wrapperOnCpu(root).workers(2).threadsPerWorker(1).build();
      VectorIterator it(data);
      CHECK_THROWS_AS(wrapper.fit(it), ShapeError);
    });
  }

  TEST_CASE("ParallelWrapper DROP_WORKER: shared gradients go on with the workers left") {
    const auto conf = testutil::smallNet(Adam(0.01));
    auto data = testutil::batches(10, 4, 35);
    data[3] = malformed();  // worker 1's second step
    MultiLayerNetwork survived = initialized(conf);
    {
      auto wrapper = testutil::wrapperOnCpu(survived)
                         .workers(2)
                         .threadsPerWorker(1)
                         .trainingMode(TrainingMode::SHARED_GRADIENTS)
                         .failurePolicy(FailurePolicy::DROP_WORKER)
                         .build();
      VectorIterator it(data);
      wrapper.fit(it);
    }
    MultiLayerNetwork expected = initialized(conf);
    auto shared = [&](int workers, std::vector<DataSet> part) {
      auto wrapper = testutil::wrapperOnCpu(expected)
                         .workers(workers)
                         .threadsPerWorker(1)
                         .trainingMode(TrainingMode::SHARED_GRADIENTS)
                         .build();
      VectorIterator it(std::move(part));
      wrapper.fit(it);
    };
    shared(2, {data[0], data[1]});
    shared(1, {data[2]});
    shared(1, {data.begin() + 4, data.end()});
    CHECK(bitIdentical(survived.params(), expected.params()));
    CHECK(survived.getIterationCount() == expected.getIterationCount());
  }
}
