// Layer state across replicas: each segment combined by its rule, checked against statistics
// computed by hand, directly and through ParallelWrapper.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <vector>

#include "../nn/conf/BatchStatsTestLayer.h"
#include "ParallelTestUtil.h"
#include "parallel/LayerStateCombiner.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;

namespace {

// Population mean and variance of `values`.
std::pair<double, double> moments(const std::vector<double>& values) {
  double sum = 0, squares = 0;
  for (double v : values) sum += v;
  const double mean = sum / static_cast<double>(values.size());
  for (double v : values) squares += (v - mean) * (v - mean);
  return {mean, squares / static_cast<double>(values.size())};
}

// Population mean and variance of column `feature` of the two-column rows of every batch.
std::pair<double, double> featureMoments(const std::vector<std::vector<float>>& features,
                                         int64_t feature) {
  std::vector<double> all;
  for (const auto& f : features)
    for (size_t i = static_cast<size_t>(feature); i < f.size(); i += 2) all.push_back(f[i]);
  return moments(all);
}

// One ParallelWrapper round of 2 workers on the CPU, worker w training on the two-column rows
// features[w] (labels 0.5).
void trainOneRound(MultiLayerNetwork& root, const std::vector<std::vector<float>>& features) {
  std::vector<DataSet> batches;
  for (const auto& f : features) {
    const int64_t n = static_cast<int64_t>(f.size()) / 2;
    batches.emplace_back(Tensor::fromVector({n, 2}, f),
                         Tensor::fromVector({n, 2}, std::vector<float>(size_t(n) * 2, 0.5f)));
  }
  auto wrapper = testutil::wrapperOnCpu(root).workers(2).averagingFrequency(1).build();
  testutil::VectorIterator it(batches);
  wrapper.fit(it);
}
}  // namespace

TEST_SUITE("parallel") {
  TEST_CASE("LayerStateCombiner: every rule, by hand") {
    // One channel of moments (mean, variance), one weighted-mean value, one per-replica value.
    const std::vector<MultiLayerNetwork::StateSegment> layout{
        {0, "moments", 0, Shape{2, 1}, StateCombine::PooledMeanVariance},
        {0, "mean", 2, Shape{1}, StateCombine::WeightedMean},
        {0, "draw", 3, Shape{1}, StateCombine::PerReplica}};
    // Replica 0 saw 1 example, {0}; replica 1 saw 3, {2, 4, 6} (mean 4, variance 8/3).
    const std::vector<Tensor> states{Tensor::fromVector({4}, {0, 0, 10, 7}),
                                     Tensor::fromVector({4}, {4, 8.0f / 3, 20, 9})};
    Tensor out(Shape{4});
    LayerStateCombiner::combineHost(layout, states, {1, 3}, out);
    const auto [mean, variance] = moments({0, 2, 4, 6});
    CHECK(out.at(0) == doctest::Approx(mean));      // 3
    CHECK(out.at(1) == doctest::Approx(variance));  // 5, where the mean of variances is 2
    CHECK(out.at(2) == doctest::Approx(17.5));      // (10 + 3 * 20) / 4
    CHECK(out.at(3) == 7);                          // replica 0's
    // No examples at all: nothing changes.
    Tensor untouched = Tensor::fromVector({4}, {1, 2, 3, 4});
    LayerStateCombiner::combineHost(layout, states, {0, 0}, untouched);
    CHECK(untouched.toVector() == std::vector<float>{1, 2, 3, 4});
  }

  TEST_CASE("ParallelWrapper: layer state becomes the pooled statistics of all workers' data") {
    testutil::registerBatchStatsLayer();
    MultiLayerNetwork root(testutil::batchStatsNet(2));
    root.init();
    // One round: worker 0 gets 4 rows, worker 1 gets 3, with different means per worker, so the
    // pooled variance differs from any average of the workers' variances.
    const std::vector<std::vector<float>> features{{0, 10, 1, 11, 2, 12, 3, 13},
                                                   {10, -5, 14, -6, 18, -7}};
    trainOneRound(root, features);

    const std::vector<float> state = root.layerState().toVector();
    for (int64_t feature = 0; feature < 2; ++feature) {
      const auto [mean, variance] = featureMoments(features, feature);
      INFO("feature " << feature);
      CHECK(state[size_t(feature)] == doctest::Approx(mean).epsilon(1e-6));
      CHECK(state[size_t(2 + feature)] == doctest::Approx(variance).epsilon(1e-6));
      CHECK(state[size_t(4 + feature)] == doctest::Approx(mean).epsilon(1e-6));
    }
    // Feature 1: the workers' variances are 1.25 and 0.667, the pooled one 76: their spread counts.
    CHECK(state[3] == doctest::Approx(76).epsilon(1e-6));
    // The per-replica draw: the root keeps worker 0's, drawn from replica 0's stream.
    CHECK(state[6] ==
          static_cast<float>(Random(ForwardContext::streamSeed(5, 0, 0, 0)).nextDouble()));
  }

  TEST_CASE("ParallelWrapper: BatchNormalization's running statistics are pooled across workers") {
    // decay 0: each worker's running statistics are its batch's, so after one averaging the root
    // must hold the moments of the union of both workers' rows.
    MultiLayerNetwork root(
        NeuralNetConfiguration::Builder()
            .seed(4)
            .updater(Sgd(0.1))
            .list()
            .layer(BatchNormalization::Builder().decay(0).activation(Activation::IDENTITY).build())
            .layer(OutputLayer::Builder(LossFunction::MSE)
                       .nOut(2)
                       .activation(Activation::IDENTITY)
                       .build())
            .setInputType(InputType::feedForward(2))
            .build());
    root.init();
    const std::vector<std::vector<float>> features{{0, 10, 1, 11, 2, 12, 3, 13, 4, 20},
                                                   {10, -5, 14, -6, 18, -7}};
    trainOneRound(root, features);

    const std::vector<float> state = root.layerState().toVector();
    REQUIRE(state.size() == 4);
    for (int64_t feature = 0; feature < 2; ++feature) {
      const auto [mean, variance] = featureMoments(features, feature);
      INFO("feature " << feature);
      CHECK(state[size_t(feature)] == doctest::Approx(mean).epsilon(1e-5));
      CHECK(state[size_t(2 + feature)] == doctest::Approx(variance).epsilon(1e-5));
    }
  }
}
