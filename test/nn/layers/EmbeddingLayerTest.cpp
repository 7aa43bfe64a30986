#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "nn/gradientcheck/CorruptedGradientLayer.h"
#include "nn/layers/LayerTestUtil.h"

using namespace dl4cpp;

namespace {

// W (4, 2): row i is [i, -i]; b = [0.5, 0.25].
const std::vector<float> kW{0, 0, 1, -1, 2, -2, 3, -3};
const std::vector<float> kB{0.5f, 0.25f};

// Index sequences (n, 1, t) of a vocabulary of `vocab` and one-hot labels (n, classes), with the
// sequence e of length `lengths[e]` padded at the end (features mask).
DataSet indexSequences(const std::vector<int64_t>& lengths, int64_t t, int64_t vocab,
                       int64_t classes, uint64_t seed) {
  Random random(seed);
  const auto n = static_cast<int64_t>(lengths.size());
  Tensor x(Shape{n, 1, t}), labels(Shape{n, classes}), mask(Shape{n, t});
  for (int64_t e = 0; e < n; ++e) {
    for (int64_t s = 0; s < t; ++s) {
      const bool real = s < lengths[static_cast<size_t>(e)];
      // Padding holds a value outside the vocabulary: it must never be looked up.
      x.data()[e * t + s] = real ? float(random.nextU64() % uint64_t(vocab)) : float(vocab + 7);
      mask.data()[e * t + s] = real ? 1.0f : 0.0f;
    }
    labels.data()[e * classes + int64_t(random.nextU64() % uint64_t(classes))] = 1;
  }
  DataSet d{x, labels};
  d.featuresMask = mask;
  return d;
}

// recurrent(1) -> `embedding` -> GlobalPoolingLayer(AVG) -> OutputLayer (softmax, `classes`).
MultiLayerNetwork embeddingNetwork(const Layer& embedding, int64_t classes) {
  MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                            .seed(3)
                            .list()
                            .layer(embedding)
                            .layer(GlobalPoolingLayer::Builder(PoolingType::AVG).build())
                            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                       .nOut(classes)
                                       .activation(Activation::SOFTMAX)
                                       .build())
                            .setInputType(InputType::recurrent(1))
                            .build());
  net.init();
  return net;
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("EmbeddingLayer: row x of W plus b, DL4J's layout and defaults") {
    const EmbeddingLayer plain = EmbeddingLayer::Builder().nIn(4).nOut(2).build();
    CHECK_FALSE(plain.hasBias);  // DL4J's default
    auto b = testutil::bind(EmbeddingLayer::Builder()
                                .nIn(4)
                                .nOut(2)
                                .hasBias(true)
                                .activation(Activation::IDENTITY)
                                .build(),
                            InputType::feedForward(1), {kW, kB});
    DeviceContext ctx;
    const Tensor x = Tensor::fromVector({3, 1}, {2, 0, 3});
    Tensor y(b.layer->outputShape(x.shape()));
    CHECK(y.shape() == Shape{3, 2});
    b.layer->forward(ctx, x, y, testutil::mode(true));
    testutil::checkValues(y, {2.5f, -1.75f, 0.5f, 0.25f, 3.5f, -2.75f});

    // dW gathers the rows' gradients at their indices (index 2 twice), db their sum; dx is 0.
    const Tensor x2 = Tensor::fromVector({3, 1}, {2, 0, 2});
    b.layer->forward(ctx, x2, y, testutil::mode(true));
    const Tensor dy = Tensor::fromVector({3, 2}, {1, 2, 3, 4, 5, 6});
    b.layer->backwardParams(ctx, x2, dy);
    testutil::checkValues(b.grads[0], {3, 4, 0, 0, 6, 8, 0, 0});
    testutil::checkValues(b.grads[1], {9, 12});
    Tensor dx = Tensor::fromVector({3, 1}, {9, 9, 9});
    b.layer->backwardInput(ctx, dy, dx);
    testutil::checkValues(dx, {0, 0, 0});
  }

  TEST_CASE("EmbeddingLayer: an index outside the vocabulary is a DataError naming it") {
    auto b = testutil::bind(EmbeddingLayer::Builder().name("words").nIn(4).nOut(2).build(),
                            InputType::feedForward(1), {kW});
    DeviceContext ctx;
    Tensor y(Shape{2, 2});
    const std::vector<std::pair<float, std::string>> bad{
        {4.0f, "index 4 "}, {-1.0f, "index -1 "}, {1.5f, "index 1.5 "}};
    for (const auto& [value, text] : bad) {
      const Tensor x = Tensor::fromVector({2, 1}, {0, value});
      const std::string msg = testutil::thrownMessage<DataError>(
          [&] { b.layer->forward(ctx, x, y, testutil::mode(false)); });
      INFO(msg);
      CHECK(msg.find("EmbeddingLayer \"words\"") != std::string::npos);
      CHECK(msg.find(text) != std::string::npos);
      CHECK(msg.find("vocabulary size, is 4") != std::string::npos);
      CHECK(msg.find("example 1") != std::string::npos);
    }
  }

  TEST_CASE("EmbeddingLayer: configuration errors") {
    auto build = [](const EmbeddingLayer& layer, const InputType& in) {
      return testutil::thrownMessage<ConfigError>([&] {
        (void)NeuralNetConfiguration::Builder()
            .list()
            .layer(layer)
            .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
            .setInputType(in)
            .build();
      });
    };
    CHECK(build(EmbeddingLayer::Builder().nOut(3).build(), InputType::feedForward(1))
              .find("nIn, the vocabulary size, must be set") != std::string::npos);
    CHECK(build(EmbeddingLayer::Builder().nIn(5).nOut(3).build(), InputType::feedForward(4))
              .find("InputType::feedForward(1)") != std::string::npos);
  }

  TEST_CASE("EmbeddingSequenceLayer: every step looked up, padded steps 0, (N, T) or (N, 1, T)") {
    EmbeddingSequenceLayer conf = EmbeddingSequenceLayer::Builder()
                                      .nIn(4)
                                      .nOut(2)
                                      .hasBias(true)
                                      .activation(Activation::SIGMOID)
                                      .build();
    CHECK(conf.inputLength == 1);  // DL4J's defaults
    CHECK(conf.inferInputLength);
    auto b = testutil::bind(conf, InputType::recurrent(1), {kW, kB});
    DeviceContext ctx;
    auto sig = [](double z) { return float(1 / (1 + std::exp(-z))); };
    for (const Shape& shape : {Shape{2, 1, 3}, Shape{2, 3}}) {
      const Tensor x = Tensor::fromVector(shape, {1, 3, 0, 2, 2, 9});
      Tensor y(b.layer->outputShape(x.shape()));
      REQUIRE(y.shape() == Shape{2, 2, 3});
      const Tensor mask = Tensor::fromVector({2, 3}, {1, 1, 1, 1, 1, 0});
      ForwardContext fwd = testutil::mode(true);
      fwd.featuresMask = &mask;
      b.layer->forward(ctx, x, y, fwd);
      // (example, feature, step): example 0 indices 1, 3, 0; example 1 indices 2, 2, padding.
      testutil::checkValues(y, {sig(1.5), sig(3.5), sig(0.5), sig(-0.75), sig(-2.75), sig(0.25),
                                sig(2.5), sig(2.5), 0, sig(-1.75), sig(-1.75), 0});
      // The padded step adds nothing to dW or db.
      Tensor dy(y.shape());
      for (int64_t i = 0; i < dy.numel(); ++i) dy.data()[i] = 1;
      b.layer->backwardParams(ctx, x, dy);
      testutil::checkValues(b.grads[0], {1, 1, 1, 1, 2, 2, 1, 1});
      testutil::checkValues(b.grads[1], {5, 5});
    }
  }

  TEST_CASE("EmbeddingSequenceLayer: a bad index names the layer, example, step and vocabulary") {
    auto b = testutil::bind(EmbeddingSequenceLayer::Builder().name("chars").nIn(4).nOut(2).build(),
                            InputType::recurrent(1), {kW});
    DeviceContext ctx;
    const Tensor x = Tensor::fromVector({1, 1, 3}, {0, 1, 12});
    Tensor y(Shape{1, 2, 3});
    const std::string msg = testutil::thrownMessage<DataError>(
        [&] { b.layer->forward(ctx, x, y, testutil::mode(false)); });
    INFO(msg);
    CHECK(msg.find("EmbeddingSequenceLayer \"chars\"") != std::string::npos);
    CHECK(msg.find("index 12 at example 0, step 2") != std::string::npos);
    CHECK(msg.find("vocabulary size, is 4") != std::string::npos);
  }

  TEST_CASE("EmbeddingSequenceLayer: inputLength fixes the length, a batch of another is refused") {
    auto b = testutil::bind(EmbeddingSequenceLayer::Builder()
                                .nIn(4)
                                .nOut(2)
                                .inputLength(3)
                                .inferInputLength(false)
                                .build(),
                            InputType::recurrent(1), {kW});
    CHECK(b.layer->outputShape(Shape{2, 1, 3}) == Shape{2, 2, 3});
    CHECK(testutil::thrownMessage<ShapeError>([&] {
            (void)b.layer->outputShape(Shape{2, 1, 4});
          }).find("input length is 3") != std::string::npos);
    // The input type's length and inputLength must agree.
    CHECK(testutil::thrownMessage<ConfigError>([&] {
            (void)NeuralNetConfiguration::Builder()
                .list()
                .layer(EmbeddingSequenceLayer::Builder()
                           .nIn(4)
                           .nOut(2)
                           .inputLength(3)
                           .inferInputLength(false)
                           .build())
                .layer(RnnOutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
                .setInputType(InputType::recurrent(1, 5))
                .build();
          }).find("inputLength is 3") != std::string::npos);
    // feedForward(T) input: (N, T) indices, output recurrent(nOut, T).
    const MultiLayerConfiguration ff =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(EmbeddingSequenceLayer::Builder().nIn(4).nOut(2).build())
            .layer(RnnOutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
            .setInputType(InputType::feedForward(6))
            .build();
    CHECK(ff.layerOutputTypes[0].kind == InputType::Kind::Recurrent);
    CHECK(ff.layerOutputTypes[0].length == 6);
  }

  TEST_CASE("EmbeddingSequenceLayer: gradient check with masks, and it fails on a wrong gradient") {
    const EmbeddingSequenceLayer emb = EmbeddingSequenceLayer::Builder()
                                           .nIn(6)
                                           .nOut(3)
                                           .hasBias(true)
                                           .activation(Activation::TANH)
                                           .build();
    const DataSet data = indexSequences({4, 2, 3}, 4, 6, 2, 5);
    GradientCheckUtil::Options options;
    options.checkInputGradient = false;  // indices: no gradient flows to them
    MultiLayerNetwork good = embeddingNetwork(emb, 2);
    const auto passed = GradientCheckUtil::checkGradients(good, data, options);
    INFO(passed.report);
    CHECK(passed.passed);
    CHECK(passed.checked == good.numParams());
    MultiLayerNetwork bad = embeddingNetwork(testing::corruptGradients(emb), 2);
    CHECK_FALSE(GradientCheckUtil::checkGradients(bad, data, options).passed);
  }

  TEST_CASE("EmbeddingLayer and EmbeddingSequenceLayer: JSON and model-file round trips") {
    MultiLayerNetwork net = embeddingNetwork(EmbeddingSequenceLayer::Builder()
                                                 .nIn(6)
                                                 .nOut(3)
                                                 .inputLength(4)
                                                 .hasBias(true)
                                                 .activation(Activation::TANH)
                                                 .build(),
                                             2);
    const MultiLayerConfiguration& conf = net.getConfiguration();
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(conf.toJson());
    CHECK(parsed.toJson() == conf.toJson());
    CHECK(parsed.layers[0]->typeName() == "EmbeddingSequenceLayer");
    CHECK(parsed.layers[0]->numParams() == 6 * 3 + 3);
    const DataSet data = indexSequences({4, 2, 3}, 4, 6, 2, 5);
    net.fit(data);
    MultiLayerNetwork restored =
        ModelSerializer::restoreFromBytes(ModelSerializer::toBytes(net, true), true, "emb.dl4cpp");
    const Tensor a = net.output(data.features, false, data.featuresMask);
    const Tensor r = restored.output(data.features, false, data.featuresMask);
    CHECK(a.toVector() == r.toVector());

    const MultiLayerConfiguration flat =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(EmbeddingLayer::Builder().nIn(10).nOut(4).build())
            .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
            .setInputType(InputType::feedForward(1))
            .build();
    const MultiLayerConfiguration flatParsed = MultiLayerConfiguration::fromJson(flat.toJson());
    CHECK(flatParsed.toJson() == flat.toJson());
    CHECK(flatParsed.layers[0]->typeName() == "EmbeddingLayer");
    CHECK(flatParsed.layers[0]->numParams() == 40);
  }
}
