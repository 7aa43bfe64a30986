// ParallelWrapper's workers step on the root model's iteration and epoch counts: a schedule
// switches at the same global iteration as in one model trained on the same data, in both
// training modes. (Resuming from a checkpoint on a schedule: CheckpointTest.cpp.)
#include <doctest/doctest.h>

#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;
using testutil::VectorIterator;

namespace {

constexpr ScheduleType kIteration = ScheduleType::ITERATION;

// Nesterovs whose learning rate drops tenfold at iteration `switchAt` and whose momentum rises
// from 0.5 to 0.9 at epoch 1.
UpdaterParams dropAt(int64_t switchAt) {
  return Nesterovs(StepSchedule(kIteration, 0.2, 0.1, static_cast<double>(switchAt)),
                   MapSchedule(ScheduleType::EPOCH, {{0, 0.5}, {1, 0.9}}));
}

// One model of smallNet(updater) trained `epochs` epochs on `data`.
MultiLayerNetwork single(const UpdaterParams& updater, const std::vector<DataSet>& data,
                         int epochs) {
  MultiLayerNetwork model(testutil::smallNet(updater));
  model.init();
  VectorIterator it(data);
  model.fit(it, epochs);
  return model;
}

// The root after `epochs` epochs of a 2-worker wrapper on `data`.
MultiLayerNetwork wrapped(const UpdaterParams& updater, const std::vector<DataSet>& data,
                          int epochs, TrainingMode mode, int averagingFrequency) {
  MultiLayerNetwork root(testutil::smallNet(updater));
  root.init();
  auto wrapper = testutil::wrapperOnCpu(root)
                     .workers(2)
                     .threadsPerWorker(1)
                     .trainingMode(mode)
                     .averagingFrequency(averagingFrequency)
                     .build();
  VectorIterator it(data);
  wrapper.fit(it, epochs);
  return root;
}

// `root` matches a single model whose rate drops at `switchAt`, and not one whose rate drops an
// iteration earlier or later, or never.
void checkSwitchesAt(const MultiLayerNetwork& root, int64_t switchAt,
                     const std::vector<DataSet>& singleData, int epochs) {
  CHECK(root.params().allClose(single(dropAt(switchAt), singleData, epochs).params(), 1e-5f));
  for (int64_t other : {switchAt - 1, switchAt + 1, int64_t{1000}}) {
    CAPTURE(other);
    CHECK_FALSE(root.params().allClose(single(dropAt(other), singleData, epochs).params(), 1e-4f));
  }
}

}  // namespace

TEST_SUITE("parallel") {
  TEST_CASE(
      "ParallelWrapper: SHARED_GRADIENTS workers switch learning rate and momentum at the root's "
      "iteration and epoch") {
    // 2 minibatches per round, one root iteration each: 5 iterations an epoch; the rate drops at
    // iteration 3, in the first epoch.
    const auto data = testutil::batches(10, 4, 7);
    const MultiLayerNetwork root = wrapped(dropAt(3), data, 2, TrainingMode::SHARED_GRADIENTS, 1);
    CHECK(root.getIterationCount() == 10);
    std::vector<DataSet> merged;
    for (size_t i = 0; i < data.size(); i += 2)
      merged.push_back(DataSet::merge({data[i], data[i + 1]}));
    checkSwitchesAt(root, 3, merged, 2);
  }

  TEST_CASE(
      "ParallelWrapper: AVERAGING workers switch learning rate and momentum at the root's "
      "iteration and epoch, inside a round") {
    // Every minibatch twice in a row: dealt i mod 2, both workers train the same minibatches, so
    // each replica, and their average, is the single model on each minibatch once. Rounds of 3
    // local iterations; the rate drops at iteration 4, the second of the second round.
    std::vector<DataSet> twice;
    const auto data = testutil::batches(8, 4, 9);
    for (const DataSet& d : data) twice.insert(twice.end(), {d, d});
    const MultiLayerNetwork root = wrapped(dropAt(4), twice, 2, TrainingMode::AVERAGING, 3);
    CHECK(root.getIterationCount() == 16);
    checkSwitchesAt(root, 4, data, 2);
  }
}
