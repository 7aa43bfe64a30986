// TransferLearning::Builder: what the new network keeps from the original and what it initialises
// afresh, the edits (nOutReplace, removing and adding layers, freezing), its errors, and a new
// head trained on real MNIST above LeNet's frozen convolutions.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <numeric>

#include "LenetConfiguration.h"
#include "nn/layers/RuntimeLayer.h"
#include "nn/transferlearning/FrozenNetworkTestUtil.h"

using namespace dl4cpp;
using testutil::batches;
using testutil::bitIdentical;
using testutil::range;
using testutil::values;

namespace {

// The message of the ConfigError `f` throws.
template <typename F>
std::string configError(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("no ConfigError");
  return "";
}

OutputLayer softmaxOutput(int64_t nOut) {
  return OutputLayer::Builder(LossFunction::MCXENT)
      .nOut(nOut)
      .activation(Activation::SOFTMAX)
      .build();
}

// A layer type of the user's own that TransferLearning and FineTuneConfiguration know nothing
// about: a dense layer under another name, deriving from Layer alone, with its nIn and nOut offered
// through the hooks (Layer::nInOut, clearInferredSizes).
class UserDense : public Layer {
 public:
  int64_t nIn = 0;  // 0: inferred
  int64_t nOut = 0;

  std::shared_ptr<Layer> clone() const override { return std::make_shared<UserDense>(*this); }
  std::string typeName() const override { return "test.UserDense"; }
  bool consumesImages() const override { return false; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override {
    inheritDefaults(defaults);
    if (nIn == 0) nIn = input.flatSize();
    if (nIn != input.flatSize()) throw ConfigError(where(index) + ": nIn does not match");
    validateCommon(index);
    return InputType::feedForward(nOut);
  }
  std::vector<ParamSpec> paramSpecs() const override { return dense().paramSpecs(); }
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override {
    return dense().instantiate();
  }
  std::optional<SizeFields> nInOut() override { return SizeFields{&nIn, &nOut}; }
  void clearInferredSizes() override { nIn = 0; }

 private:
  // The built-in dense layer with this one's settings, whose parameters and runtime it borrows.
  DenseLayer dense() const {
    DenseLayer d;
    static_cast<Layer&>(d) = *this;
    d.nIn = nIn;
    d.nOut = nOut;
    return d;
  }
};

UserDense userDense(int64_t nIn, int64_t nOut) {
  UserDense layer;
  layer.nIn = nIn;
  layer.nOut = nOut;
  layer.activation = Activation::TANH;
  return layer;
}

template <typename L>
const L& layerAs(const MultiLayerNetwork& model, int i) {
  return dynamic_cast<const L&>(*model.getConfiguration().layers[static_cast<size_t>(i)]);
}

}  // namespace

TEST_SUITE("nn/transferlearning") {
  TEST_CASE("TransferLearning: kept layers keep their values, edited ones start from the seed") {
    const MultiLayerNetwork original = testutil::pretrainedTestNet();
    const std::vector<float> params = values(original.params()),
                             state = values(original.layerState());
    // Layer 2 (dense 8 -> 10) becomes 8 -> 12: the batch normalisation after it follows, and the
    // output layer's nIn with it.
    auto builder = [&] {
      return TransferLearning::Builder(original).setFeatureExtractor(1).nOutReplace(
          2, 12, WeightInit::RELU);
    };
    MultiLayerNetwork tuned = builder().build();
    CHECK(layerAs<DenseLayer>(tuned, 2).nOut == 12);
    CHECK(layerAs<DenseLayer>(tuned, 2).weightInit == WeightInitScheme(WeightInit::RELU));
    CHECK(layerAs<BatchNormalization>(tuned, 3).nOut == 12);
    CHECK(layerAs<OutputLayer>(tuned, 4).nIn == 12);
    CHECK(layerAs<OutputLayer>(tuned, 4).weightInit == WeightInitScheme(WeightInit::RELU));
    CHECK(tuned.numFrozenLayers() == 2);
    REQUIRE(tuned.numParams() == 72 + (8 * 12 + 12) + 24 + (12 * 3 + 3));

    // Layers 0 and 1: the original's parameters and running statistics.
    CHECK(bitIdentical(range(tuned.params(), 0, 72), range(original.params(), 0, 72)));
    CHECK(bitIdentical(range(tuned.layerState(), 0, 16), range(original.layerState(), 0, 16)));
    // The rest: what a new network of the edited configuration initialises (the seed's values),
    // with fresh running statistics (means 0, variances 1).
    MultiLayerNetwork fresh(tuned.getConfiguration());
    fresh.init();
    CHECK(bitIdentical(range(tuned.params(), 72, tuned.numParams()),
                       range(fresh.params(), 72, fresh.numParams())));
    CHECK(bitIdentical(range(tuned.layerState(), 16, 40), range(fresh.layerState(), 16, 40)));
    // A fine-tune seed draws other values for them, and only for them.
    MultiLayerNetwork reseeded =
        builder().fineTuneConfiguration(FineTuneConfiguration::Builder().seed(99).build()).build();
    CHECK(bitIdentical(range(reseeded.params(), 0, 72), range(original.params(), 0, 72)));
    CHECK_FALSE(bitIdentical(range(reseeded.params(), 72, reseeded.numParams()),
                             range(tuned.params(), 72, tuned.numParams())));
    CHECK(reseeded.getConfiguration().seed == 99);

    // The copy shares nothing with the original, which is never modified.
    for (const auto& batch : batches(3, 16, 2)) tuned.fit(batch);
    CHECK(bitIdentical(values(original.params()), params));
    CHECK(bitIdentical(values(original.layerState()), state));
    CHECK(original.numFrozenLayers() == 0);
  }

  TEST_CASE("TransferLearning: a new head on kept layers, with the fine-tune settings") {
    const MultiLayerNetwork original = testutil::pretrainedTestNet();
    MultiLayerNetwork tuned =
        TransferLearning::Builder(original)
            .fineTuneConfiguration(FineTuneConfiguration::Builder().updater(Sgd(0.2)).build())
            .setFeatureExtractor(1)
            .removeLayersFromOutput(2)
            .addLayer(DenseLayer::Builder().nOut(7).activation(Activation::RELU).build())
            .addLayer(softmaxOutput(4))
            .build();
    REQUIRE(tuned.numLayers() == 5);
    CHECK(tuned.getConfiguration().outputType.flatSize() == 4);
    CHECK(layerAs<DenseLayer>(tuned, 3).nIn == 10);
    // Kept layers 0 to 2 hold the original's parameters, layer 1 its running statistics.
    CHECK(bitIdentical(range(tuned.params(), 0, 162), range(original.params(), 0, 162)));
    CHECK(bitIdentical(range(tuned.layerState(), 0, 16), range(original.layerState(), 0, 16)));
    // Frozen layers keep their updater; the others, added layers included, take the fine-tune's.
    for (int i = 0; i < 5; ++i) {
      INFO("layer " << i);
      const UpdaterKind kind = tuned.getConfiguration().layers[size_t(i)]->updater->kind;
      CHECK((kind == (i <= 1 ? UpdaterKind::ADAM : UpdaterKind::SGD)));
    }
    // Added layers take the original's other defaults (l2 here).
    CHECK(*layerAs<DenseLayer>(tuned, 3).l2 == 1e-3);

    // The head learns on the kept features.
    const std::vector<DataSet> data = batches(30, 16, 4);
    std::vector<DataSet> fourClasses;
    for (const DataSet& d : data) {
      Tensor labels(Shape{d.numExamples(), 4});
      for (int64_t r = 0; r < d.numExamples(); ++r)
        for (int64_t c = 0; c < 3; ++c) labels.data()[r * 4 + c] = d.labels.data()[r * 3 + c];
      fourClasses.push_back({d.features, labels});
    }
    const double before = tuned.score(fourClasses.front());
    for (int epoch = 0; epoch < 5; ++epoch)
      for (const DataSet& d : fourClasses) tuned.fit(d);
    CHECK(tuned.score(fourClasses.front()) < before);
  }

  TEST_CASE("TransferLearning: removeOutputLayer and a new output layer, everything else frozen") {
    const MultiLayerNetwork original = testutil::pretrainedTestNet();
    MultiLayerNetwork tuned = TransferLearning::Builder(original)
                                  .setFeatureExtractor(3)
                                  .removeOutputLayer()
                                  .addLayer(softmaxOutput(5))
                                  .build();
    REQUIRE(tuned.numLayers() == 5);
    CHECK(tuned.numFrozenLayers() == 4);
    CHECK(layerAs<OutputLayer>(tuned, 4).nIn == 10);
    CHECK(tuned.getConfiguration().outputType.flatSize() == 5);
    // Layers 0 to 3 (182 parameters, all 36 running statistics) carry over; the output is new.
    REQUIRE(tuned.numParams() == 182 + 10 * 5 + 5);
    CHECK(bitIdentical(range(tuned.params(), 0, 182), range(original.params(), 0, 182)));
    CHECK(bitIdentical(values(tuned.layerState()), values(original.layerState())));
  }

  TEST_CASE("TransferLearning: nOutReplace passes the new size through parameterless layers") {
    MultiLayerNetwork original(testutil::smallConvNet(Adam(0.01)));
    original.init();
    // conv 3x3 (2) -> max pool -> dense 5 -> softmax 3 on 6x6: the convolution gets 3 outputs, the
    // dense layer after the pooling takes 3 * 2 * 2 inputs.
    MultiLayerNetwork tuned = TransferLearning::Builder(original)
                                  .nOutReplace(0, 3, WeightInit::XAVIER, NormalDistribution(0, 0.1))
                                  .build();
    CHECK(layerAs<ConvolutionLayer>(tuned, 0).nOut == 3);
    CHECK(layerAs<DenseLayer>(tuned, 2).nIn == 12);
    CHECK(layerAs<DenseLayer>(tuned, 2).weightInit == WeightInitScheme(NormalDistribution(0, 0.1)));
    // The output layer did not change: its parameters carry over.
    const int64_t head = 5 * 3 + 3;
    CHECK(
        bitIdentical(range(tuned.params(), tuned.numParams() - head, tuned.numParams()),
                     range(original.params(), original.numParams() - head, original.numParams())));
  }

  TEST_CASE("TransferLearning: a user's layer type takes part through the Layer hooks") {
    // 6 -> user dense 8 -> user dense 5 -> softmax 3; the first layer's nOut becomes 4.
    MultiLayerNetwork original(NeuralNetConfiguration::Builder()
                                   .seed(5)
                                   .updater(Adam(0.01))
                                   .list()
                                   .layer(userDense(6, 8))
                                   .layer(userDense(0, 5))
                                   .layer(softmaxOutput(3))
                                   .build());
    original.init();
    for (const auto& batch : batches(2, 16, 3)) original.fit(batch);
    MultiLayerNetwork tuned =
        TransferLearning::Builder(original)
            .fineTuneConfiguration(FineTuneConfiguration::Builder().updater(Sgd(0.2)).build())
            .nOutReplace(0, 4, WeightInit::XAVIER)
            .build();
    CHECK(layerAs<UserDense>(tuned, 0).nOut == 4);
    CHECK(layerAs<UserDense>(tuned, 1).nIn == 4);  // inferred again from the new size
    CHECK(tuned.numParams() == (6 * 4 + 4) + (4 * 5 + 5) + (5 * 3 + 3));
    // The output layer did not change: its parameters carry over.
    const int64_t head = 5 * 3 + 3;
    CHECK(
        bitIdentical(range(tuned.params(), tuned.numParams() - head, tuned.numParams()),
                     range(original.params(), original.numParams() - head, original.numParams())));
    // The fine-tune's updater reaches the user's layers (they have parameters: base layers).
    for (int i = 0; i < 3; ++i) {
      INFO("layer " << i);
      CHECK((tuned.getConfiguration().layers[size_t(i)]->updater->kind == UpdaterKind::SGD));
    }
    const std::vector<float> before = values(tuned.params());
    for (const auto& batch : batches(2, 16, 4)) tuned.fit(batch);
    CHECK_FALSE(bitIdentical(values(tuned.params()), before));
  }

  TEST_CASE("TransferLearning: errors name the problem") {
    const MultiLayerNetwork original = testutil::pretrainedTestNet();
    using Builder = TransferLearning::Builder;

    MultiLayerNetwork uninitialised(testutil::frozenTestNet());
    CHECK(configError([&] { Builder{uninitialised}; }).find("must be initialised") !=
          std::string::npos);

    CHECK(configError([&] {
            Builder(original).setFeatureExtractor(-1);
          }).find("setFeatureExtractor(-1)") != std::string::npos);
    const std::string beyond =
        configError([&] { Builder(original).setFeatureExtractor(5).build(); });
    CHECK(beyond.find(
              "setFeatureExtractor(5) is beyond the edited network, which has layers 0 to 4") !=
          std::string::npos);
    // ... also when removing layers makes the index fall outside.
    CHECK(configError([&] {
            Builder(original)
                .setFeatureExtractor(4)
                .removeLayersFromOutput(2)
                .addLayer(softmaxOutput(3))
                .build();
          }).find("layers 0 to 3") != std::string::npos);

    const std::string noNOut =
        configError([&] { Builder(original).nOutReplace(1, 4, WeightInit::XAVIER); });
    CHECK(noNOut.find("layer 1 (BatchNormalization) has no nOut") != std::string::npos);
    CHECK(configError([&] {
            Builder(original).nOutReplace(5, 4, WeightInit::XAVIER);
          }).find("the network has layers 0 to 4") != std::string::npos);
    CHECK(configError([&] {
            Builder(original)
                .nOutReplace(4, 4, WeightInit::XAVIER)
                .removeOutputLayer()
                .addLayer(softmaxOutput(3))
                .build();
          }).find("edits a layer that removeLayersFromOutput(1) removes") != std::string::npos);

    CHECK(configError([&] { Builder(original).removeLayersFromOutput(6); }).find("remove 1 to 5") !=
          std::string::npos);
    CHECK(configError([&] {
            Builder(original).removeOutputLayer().removeOutputLayer();
          }).find("already removed") != std::string::npos);
    CHECK(configError([&] {
            Builder(original).removeLayersFromOutput(5).build();
          }).find("has no layers") != std::string::npos);

    // Edits that break the shapes: the configuration's own validation, naming the layer.
    const std::string mismatch = configError([&] {
      Builder(original)
          .removeOutputLayer()
          .addLayer(OutputLayer::Builder(LossFunction::MCXENT)
                        .nIn(7)
                        .nOut(3)
                        .activation(Activation::SOFTMAX)
                        .build())
          .build();
    });
    CHECK(mismatch.find("TransferLearning::Builder::build: layer 4 (OutputLayer): nIn is 7") !=
          std::string::npos);
    CHECK(configError([&] {
            Builder(original).nOutReplace(2, 0, WeightInit::XAVIER).build();
          }).find("layer 2 (DenseLayer): nOut must be") != std::string::npos);
    CHECK(configError([&] {
            Builder(original).removeOutputLayer().build();
          }).find("layer 3 (BatchNormalization)") != std::string::npos);

    // A frozen layer keeps trained parameters: nOutReplace may not re-initialise it.
    CHECK(
        configError([&] {
          Builder(original).setFeatureExtractor(2).nOutReplace(0, 4, WeightInit::XAVIER).build();
        }).find("layer 0 (DenseLayer) is frozen, but its parameters would be initialised afresh") !=
        std::string::npos);
    CHECK(configError([&] {
            Builder(original).setFeatureExtractor(2).nOutReplace(2, 4, WeightInit::XAVIER).build();
          }).find("layer 2 (DenseLayer) is frozen") != std::string::npos);
    // ... nor may a frozen layer be a new one.
    CHECK(configError([&] {
            Builder(original)
                .setFeatureExtractor(3)
                .removeLayersFromOutput(2)
                .addLayer(softmaxOutput(3))
                .build();
          })
              .find("layer 3 (OutputLayer) is frozen, but its parameters would be initialised "
                    "afresh (it is added by addLayer)") != std::string::npos);
  }

  TEST_CASE("TransferLearning on real MNIST: a new head above LeNet's frozen convolutions learns") {
    std::optional<MnistDataSetIterator> train;
    try {
      train.emplace(64, 6400, false, true, true, 123);
    } catch (const DataNotFoundError& e) {
      MESSAGE("skipped: MNIST is not available (" << e.what() << ")");
      return;
    }
    MultiLayerNetwork lenet(samples::lenetConfiguration());
    lenet.init();
    for (int i = 0; i < 40 && train->hasNext(); ++i) lenet.fit(train->next());

    // Convolutions and poolings frozen; a new dense layer and output layer.
    MultiLayerNetwork tuned =
        TransferLearning::Builder(lenet)
            .fineTuneConfiguration(FineTuneConfiguration::Builder().updater(Adam(1e-3)).build())
            .setFeatureExtractor(3)
            .removeLayersFromOutput(2)
            .addLayer(DenseLayer::Builder().nOut(64).activation(Activation::RELU).build())
            .addLayer(OutputLayer::Builder(LossFunction::NEGATIVELOGLIKELIHOOD)
                          .nOut(10)
                          .activation(Activation::SOFTMAX)
                          .build())
            .build();
    const int64_t frozen = tuned.numFrozenParams();
    REQUIRE(frozen == 520 + 25050);
    const std::vector<float> convolutions = range(tuned.params(), 0, frozen);
    std::vector<double> scores;
    while (train->hasNext()) {
      tuned.fit(train->next());
      scores.push_back(tuned.score());
    }
    REQUIRE(scores.size() == 60);
    const double first = std::accumulate(scores.begin(), scores.begin() + 5, 0.0) / 5;
    const double last = std::accumulate(scores.end() - 10, scores.end(), 0.0) / 10;
    INFO("mean score of the first 5 iterations " << first << ", of the last 10 " << last);
    CHECK(last < 0.5 * first);
    CHECK(bitIdentical(range(tuned.params(), 0, frozen), convolutions));

    MnistDataSetIterator test(500, 2000, false, false, false, 123);
    const Evaluation eval = tuned.evaluate(test);
    INFO(eval.stats());
    CHECK(eval.accuracy() > 0.75);  // 0.824 measured (2 threads)
  }
}
