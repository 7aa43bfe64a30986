#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "TempDir.h"
#include "TestPaths.h"
#include "fuzz/ModelLoaderFuzzInput.h"
#include "nn/core/AtomicFile.h"
#include "nn/util/ModelFileTestUtil.h"

using namespace dl4cpp;

namespace {

const std::filesystem::path kCorpus = testutil::testDataDir() / "model-loader-corpus";

// The valid seeds of the fuzz corpus: small networks of every layer type and updater.
void writeSeeds() {
  auto save = [](MultiLayerNetwork net, const std::string& name, bool updater) {
    net.init();
    for (int i = 0; i < 2; ++i) net.fit(testutil::convBatch(i));
    net.save(kCorpus / name, updater);
  };
  save(MultiLayerNetwork(testutil::smallConvNet(Nesterovs(0.1, 0.9))), "seed-conv-nesterovs.dl4cpp",
       true);
  MultiLayerNetwork noUpdater(testutil::smallConvNet(Sgd(0.1)));
  noUpdater.init();
  noUpdater.save(kCorpus / "seed-conv-sgd-no-updater.dl4cpp", false);
  MultiLayerNetwork same(
      NeuralNetConfiguration::Builder()
          .seed(3)
          .updater(RmsProp(0.01))
          .convolutionMode(ConvolutionMode::Same)
          .biasUpdater(Adam(0.1))
          .list()
          .layer(ConvolutionLayer::Builder(2, 2).stride(2, 1).nOut(2).hasBias(false).build())
          .layer(SubsamplingLayer::Builder(PoolingType::AVG, 3, 3, 1, 1).build())
          .layer(OutputLayer::Builder(LossFunction::MSE)
                     .nOut(2)
                     .activation(Activation::IDENTITY)
                     .build())
          .setInputType(InputType::convolutional(5, 4, 2))
          .build());
  same.init();
  same.save(kCorpus / "seed-same-mode-rmsprop.dl4cpp", true);
  // With a normalizer (section NORM), one of each kind.
  FeatureStatistics perChannel;
  perChannel.grouping = FeatureGrouping::Channels;
  perChannel.mean = {0.5, -0.25};
  perChannel.std = {2, 0};
  NormalizerStandardize standardize;
  standardize.setFeatureStats(perChannel);
  ModelSerializer::writeModel(same, kCorpus / "seed-normalizer-standardize-per-channel.dl4cpp",
                              true, &standardize);
  MultiLayerNetwork conv(testutil::smallConvNet(Sgd(0.1)));
  conv.init();
  FeatureStatistics perColumn;
  for (int c = 0; c < 36; ++c) {
    perColumn.min.push_back(-c);
    perColumn.max.push_back(c % 5 == 0 ? -c : c);  // some constant columns
  }
  NormalizerMinMaxScaler minMax(-1, 1);
  minMax.setFeatureStats(perColumn);
  ModelSerializer::writeModel(conv, kCorpus / "seed-normalizer-min-max-per-column.dl4cpp", false,
                              &minMax);
  const ImagePreProcessingScaler scaler(0, 2, 16);
  ModelSerializer::writeModel(conv, kCorpus / "seed-normalizer-image-scaler.dl4cpp", false,
                              &scaler);
  save(MultiLayerNetwork(
           NeuralNetConfiguration::Builder()
               .seed(4)
               .updater(Adam(0.01))
               .list()
               .layer(ZeroPaddingLayer::Builder(1, 0, 2, 1).build())
               .layer(ConvolutionLayer::Builder(2, 2).nOut(3).build())
               .layer(LocalResponseNormalization::Builder(1.5, 3, 0.01, 0.75).build())
               .layer(GlobalPoolingLayer::Builder(PoolingType::PNORM).pnorm(3).build())
               .layer(
                   LossLayer::Builder(LossFunction::MCXENT).activation(Activation::SOFTMAX).build())
               .setInputType(InputType::convolutionalFlat(6, 6, 1))
               .build()),
       "seed-padding-lrn-global-pooling-loss-layer.dl4cpp", true);
  MultiLayerNetwork regularized(
      NeuralNetConfiguration::Builder()
          .seed(5)
          .updater(AMSGrad(0.01))
          .biasUpdater(AdaDelta())
          .l1(1e-3)
          .weightDecay(1e-2, false)
          .gradientNormalization(GradientNormalization::ClipL2PerParamType)
          .list()
          .layer(DenseLayer::Builder()
                     .nOut(4)
                     .updater(AdaGrad(0.1))
                     .l1Bias(1e-3)
                     .weightDecayBias(1e-3)
                     .gradientNormalization(GradientNormalization::ClipElementWiseAbsoluteValue)
                     .gradientNormalizationThreshold(0.5)
                     .build())
          .layer(OutputLayer::Builder(LossFunction::MCXENT)
                     .nOut(3)
                     .activation(Activation::SOFTMAX)
                     .updater(Nadam(0.01))
                     .build())
          .setInputType(InputType::convolutionalFlat(6, 6, 1))
          .build());
  save(std::move(regularized), "seed-dense-amsgrad-l1-weight-decay-clipping.dl4cpp", true);
  save(MultiLayerNetwork(NeuralNetConfiguration::Builder()
                             .seed(5)
                             .weightInit(UniformDistribution(-0.2, 0.2))
                             .list()
                             .layer(DenseLayer::Builder()
                                        .nOut(6)
                                        .activation(Activation::GELU)
                                        .weightInit(NormalDistribution(0, 0.1))
                                        .build())
                             .layer(ActivationLayer::Builder(Activation::SELU).build())
                             .layer(OutputLayer::Builder(LossFunction::KL_DIVERGENCE)
                                        .nOut(3)
                                        .activation(Activation::SOFTMAX)
                                        .weightInit(WeightInit::LECUN_UNIFORM)
                                        .build())
                             .setInputType(InputType::feedForward(36))
                             .build()),
       "seed-activations-distributions.dl4cpp", true);
  constexpr ScheduleType kIteration = ScheduleType::ITERATION, kEpoch = ScheduleType::EPOCH;
  auto dense = [](const UpdaterParams& u) { return DenseLayer::Builder().nOut(3).updater(u); };
  save(MultiLayerNetwork(
           NeuralNetConfiguration::Builder()
               .seed(6)
               .updater(Nesterovs(StepSchedule(kIteration, 0.1, 0.5, 3),
                                  MapSchedule(kEpoch, {{0, 0.5}, {10, 0.9}})))
               .biasUpdater(Sgd(ExponentialSchedule(kEpoch, 0.1, 0.9)))
               .list()
               .layer(dense(RmsProp(InverseSchedule(kIteration, 0.05, 0.25, 0.75))).build())
               .layer(dense(AdaGrad(PolySchedule(kEpoch, 0.1, -2, 40))).build())
               .layer(dense(AdaMax(SigmoidSchedule(kIteration, 0.02, 0.1, 50))).build())
               .layer(dense(Nadam(CycleSchedule(kIteration, 0.001, 0.01, 100, 10, 0.5))).build())
               .layer(OutputLayer::Builder(LossFunction::MCXENT)
                          .nOut(3)
                          .activation(Activation::SOFTMAX)
                          .updater(AMSGrad(CosineWarmupSchedule(kEpoch, 0.01, 0.001, 2, 20)))
                          .build())
               .setInputType(InputType::convolutionalFlat(6, 6, 1))
               .build()),
       "seed-dense-every-schedule.dl4cpp", true);
}

}  // namespace

TEST_SUITE("nn.util.ModelLoaderCorpus") {
  TEST_CASE("the committed fuzz corpus and crashers replay through the fuzz target's entry point") {
    // Regenerate the valid seeds: DL4CPP_WRITE_FIXTURES=1 build/test/dl4cpp_tests -tc="*fuzz
    // corpus*"
    if (std::getenv("DL4CPP_WRITE_FIXTURES")) writeSeeds();

    int files = 0, seeds = 0;
    for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
      const std::string name = entry.path().filename().string();
      CAPTURE(name);
      const std::vector<std::byte> bytes = readWholeFile(entry.path());
      int loaded = 0;
      CHECK_NOTHROW(loaded = fuzz::loadModelInput(bytes));  // only dl4cpp::Error may occur inside
      if (name.rfind("seed-", 0) == 0) {
        CHECK(loaded == 2);  // valid files load as given and after the (no-op) checksum repair
        ++seeds;
      }
      ++files;
    }
    CHECK(seeds >= 3);
    CHECK(files > seeds);  // crashers / interesting inputs found by fuzzing are committed too
  }

  TEST_CASE("the checksum repair of the fuzz target reaches the parser behind the checksums") {
    std::vector<std::byte> file = readWholeFile(kCorpus / "seed-conv-nesterovs.dl4cpp");
    const auto sections = testutil::sections(file);
    // Corrupt the JSON: as given it is a ChecksumError, repaired it is a ConfigError.
    file[sections[0].payloadOffset + 1] = std::byte{'#'};
    CHECK_THROWS_AS(ModelSerializer::restoreFromBytes(file), ChecksumError);
    CHECK_THROWS_AS(ModelSerializer::restoreFromBytes(fuzz::withRepairedChecksums(file)),
                    ConfigError);
  }

}  // TEST_SUITE
