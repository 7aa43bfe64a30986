#include <doctest/doctest.h>

#include <cmath>

#include "nn/layers/LayerCheckUtil.h"
#include "nn/layers/LayerTestUtil.h"

using namespace dl4cpp;

namespace {

// x (1, 2, 2, 3): channel 0 then channel 1.
const std::vector<float> kPlanes{1, -2, 3, 0.5f, -4, 2, -1, -3, -2, -0.5f, -6, -1};
const std::vector<float> kGrad{2, -1};  // dL/dy of the two outputs

struct Pooled {
  std::vector<float> y, dx;
};

// Forward and backward of one GlobalPoolingLayer over kPlanes with kGrad.
Pooled pool(const GlobalPoolingLayer& conf) {
  auto b = testutil::bind(conf, InputType::convolutional(2, 3, 2), {});
  DeviceContext ctx;
  const Tensor x = Tensor::fromVector({1, 2, 2, 3}, kPlanes);
  Tensor y(b.layer->outputShape(x.shape()));
  b.layer->forward(ctx, x, y, testutil::mode(true));
  Tensor dx(x.shape());
  b.layer->backwardInput(ctx, Tensor::fromVector(y.shape(), kGrad), dx);
  return {y.toVector(), dx.toVector()};
}

void checkClose(const std::vector<float>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("element " << i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(1e-6));
  }
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("GlobalPoolingLayer: MAX takes each plane's maximum and routes dy to its first") {
    const Pooled p = pool(GlobalPoolingLayer::Builder(PoolingType::MAX).build());
    checkClose(p.y, {3, -0.5});
    checkClose(p.dx, {0, 0, 2, 0, 0, 0, 0, 0, 0, -1, 0, 0});

    // Tied maxima: only the first gets the gradient, as in SubsamplingLayer.
    auto b = testutil::bind(GlobalPoolingLayer::Builder().build(),
                            InputType::convolutional(1, 3, 1), {});
    DeviceContext ctx;
    const Tensor x = Tensor::fromVector({1, 1, 1, 3}, {1, 5, 5});
    Tensor y(Shape{1, 1}), dx(x.shape());
    b.layer->forward(ctx, x, y, testutil::mode(true));
    b.layer->backwardInput(ctx, Tensor::fromVector({1, 1}, {4}), dx);
    testutil::checkValues(dx, {0, 4, 0});
  }

  TEST_CASE("GlobalPoolingLayer: AVG and SUM forward, and dy spread over the plane") {
    const Pooled avg = pool(GlobalPoolingLayer::Builder(PoolingType::AVG).build());
    checkClose(avg.y, {0.5 / 6, -13.5 / 6});
    checkClose(avg.dx, {2. / 6, 2. / 6, 2. / 6, 2. / 6, 2. / 6, 2. / 6, -1. / 6, -1. / 6, -1. / 6,
                        -1. / 6, -1. / 6, -1. / 6});
    const Pooled sum = pool(GlobalPoolingLayer::Builder(PoolingType::SUM).build());
    checkClose(sum.y, {0.5, -13.5});
    checkClose(sum.dx, {2, 2, 2, 2, 2, 2, -1, -1, -1, -1, -1, -1});
  }

  TEST_CASE(
      "GlobalPoolingLayer: PNORM is (sum |x|^p)^(1/p), its gradient dy x |x|^(p-2) / y^(p-1)") {
    // p = 2 (DL4J's default): the Euclidean norm of each plane.
    const Pooled two = pool(GlobalPoolingLayer::Builder(PoolingType::PNORM).build());
    const double n0 = std::sqrt(1 + 4 + 9 + 0.25 + 16 + 4),
                 n1 = std::sqrt(1 + 9 + 4 + 0.25 + 36 + 1);
    checkClose(two.y, {n0, n1});
    std::vector<double> expected;
    for (size_t i = 0; i < kPlanes.size(); ++i)
      expected.push_back(i < 6 ? 2 * kPlanes[i] / n0 : -1 * kPlanes[i] / n1);
    checkClose(two.dx, expected);

    // p = 3 and p = 1.
    for (int p : {3, 1}) {
      CAPTURE(p);
      const Pooled r = pool(GlobalPoolingLayer::Builder(PoolingType::PNORM).pnorm(p).build());
      double norm[2] = {0, 0};
      for (size_t i = 0; i < kPlanes.size(); ++i) norm[i / 6] += std::pow(std::fabs(kPlanes[i]), p);
      for (double& v : norm) v = std::pow(v, 1.0 / p);
      checkClose(r.y, {norm[0], norm[1]});
      expected.clear();
      for (size_t i = 0; i < kPlanes.size(); ++i) {
        const double x = kPlanes[i];
        expected.push_back(kGrad[i / 6] * x * std::pow(std::fabs(x), p - 2) /
                           std::pow(norm[i / 6], p - 1));
      }
      checkClose(r.dx, expected);
    }
  }

  TEST_CASE("GlobalPoolingLayer: PNORM whose norm is 0 has the gradient 0, not NaN or Inf") {
    // A plane of zeros, and one whose squares underflow: y = 0 for both, where x / y^(p-1) would
    // divide by 0.
    auto b = testutil::bind(GlobalPoolingLayer::Builder(PoolingType::PNORM).build(),
                            InputType::convolutional(1, 2, 2), {});
    DeviceContext ctx;
    const Tensor x = Tensor::fromVector({1, 2, 1, 2}, {0, 0, 1e-30f, -1e-30f});
    Tensor y(Shape{1, 2}), dx(x.shape());
    b.layer->forward(ctx, x, y, testutil::mode(true));
    b.layer->backwardInput(ctx, Tensor::fromVector({1, 2}, {1, 1}), dx);
    testutil::checkValues(y, {0, 0});
    CHECK(dx.toVector() == std::vector<float>{0, 0, 0, 0});
  }

  TEST_CASE("GlobalPoolingLayer: images in, (N, C) out, or (N, C, 1, 1) without collapsing") {
    auto conf = NeuralNetConfiguration::Builder()
                    .list()
                    .layer(ConvolutionLayer::Builder(3, 3).nOut(4).build())
                    .layer(GlobalPoolingLayer::Builder(PoolingType::AVG).build())
                    .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
                    .setInputType(InputType::convolutionalFlat(6, 5, 1))
                    .build();
    CHECK(conf.layerOutputTypes[1].kind == InputType::Kind::FeedForward);
    CHECK(conf.layerOutputTypes[1].size == 4);
    CHECK(conf.layers[1]->numParams() == 0);

    auto kept = NeuralNetConfiguration::Builder()
                    .list()
                    .layer(GlobalPoolingLayer::Builder().collapseDimensions(false).build())
                    .layer(ConvolutionLayer::Builder(1, 1).nOut(2).build())
                    .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
                    .setInputType(InputType::convolutional(4, 4, 3))
                    .build();
    CHECK(kept.layerOutputTypes[0].kind == InputType::Kind::Convolutional);
    CHECK(kept.layerOutputTypes[0].channels == 3);
    CHECK(kept.layerOutputTypes[0].height == 1);
    CHECK(kept.layerOutputTypes[0].width == 1);
    MultiLayerNetwork net(kept);
    net.init();
    CHECK(net.output(Tensor(Shape{5, 48})).shape() == Shape{5, 2});
  }

  TEST_CASE("GlobalPoolingLayer: builder defaults are DL4J's") {
    const GlobalPoolingLayer conf = GlobalPoolingLayer::Builder().build();
    CHECK((conf.poolingType == PoolingType::MAX));
    CHECK(conf.pnorm == 2);
    CHECK(conf.collapseDimensions);
  }

  TEST_CASE("GlobalPoolingLayer: a pnorm below 1 and rows as input are ConfigErrors") {
    for (int64_t p : {0, -3}) {
      CAPTURE(p);
      testutil::expectConfigError(
          NeuralNetConfiguration::Builder()
              .list()
              .layer(GlobalPoolingLayer::Builder(PoolingType::PNORM).pnorm(p).name("gp").build())
              .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
              .setInputType(InputType::convolutional(2, 2, 1)),
          {"layer 0 (GlobalPoolingLayer \"gp\")", "pnorm", std::to_string(p)});
    }
    testutil::expectConfigError(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(DenseLayer::Builder().nIn(4).nOut(3).build())
            .layer(GlobalPoolingLayer::Builder().build())
            .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build()),
        {"layer 1 (GlobalPoolingLayer)", "image"});
  }

  TEST_CASE("GlobalPoolingLayer: JSON round trip of every field") {
    const auto conf =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(GlobalPoolingLayer::Builder(PoolingType::PNORM)
                       .pnorm(3)
                       .collapseDimensions(false)
                       .name("pool")
                       .build())
            .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
            .setInputType(InputType::convolutional(3, 3, 2))
            .build();
    const std::string json = conf.toJson();
    CHECK(json.find("\"poolingType\": \"PNORM\"") != std::string::npos);
    const auto parsed = MultiLayerConfiguration::fromJson(json);
    CHECK(parsed == conf);
    const auto& layer = dynamic_cast<const GlobalPoolingLayer&>(*parsed.layers[0]);
    CHECK((layer.poolingType == PoolingType::PNORM));
    CHECK(layer.pnorm == 3);
    CHECK_FALSE(layer.collapseDimensions);
    CHECK(layer.name == "pool");
  }

  TEST_CASE("GlobalPoolingLayer: gradient check of every pooling type, failing when corrupted") {
    const InputType input = InputType::convolutionalFlat(3, 4, 2);
    for (PoolingType type :
         {PoolingType::MAX, PoolingType::AVG, PoolingType::SUM, PoolingType::PNORM}) {
      CAPTURE(toString(type));
      // MAX: the gradient of each example's 2 planes reaches one input each.
      const int64_t caught = type == PoolingType::MAX ? 4 : 24;
      testutil::checkGradientsAndCorruption(GlobalPoolingLayer::Builder(type).build(), input,
                                            caught, 31);
    }
    testutil::checkGradientsAndCorruption(
        GlobalPoolingLayer::Builder(PoolingType::PNORM).pnorm(3).build(), input, 24, 32);
  }
}

namespace {

// Two sequences (2, 2, 4): the first with its last step padded (holding values that would change
// MAX and SUM), the second all padding. dy = [2, -1] for the first, [1, 1] for the second.
Pooled poolSequences(const GlobalPoolingLayer& conf, bool masked) {
  auto b = testutil::bind(conf, InputType::recurrent(2), {});
  DeviceContext ctx;
  const Tensor x = Tensor::fromVector({2, 2, 4}, {1, -2, 3, 5, -1, 4, -3, 2,  //
                                                  9, 9, 9, 9, 9, 9, 9, 9});
  const Tensor mask = Tensor::fromVector({2, 4}, {1, 1, 1, 0, 0, 0, 0, 0});
  ForwardContext fwd = testutil::mode(true);
  if (masked) fwd.featuresMask = &mask;
  Tensor y(b.layer->outputShape(x.shape()));
  b.layer->forward(ctx, x, y, fwd);
  Tensor dx(x.shape());
  b.layer->backwardInput(ctx, Tensor::fromVector(y.shape(), {2, -1, 1, 1}), dx);
  return {y.toVector(), dx.toVector()};
}

// Sequences (2, 3, 5) uniform in [-1, 1) with one-hot labels (2, 3) and the first padded after 3
// steps.
DataSet maskedSequences(uint64_t seed) {
  const DataSet images = testutil::randomImages(2, InputType::convolutionalFlat(1, 5, 3), 3, seed);
  DataSet d{images.features.reshape({2, 3, 5}), images.labels};
  d.featuresMask = Tensor::fromVector({2, 5}, {1, 1, 1, 0, 0, 1, 1, 1, 1, 1});
  return d;
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("GlobalPoolingLayer over time: only the real steps pooled and given gradient") {
    const Pooled max = poolSequences(GlobalPoolingLayer::Builder(PoolingType::MAX).build(), true);
    checkClose(max.y, {3, 4, 0, 0});
    checkClose(max.dx, {0, 0, 2, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    const Pooled avg = poolSequences(GlobalPoolingLayer::Builder(PoolingType::AVG).build(), true);
    checkClose(avg.y, {2.0 / 3, 0, 0, 0});
    checkClose(avg.dx, {2. / 3, 2. / 3, 2. / 3, 0, -1. / 3, -1. / 3, -1. / 3, 0,  //
                        0, 0, 0, 0, 0, 0, 0, 0});
    const Pooled sum = poolSequences(GlobalPoolingLayer::Builder(PoolingType::SUM).build(), true);
    checkClose(sum.y, {2, 0, 0, 0});
    checkClose(sum.dx, {2, 2, 2, 0, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    const Pooled pn = poolSequences(GlobalPoolingLayer::Builder(PoolingType::PNORM).build(), true);
    const double n0 = std::sqrt(14.0), n1 = std::sqrt(26.0);
    checkClose(pn.y, {n0, n1, 0, 0});
    checkClose(pn.dx, {2 / n0, -4 / n0, 6 / n0, 0, 1 / n1, -4 / n1, 3 / n1, 0,  //
                       0, 0, 0, 0, 0, 0, 0, 0});
  }

  TEST_CASE("GlobalPoolingLayer over time: without a mask every step, as an image of height 1") {
    const Pooled max = poolSequences(GlobalPoolingLayer::Builder(PoolingType::MAX).build(), false);
    checkClose(max.y, {5, 4, 9, 9});
    const Pooled avg = poolSequences(GlobalPoolingLayer::Builder(PoolingType::AVG).build(), false);
    checkClose(avg.y, {7.0 / 4, 2.0 / 4, 9, 9});
    checkClose(avg.dx, {0.5, 0.5, 0.5, 0.5, -0.25, -0.25, -0.25, -0.25,  //
                        0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25});
  }

  TEST_CASE("GlobalPoolingLayer over time: output types, (N, C) or (N, C, 1)") {
    const auto conf =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(LSTM::Builder().nOut(4).build())
            .layer(GlobalPoolingLayer::Builder().build())
            .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
            .setInputType(InputType::recurrent(3))
            .build();
    CHECK(conf.layerOutputTypes[1].kind == InputType::Kind::FeedForward);
    CHECK(conf.layerOutputTypes[1].size == 4);
    auto b = testutil::bind(GlobalPoolingLayer::Builder().collapseDimensions(false).build(),
                            InputType::recurrent(3), {});
    CHECK(b.layer->outputShape(Shape{2, 3, 7}) == Shape{2, 3, 1});
  }

  TEST_CASE("GlobalPoolingLayer over time: gradient check with masks, failing when corrupted") {
    for (PoolingType type :
         {PoolingType::MAX, PoolingType::AVG, PoolingType::SUM, PoolingType::PNORM}) {
      CAPTURE(toString(type));
      const GlobalPoolingLayer pool = GlobalPoolingLayer::Builder(type).build();
      auto network = [](const Layer& layer) {
        MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                                  .seed(5)
                                  .list()
                                  .layer(layer)
                                  .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                             .nOut(3)
                                             .activation(Activation::SOFTMAX)
                                             .build())
                                  .setInputType(InputType::recurrent(3))
                                  .build());
        net.init();
        return net;
      };
      const DataSet data = maskedSequences(41);
      MultiLayerNetwork good = network(pool);
      const auto passed = GradientCheckUtil::checkGradients(good, data);
      INFO(passed.report);
      CHECK(passed.passed);
      CHECK(passed.checked == good.numParams() + data.features.numel());
      MultiLayerNetwork bad = network(testing::corruptGradients(pool));
      CHECK_FALSE(GradientCheckUtil::checkGradients(bad, data).passed);
    }
  }
}
