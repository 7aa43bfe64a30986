// ParallelWrapper's SHARED_GRADIENTS with threshold encoding (Builder::thresholdAlgorithm): against
// a hand-driven encode/decode, reproducibility, the cluster path, the reported figures, and
// accuracy on real MNIST against the uncompressed mode.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "parallel/ClusterTestUtil.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;
using testutil::messageOf;
using testutil::runRanks;
using testutil::VectorIterator;

namespace {

MultiLayerNetwork initialized(const MultiLayerConfiguration& conf) {
  MultiLayerNetwork m(conf);
  m.init();
  return m;
}

ParallelWrapper::Builder encoded(MultiLayerNetwork& root, int workers) {
  return testutil::wrapperOnCpu(root)
      .workers(workers)
      .threadsPerWorker(1)
      .prefetchBuffer(0)
      .trainingMode(TrainingMode::SHARED_GRADIENTS)
      .thresholdAlgorithm(AdaptiveThresholdAlgorithm(1e-3, 1e-2, 0.2))
      .residualPostProcessor(ResidualClippingPostProcessor(5, 3));
}

std::vector<float> trainedEncoded(const MultiLayerConfiguration& conf,
                                  const std::vector<DataSet>& data, int workers, int epochs) {
  MultiLayerNetwork root = initialized(conf);
  auto wrapper = encoded(root, workers).build();
  VectorIterator it(data);
  wrapper.fit(it, epochs);
  return root.params().toVector();
}

// Test accuracy (2000 test examples) of a small MLP trained on the first 12,800 examples of
// MNIST, 2 workers of 32 sharing gradients for 200 steps, compressed when `compress`.
double mnistAccuracy(bool compress, ParallelStatistics* stats) {
  const auto conf =
      NeuralNetConfiguration::Builder()
          .seed(7)
          .updater(Nesterovs(0.1, 0.9))
          .list()
          .layer(DenseLayer::Builder().nIn(784).nOut(64).activation(Activation::RELU).build())
          .layer(OutputLayer::Builder(LossFunction::MCXENT)
                     .nOut(10)
                     .activation(Activation::SOFTMAX)
                     .build())
          .build();
  MultiLayerNetwork root = initialized(conf);
  auto builder = testutil::wrapperOnCpu(root).workers(2).threadsPerWorker(1).trainingMode(
      TrainingMode::SHARED_GRADIENTS);
  // DL4J's adaptive rule, started at 1e-3 and aiming at 0.1-5% of the elements: with DL4J's
  // defaults (start 1e-4, aim 0.01-1%) tau climbs 3.5% a step and needs most of these 200
  // steps to reach the gradients' scale, sending densely meanwhile.
  if (compress) builder.thresholdAlgorithm(AdaptiveThresholdAlgorithm(1e-3, 1e-3, 5e-2));
  auto wrapper = builder.build();
  MnistDataSetIterator train(32, 12800, false, true, true, 123);
  wrapper.fit(train);
  if (stats) *stats = wrapper.statistics();
  MnistDataSetIterator test(500, 2000, false, false, false, 123);
  return root.evaluate(test).accuracy();
}

}  // namespace

TEST_SUITE("parallel") {
  TEST_CASE(
      "ParallelWrapper encoding: 1 worker equals encoding, decoding and applying its gradients "
      "by hand, and what was applied plus the residual is the sum of the gradients") {
    const auto conf = testutil::smallNet(Nesterovs(0.05, 0.9), 1e-3);
    const auto data = testutil::batches(12, 4, 5, 3);
    const ResidualClippingPostProcessor clipping(5, 3);
    struct Case {
      const char* name;
      std::unique_ptr<ThresholdAlgorithm> algorithm;
      const ResidualPostProcessor* post;
    };
    std::vector<Case> cases;
    cases.push_back({"adaptive, clipping",
                     std::make_unique<AdaptiveThresholdAlgorithm>(1e-3, 1e-2, 0.2), &clipping});
    cases.push_back(
        {"fixed, no post-processor", std::make_unique<FixedThresholdAlgorithm>(2e-3), nullptr});
    for (const Case& c : cases) {
      CAPTURE(c.name);
      MultiLayerNetwork root = initialized(conf);
      auto builder = testutil::wrapperOnCpu(root)
                         .workers(1)
                         .threadsPerWorker(1)
                         .trainingMode(TrainingMode::SHARED_GRADIENTS)
                         .thresholdAlgorithm(*c.algorithm);
      if (c.post)
        builder.residualPostProcessor(*c.post);
      else
        builder.residualPostProcessor(nullptr);
      auto wrapper = builder.build();
      VectorIterator it(data);
      wrapper.fit(it);

      MultiLayerNetwork byHand = initialized(conf);
      const auto n = static_cast<size_t>(byHand.numParams());
      EncodingHandler handler(*c.algorithm, c.post);
      std::vector<float> residual(n, 0.0f), gradientSum(n, 0.0f), appliedSum(n, 0.0f);
      std::vector<int32_t> message;
      int64_t bytes = 0, encodedElements = 0;
      double lastThreshold = 0;
      for (size_t i = 0; i < data.size(); ++i) {
        byHand.setIterationCount(static_cast<int64_t>(i));
        byHand.computeGradientAndScore(data[i]);
        float* gradient = byHand.gradient().data();
        for (size_t j = 0; j < n; ++j) gradientSum[j] += gradient[j];
        const EncodingStats s =
            handler.encode(gradient, residual, static_cast<int64_t>(i), 0, message);
        bytes += s.bytes;
        encodedElements += s.encoded;
        lastThreshold = s.threshold;
        std::fill(gradient, gradient + n, 0.0f);
        thresholdDecodeAdd(message, std::span<float>(gradient, n));
        for (size_t j = 0; j < n; ++j) appliedSum[j] += gradient[j];
        byHand.applyUpdate();
      }
      CHECK(root.params().toVector() == byHand.params().toVector());  // bit for bit
      CHECK(root.updaterState().toVector() == byHand.updaterState().toVector());
      CHECK(root.getIterationCount() == 12);

      const ParallelStatistics& stats = wrapper.statistics();
      CHECK(stats.sentRounds == 12);
      CHECK(stats.sentBytes == bytes);
      CHECK(stats.encodedElements == encodedElements);
      CHECK(stats.encodableElements == 12 * root.numParams());
      CHECK(stats.lastThreshold == lastThreshold);
      CHECK(stats.density() > 0);
      CHECK(stats.density() < 1);
      if (!c.post) {
        // Nothing clipped: nothing lost.
        for (size_t j = 0; j < n; ++j)
          CHECK(appliedSum[j] + residual[j] ==
                doctest::Approx(gradientSum[j]).epsilon(1e-5).scale(1e-3));
      }
    }
  }

  TEST_CASE("ParallelWrapper encoding: 2 workers are bit-identical on repeat, across epochs") {
    const auto conf = testutil::smallNet(Adam(0.01));
    const auto data = testutil::batches(11, 5, 8, 2);  // the last round is uneven
    const std::vector<float> first = trainedEncoded(conf, data, 2, 2);
    const std::vector<float> second = trainedEncoded(conf, data, 2, 2);
    CHECK(first == second);

    // Compression changed what was applied (the test is not vacuous) ...
    MultiLayerNetwork plain = initialized(conf);
    auto wrapper = testutil::wrapperOnCpu(plain)
                       .workers(2)
                       .threadsPerWorker(1)
                       .trainingMode(TrainingMode::SHARED_GRADIENTS)
                       .build();
    VectorIterator it(data);
    wrapper.fit(it, 2);
    CHECK(plain.params().toVector() != first);
    CHECK(wrapper.statistics().sentBytes == 0);  // nothing encoded, no cluster: nothing sent
  }

  TEST_CASE("ParallelWrapper encoding: 2 in-process ranks equal 1 process with 2 workers") {
    testutil::withinSeconds(120, [] {
      const auto conf = testutil::smallNet(Nesterovs(0.05, 0.9), 1e-3);
      const auto data = testutil::batches(9, 6, 2, 5);
      MultiLayerNetwork alone = initialized(conf);
      auto aloneWrapper = encoded(alone, 2).build();
      VectorIterator it(data);
      aloneWrapper.fit(it, 2);
      const ParallelStatistics aloneStats = aloneWrapper.statistics();

      std::vector<std::vector<float>> params(2), states(2);
      std::vector<ParallelStatistics> stats(2);
      const auto failures = runRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
        MultiLayerConfiguration own = conf;
        own.seed += static_cast<uint64_t>(rank);  // fit() replaces it by rank 0's
        MultiLayerNetwork root = initialized(own);
        auto wrapper = encoded(root, 1).cluster(std::move(cluster)).build();
        VectorIterator data2(data);
        wrapper.fit(data2, 2);
        params[static_cast<size_t>(rank)] = root.params().toVector();
        states[static_cast<size_t>(rank)] = root.updaterState().toVector();
        stats[static_cast<size_t>(rank)] = wrapper.statistics();
      });
      for (const auto& f : failures) REQUIRE(messageOf(f) == "");
      for (int r = 0; r < 2; ++r) {
        CHECK(params[static_cast<size_t>(r)] == alone.params().toVector());
        CHECK(states[static_cast<size_t>(r)] == alone.updaterState().toVector());
      }
      // The two ranks together sent what the two workers of one process did.
      CHECK(stats[0].sentBytes + stats[1].sentBytes == aloneStats.sentBytes);
      CHECK(stats[0].encodedElements + stats[1].encodedElements == aloneStats.encodedElements);
    });
  }

  TEST_CASE("ParallelWrapper encoding: the configuration is checked") {
    MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.1)));
    CHECK_THROWS_AS(testutil::wrapperOnCpu(root)
                        .workers(1)
                        .thresholdAlgorithm(AdaptiveThresholdAlgorithm())
                        .build(),  // AVERAGING
                    ConfigError);
    CHECK_THROWS_AS(testutil::wrapperOnCpu(root)
                        .workers(1)
                        .trainingMode(TrainingMode::SHARED_GRADIENTS)
                        .residualPostProcessor(ResidualClippingPostProcessor())
                        .build(),
                    ConfigError);
  }

  TEST_CASE(
      "ParallelWrapper encoding: an MLP on real MNIST reaches the accuracy of uncompressed "
      "sharing, sending a small fraction of the gradients") {
    ParallelStatistics stats;
    const double plain = mnistAccuracy(false, nullptr);
    const double compressed = mnistAccuracy(true, &stats);
    MESSAGE("MNIST, 200 steps of 2 x 32: uncompressed ", plain, ", compressed ", compressed,
            ", density ", stats.density(), ", ", stats.sentBytesPerRound(), " bytes per round");
    CHECK(plain > 0.85);
    CHECK(compressed > plain - 0.03);
    CHECK(stats.density() < 0.15);
  }
}
