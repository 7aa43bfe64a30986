// ParallelInference with a normalizer: every request goes through it before the network, so the
// results are the network's on the normalized features, whether the normalizer was given to the
// builder, came from a model file or arrived with updateModel.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "TempDir.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;
using namespace std::chrono_literals;

namespace {

constexpr int64_t kWidth = 6;  // testutil::smallNet: 6 inputs, 3 outputs

MultiLayerNetwork model(uint64_t seed = 12) {
  MultiLayerNetwork m(testutil::smallNet(NeuralNetConfiguration::Builder().seed(seed)));
  m.init();
  return m;
}

// `rows` examples of kWidth values far from zero mean and unit variance.
Tensor features(int64_t rows, int offset = 0) {
  std::vector<float> v;
  for (int64_t i = 0; i < rows * kWidth; ++i)
    v.push_back(static_cast<float>(40 + 25 * std::sin(0.7 * static_cast<double>(i + offset))));
  return Tensor::fromVector(Shape{rows, kWidth}, v);
}

std::shared_ptr<NormalizerStandardize> fittedStandardize() {
  testutil::VectorIterator data({DataSet(features(8), Tensor())});
  auto n = std::make_shared<NormalizerStandardize>();
  n->fit(data);
  return n;
}

// What the model computes on `x` after `normalizer`.
Tensor expected(const MultiLayerNetwork& m, const DataNormalization& normalizer, const Tensor& x) {
  DataSet batch(x.clone(), Tensor());
  normalizer.transform(batch);
  return m.clone().output(batch.features);
}

bool bitIdentical(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), static_cast<size_t>(a.numel()) * sizeof(float)) == 0;
}

}  // namespace

TEST_SUITE("parallel") {
  TEST_CASE("ParallelInference with a normalizer: results are the model's on normalized input") {
    testutil::withinSeconds(60, [] {
      const MultiLayerNetwork m = model();
      const auto normalizer = fittedStandardize();
      const Tensor x = features(3, 100);
      const std::vector<float> before = x.toVector();
      ParallelInference inference =
          testutil::inferenceOnCpu(m).workers(1).batchLimit(4).normalizer(normalizer).build();
      CHECK(bitIdentical(inference.output(x), expected(m, *normalizer, x)));
      CHECK(x.toVector() == before);  // the caller's features are not touched
      // Without the normalizer the result differs: it is really applied.
      CHECK_FALSE(bitIdentical(inference.output(x), m.clone().output(x)));
      // A request of more rows than batchLimit runs alone, normalized all the same.
      const Tensor big = features(9, 7);
      CHECK(bitIdentical(inference.output(big), expected(m, *normalizer, big)));
      // Refitting the caller's normalizer later does not change what is served: build() copied
      // it.
      testutil::VectorIterator other({DataSet(features(4, 55), Tensor())});
      normalizer->fit(other);
      CHECK(bitIdentical(inference.output(x), expected(m, *fittedStandardize(), x)));
    });
  }

  TEST_CASE("ParallelInference with a normalizer: requests batched together are each normalized") {
    testutil::withinSeconds(60, [] {
      const MultiLayerNetwork m = model();
      const auto normalizer = fittedStandardize();
      std::atomic<int> batches{0};
      std::atomic<bool> release{false};
      ParallelInference inference = testutil::inferenceOnCpu(m)
                                        .workers(1)
                                        .normalizer(normalizer)
                                        .batchListener([&](const InferenceBatch&) {
                                          if (batches++ == 0)
                                            while (!release) std::this_thread::sleep_for(1ms);
                                        })
                                        .build();
      auto first = std::async(std::launch::async, [&] { return inference.output(features(1)); });
      while (batches == 0) std::this_thread::sleep_for(1ms);  // the worker holds the first
      std::vector<Tensor> inputs = {features(2, 10), features(1, 20), features(3, 30)};
      std::vector<std::future<Tensor>> queued;
      for (const Tensor& in : inputs)
        queued.push_back(std::async(std::launch::async, [&] { return inference.output(in); }));
      while (inference.statistics().queuedRequests < 3) std::this_thread::sleep_for(1ms);
      release = true;
      first.get();
      for (size_t i = 0; i < inputs.size(); ++i) {
        const Tensor out = queued[i].get(), want = expected(m, *normalizer, inputs[i]);
        REQUIRE(out.shape() == want.shape());
        for (int64_t k = 0; k < out.numel(); ++k) CHECK(out.at(k) == doctest::Approx(want.at(k)));
      }
      CHECK(inference.statistics().maxBatchRequests == 3);
    });
  }

  TEST_CASE("ParallelInference::Builder from a model file applies the normalizer saved in it") {
    const MultiLayerNetwork m = model();
    const auto normalizer = std::make_shared<NormalizerMinMaxScaler>(-1, 1);
    testutil::VectorIterator data({DataSet(features(5), Tensor())});
    normalizer->fit(data);
    testutil::TempDir dir;
    ModelSerializer::writeModel(m, dir / "m.dl4cpp", false, normalizer.get());
    const ModelAndNormalizer restored =
        ModelSerializer::restoreMultiLayerNetworkAndNormalizer(dir / "m.dl4cpp", false);
    ParallelInference inference = testutil::inferenceOnCpu(restored.model).workers(1).build();
    ParallelInference normalized =
        ParallelInference::Builder(restored).devices({Device::cpu()}).workers(1).build();
    const Tensor x = features(2, 3);
    CHECK(bitIdentical(normalized.output(x), expected(m, *normalizer, x)));
    CHECK(bitIdentical(inference.output(x), m.clone().output(x)));  // without: the raw input
  }

  TEST_CASE("ParallelInference refuses a normalizer that is not fitted or does not apply") {
    const MultiLayerNetwork m = model();
    CHECK_THROWS_WITH_AS(
        testutil::inferenceOnCpu(m).normalizer(std::make_shared<NormalizerStandardize>()).build(),
        doctest::Contains("ParallelInference::Builder: the normalizer does not "
                          "apply: NormalizerStandardize: used before fit()"),
        ConfigError);
    testutil::VectorIterator wide({DataSet(Tensor(Shape{2, 7}), Tensor())});
    auto sevenColumns = std::make_shared<NormalizerMinMaxScaler>();
    sevenColumns->fit(wide);
    CHECK_THROWS_WITH_AS(testutil::inferenceOnCpu(m).normalizer(sevenColumns).build(),
                         doctest::Contains("fitted per column on features of 7 values per "
                                           "example; the network takes FeedForward(6) input"),
                         ConfigError);
  }

  TEST_CASE("ParallelInference::updateModel keeps, replaces or removes the normalizer") {
    testutil::withinSeconds(60, [] {
      const MultiLayerNetwork m = model(), other = model(99);
      const auto standardize = fittedStandardize();
      const auto scaler = std::make_shared<ImagePreProcessingScaler>();
      ParallelInference inference =
          testutil::inferenceOnCpu(m).workers(2).normalizer(standardize).build();
      const Tensor x = features(2, 5);
      inference.updateModel(other);  // keeps the normalizer served
      CHECK(bitIdentical(inference.output(x), expected(other, *standardize, x)));
      inference.updateModel(m, scaler);
      CHECK(bitIdentical(inference.output(x), expected(m, *scaler, x)));
      inference.updateModel(other, nullptr);
      CHECK(bitIdentical(inference.output(x), other.clone().output(x)));
      CHECK_THROWS_AS(inference.updateModel(m, std::make_shared<NormalizerStandardize>()),
                      ConfigError);
      CHECK(inference.statistics().modelUpdates == 3);  // the refused update changed nothing
      CHECK(bitIdentical(inference.output(x), other.clone().output(x)));
    });
  }

  TEST_CASE(
      "ParallelInference::updateModel normalizes for the new model's input kind, and refuses one "
      "the normalizer kept does not apply to") {
    // 6 values as 2 channels of 1x3 images: a per-channel normalizer applies; to a flat input of
    // the same size it does not.
    MultiLayerNetwork images(NeuralNetConfiguration::Builder()
                                 .seed(3)
                                 .list()
                                 .layer(DenseLayer::Builder().nOut(4).build())
                                 .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                            .nOut(3)
                                            .activation(Activation::SOFTMAX)
                                            .build())
                                 .setInputType(InputType::convolutionalFlat(1, 3, 2))
                                 .build());
    images.init();
    FeatureStatistics stats;
    stats.grouping = FeatureGrouping::Channels;
    stats.mean = {1, 2};
    stats.std = {3, 4};
    auto perChannel = std::make_shared<NormalizerStandardize>();
    perChannel->setFeatureStats(stats);
    const MultiLayerNetwork flat = model();
    // Built for a flat input: the per-channel normalizer arriving with an image model is applied
    // as that model's input says (it once was given the flat input type, and refused).
    ParallelInference inference = testutil::inferenceOnCpu(flat).workers(1).build();
    inference.updateModel(images, perChannel);
    const Tensor x = features(2, 8);
    DataSet normalized(x.reshape(Shape{2, 2, 1, 3}).clone(), Tensor());
    perChannel->transform(normalized);
    CHECK(bitIdentical(inference.output(x),
                       images.clone().output(normalized.features.reshape(Shape{2, kWidth}))));
    CHECK_THROWS_WITH_AS(inference.updateModel(flat),
                         doctest::Contains("ParallelInference::updateModel: the normalizer does "
                                           "not apply"),
                         ConfigError);
    inference.updateModel(flat, nullptr);
    CHECK(inference.statistics().modelUpdates == 2);
    CHECK(bitIdentical(inference.output(x), flat.clone().output(x)));
  }
}
