#include <doctest/doctest.h>

#include <cmath>

#include "nn/layers/LayerCheckUtil.h"
#include "nn/layers/LayerTestUtil.h"

using namespace dl4cpp;

namespace {

struct Lrn {
  double k, n, alpha, beta;
};

// DL4J's LocalResponseNormalization in double: u = k + alpha * sum over the channels within n / 2
// of c of x^2, y = x u^-beta. The input gradient is the exact derivative,
// dx_c = dy_c u_c^-beta - 2 alpha beta x_c sum over the window of (dy_j x_j u_j^(-beta-1)).
struct Reference {
  std::vector<double> y, dx;
};
Reference reference(const Lrn& p, const std::vector<float>& x, const std::vector<float>& dy,
                    int64_t batch, int64_t channels, int64_t area) {
  const auto half = static_cast<int64_t>(p.n) / 2;
  std::vector<double> u(x.size());
  Reference r{std::vector<double>(x.size()), std::vector<double>(x.size())};
  auto at = [&](int64_t b, int64_t c, int64_t i) {
    return static_cast<size_t>((b * channels + c) * area + i);
  };
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < area; ++i) {
        double sum = 0;
        for (int64_t j = std::max<int64_t>(0, c - half); j <= std::min(channels - 1, c + half); ++j)
          sum += double(x[at(b, j, i)]) * x[at(b, j, i)];
        u[at(b, c, i)] = p.k + p.alpha * sum;
        r.y[at(b, c, i)] = x[at(b, c, i)] * std::pow(u[at(b, c, i)], -p.beta);
      }
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < area; ++i) {
        double sum = 0;
        for (int64_t j = std::max<int64_t>(0, c - half); j <= std::min(channels - 1, c + half); ++j)
          sum += dy[at(b, j, i)] * double(x[at(b, j, i)]) * std::pow(u[at(b, j, i)], -p.beta - 1);
        r.dx[at(b, c, i)] = dy[at(b, c, i)] * std::pow(u[at(b, c, i)], -p.beta) -
                            2 * p.alpha * p.beta * x[at(b, c, i)] * sum;
      }
  return r;
}

std::vector<float> randomValues(size_t n, uint64_t seed, double scale) {
  Random random(seed);
  std::vector<float> v(n);
  for (float& f : v) f = static_cast<float>(random.uniform(-scale, scale));
  return v;
}

void checkClose(const std::vector<float>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("element " << i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(1e-5).scale(0.01));
  }
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("LocalResponseNormalization: forward and backward against DL4J's formula in double") {
    // Windows clipped at both ends and whole in the middle; 16 channels take oneDNN's JIT kernel
    // in inference where the CPU has one. Large alpha and inputs make the normalisation, and the
    // window sum's part of the gradient, matter.
    const int64_t batch = 2, h = 3, w = 2;
    for (int64_t channels : {7, 16})
      for (const Lrn& p : {Lrn{2, 5, 1e-4, 0.75}, Lrn{1.5, 3, 0.3, 0.75}, Lrn{0.5, 5, 0.2, 0.6},
                           Lrn{2, 1, 0.5, 1.3}, Lrn{1, 9, 0.1, 0.75}}) {
        CAPTURE(channels);
        CAPTURE(p.k);
        CAPTURE(p.n);
        CAPTURE(p.alpha);
        CAPTURE(p.beta);
        const auto conf = LocalResponseNormalization::Builder(p.k, p.n, p.alpha, p.beta).build();
        auto b = testutil::bind(conf, InputType::convolutional(h, w, channels), {});
        const Shape shape{batch, channels, h, w};
        const auto xs = randomValues(static_cast<size_t>(shape.numel()), 5, 3);
        const auto dys = randomValues(xs.size(), 6, 1);
        const Reference expected = reference(p, xs, dys, batch, channels, h * w);

        DeviceContext ctx;
        const Tensor x = Tensor::fromVector(shape, xs);
        Tensor y(shape), inferred(shape), dx(shape);
        b.layer->forward(ctx, x, inferred, testutil::mode(false));
        checkClose(inferred.toVector(), expected.y);
        b.layer->forward(ctx, x, y, testutil::mode(true));
        checkClose(y.toVector(), expected.y);
        b.layer->backwardInput(ctx, Tensor::fromVector(shape, dys), dx);
        checkClose(dx.toVector(), expected.dx);
      }
  }

  TEST_CASE("LocalResponseNormalization: DL4J's defaults, and shapes pass through") {
    const auto conf = LocalResponseNormalization::Builder().build();
    CHECK(conf.k == 2);
    CHECK(conf.n == 5);
    CHECK(conf.alpha == 1e-4);
    CHECK(conf.beta == 0.75);
    const auto three = LocalResponseNormalization::Builder(1, 1e-3, 0.5).build();  // k, alpha, beta
    CHECK(three.k == 1);
    CHECK(three.n == 5);
    CHECK(three.alpha == 1e-3);
    CHECK(three.beta == 0.5);

    const auto net =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(LocalResponseNormalization::Builder().build())
            .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
            .setInputType(InputType::convolutionalFlat(4, 3, 6))
            .build();
    CHECK(net.layerOutputTypes[0].kind == InputType::Kind::Convolutional);
    CHECK(net.layerOutputTypes[0].flatSize() == 72);
    CHECK(net.layers[0]->numParams() == 0);
  }

  TEST_CASE("LocalResponseNormalization: backward without a training forward is a BackendError") {
    auto b = testutil::bind(LocalResponseNormalization::Builder().build(),
                            InputType::convolutional(1, 1, 3), {});
    DeviceContext ctx;
    const Tensor x = Tensor::fromVector({1, 3, 1, 1}, {1, 2, 3});
    Tensor y(x.shape()), dx(x.shape());
    b.layer->forward(ctx, x, y, testutil::mode(false));
    CHECK_THROWS_AS(b.layer->backwardInput(ctx, y, dx), BackendError);
  }

  TEST_CASE(
      "LocalResponseNormalization: bad n, k, alpha, beta and rows as input are ConfigErrors") {
    auto list = [](const LocalResponseNormalization& lrn) {
      return NeuralNetConfiguration::Builder()
          .list()
          .layer(lrn)
          .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
          .setInputType(InputType::convolutional(2, 2, 4));
    };
    for (double n : {4.0, 0.0, -1.0, 2.5, std::nan("")}) {
      CAPTURE(n);
      testutil::expectConfigError(
          list(LocalResponseNormalization::Builder().n(n).name("lrn").build()),
          {"layer 0 (LocalResponseNormalization \"lrn\")", "n (the window's channel count)",
           "odd"});
    }
    testutil::expectConfigError(list(LocalResponseNormalization::Builder().k(0).build()),
                                {"layer 0 (LocalResponseNormalization)", "k must be"});
    testutil::expectConfigError(list(LocalResponseNormalization::Builder().alpha(-1e-4).build()),
                                {"alpha must be", "-0.0001"});
    testutil::expectConfigError(list(LocalResponseNormalization::Builder()
                                         .beta(std::numeric_limits<double>::infinity())
                                         .build()),
                                {"beta must be finite"});
    testutil::expectConfigError(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(DenseLayer::Builder().nIn(4).nOut(3).build())
            .layer(LocalResponseNormalization::Builder().build())
            .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build()),
        {"layer 1 (LocalResponseNormalization)", "image"});
  }

  TEST_CASE("LocalResponseNormalization: JSON round trip of every field") {
    const auto conf =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(LocalResponseNormalization::Builder(1.25, 3, 0.003, 0.6).build())
            .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
            .setInputType(InputType::convolutional(2, 2, 4))
            .build();
    const auto parsed = MultiLayerConfiguration::fromJson(conf.toJson());
    CHECK(parsed == conf);
    const auto& layer = dynamic_cast<const LocalResponseNormalization&>(*parsed.layers[0]);
    CHECK(layer.k == 1.25);
    CHECK(layer.n == 3);
    CHECK(layer.alpha == 0.003);
    CHECK(layer.beta == 0.6);
  }

  TEST_CASE("LocalResponseNormalization: gradient check, failing when corrupted") {
    const InputType input = InputType::convolutionalFlat(2, 3, 6);
    // A large alpha, so the window's part of the gradient is checked too.
    testutil::checkGradientsAndCorruption(
        LocalResponseNormalization::Builder(1, 3, 0.5, 0.75).build(), input, 36, 41);
    testutil::checkGradientsAndCorruption(LocalResponseNormalization::Builder().build(), input, 36,
                                          42);
  }
}
