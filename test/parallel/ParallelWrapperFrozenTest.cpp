// ParallelWrapper with frozen layers: replicas (built from the root's configuration) are frozen
// too, and averaging leaves the frozen parameters and running statistics bit-identical, also in
// rounds where the workers trained on different numbers of examples (a weighted mean of equal
// values need not be that value in float).
#include <doctest/doctest.h>

#include <string>

#include "nn/transferlearning/FrozenNetworkTestUtil.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;
using testutil::bitIdentical;
using testutil::range;

TEST_SUITE("parallel") {
  TEST_CASE("ParallelWrapper, 2 workers: frozen layers stay bit-identical in every training mode") {
    for (TrainingMode mode : {TrainingMode::AVERAGING, TrainingMode::SHARED_GRADIENTS}) {
      INFO("mode " << std::string(mode == TrainingMode::AVERAGING ? "AVERAGING"
                                                                  : "SHARED_GRADIENTS"));
      MultiLayerNetwork root = testutil::withFrozenLayers(testutil::pretrainedTestNet(), 1);
      // A running mean far larger than its variance: pooling such statistics in double does not
      // give the float values back (E[x^2] - mean^2 loses the variance's last bits).
      Tensor statistics = root.layerState().clone();
      statistics.data()[0] = 1e5f;  // channel 0's mean
      statistics.data()[8] = 0.3f;  // channel 0's variance
      root.setLayerState(statistics);
      const int64_t frozen = root.numFrozenParams();
      const std::vector<float> params = range(root.params(), 0, root.numParams());
      const std::vector<float> state = range(root.layerState(), 0, 16);  // layer 1's statistics
      auto wrapper = testutil::wrapperOnCpu(root)
                         .workers(2)
                         .averagingFrequency(2)
                         .threadsPerWorker(1)
                         .trainingMode(mode)
                         .build();
      // 10 minibatches, the last of 5 examples: in the last round one worker trains on 16
      // examples, the other on 5.
      testutil::VectorIterator data(testutil::batches(10, 16, 13, 5));
      wrapper.fit(data, 2);
      CHECK(bitIdentical(range(root.params(), 0, frozen),
                         std::vector<float>(params.begin(), params.begin() + frozen)));
      CHECK(bitIdentical(range(root.layerState(), 0, 16), state));
      CHECK_FALSE(bitIdentical(range(root.params(), frozen, root.numParams()),
                               std::vector<float>(params.begin() + frozen, params.end())));
    }
  }
}
