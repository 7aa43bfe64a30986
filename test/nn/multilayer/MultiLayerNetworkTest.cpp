#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "LenetConfiguration.h"
#include "TempDir.h"
#include "iterators/ListDataSetIterator.h"
#include "nn/backend/DeviceContext.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/conf/layers/BatchNormalization.h"
#include "nn/core/Error.h"
#include "nn/multilayer/MultiLayerNetwork.h"

using namespace dl4cpp;

namespace {

// 4 -> 8 (TANH) -> 3 (SOFTMAX, MCXENT), plain SGD.
MultiLayerConfiguration denseConf(uint64_t seed = 42, double lr = 0.1, double l2 = 0) {
  return NeuralNetConfiguration::Builder()
      .seed(seed)
      .updater(Sgd(lr))
      .l2(l2)
      .weightInit(WeightInit::XAVIER)
      .list()
      .layer(DenseLayer::Builder().nIn(4).nOut(8).activation(Activation::TANH).build())
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .build();
}

// A learnable toy problem: 12 examples; the class is the index of the largest of the first three
// features (the fourth is a distractor). Fixed values, no randomness.
DataSet toyData(int64_t n = 12) {
  std::vector<float> f, l;
  for (int64_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(i);
    const float a = static_cast<float>(std::sin(1.3 * x + 0.2));
    const float b = static_cast<float>(std::sin(2.1 * x + 1.7));
    const float c = static_cast<float>(std::cos(0.7 * x + 0.4));
    const float d = static_cast<float>(0.5 * std::cos(3.3 * x));
    f.insert(f.end(), {a, b, c, d});
    const int cls = a >= b && a >= c ? 0 : (b >= c ? 1 : 2);
    for (int k = 0; k < 3; ++k) l.push_back(k == cls ? 1.0f : 0.0f);
  }
  return DataSet(Tensor::fromVector(Shape{n, 4}, f), Tensor::fromVector(Shape{n, 3}, l));
}

MultiLayerNetwork initialized(const MultiLayerConfiguration& conf) {
  MultiLayerNetwork net(conf, Device::cpu(), 1);
  net.init();
  return net;
}

template <typename E, typename F>
std::string errorMessage(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}

struct RecordingListener : TrainingListener {
  std::vector<IterationInfo> infos;
  std::vector<int> epochStarts, epochEnds;
  void onEpochStart(const Model&, int epoch) override { epochStarts.push_back(epoch); }
  void onEpochEnd(const Model&, int epoch) override { epochEnds.push_back(epoch); }
  void iterationDone(const Model& model, const IterationInfo& info) override {
    CHECK(model.getIterationCount() == info.iteration);
    infos.push_back(info);
  }
};

}  // namespace

TEST_SUITE("nn/multilayer") {
  TEST_CASE("MultiLayerNetwork: numParams equals the configuration's sum") {
    const MultiLayerConfiguration conf = denseConf();
    int64_t sum = 0;
    for (const auto& l : conf.layers) sum += l->numParams();
    CHECK(sum == 4 * 8 + 8 + 8 * 3 + 3);
    MultiLayerNetwork net = initialized(conf);
    CHECK(net.isInitialized());
    CHECK(net.numLayers() == 2);
    CHECK(net.numParams() == sum);
    CHECK(net.params().numel() == sum);
    CHECK(net.gradient().numel() == sum);
    CHECK(net.updaterState().numel() == 0);  // plain SGD keeps no state

    // With Nesterovs every parameter has one velocity; with Adam two moments.
    const auto nesterovs =
        NeuralNetConfiguration::Builder()
            .updater(Nesterovs(0.1, 0.9))
            .list()
            .layer(DenseLayer::Builder().nIn(4).nOut(8).build())
            .layer(OutputLayer::Builder().nOut(3).activation(Activation::SOFTMAX).build())
            .build();
    CHECK(initialized(nesterovs).updaterState().numel() == sum);
    const auto adamWeightsSgdBias =
        NeuralNetConfiguration::Builder()
            .updater(Adam(1e-3))
            .biasUpdater(Sgd(0.1))
            .list()
            .layer(DenseLayer::Builder().nIn(4).nOut(8).build())
            .layer(OutputLayer::Builder().nOut(3).activation(Activation::SOFTMAX).build())
            .build();
    CHECK(initialized(adamWeightsSgdBias).updaterState().numel() == 2 * (4 * 8 + 8 * 3));
  }

  TEST_CASE("MultiLayerNetwork: LeNet has 431080 parameters") {
    const auto conf = samples::lenetConfiguration();
    MultiLayerNetwork net = initialized(conf);
    CHECK(net.numParams() == 431080);
    CHECK(net.updaterState().numel() == 431080);
    // A flat MNIST batch goes in, class probabilities come out.
    const Tensor out = net.output(Tensor(Shape{2, 784}));
    CHECK(out.shape() == Shape{2, 10});
  }

  TEST_CASE("MultiLayerNetwork: the same seed gives identical parameters, another seed others") {
    MultiLayerNetwork a = initialized(denseConf(7));
    MultiLayerNetwork b = initialized(denseConf(7));
    MultiLayerNetwork c = initialized(denseConf(8));
    CHECK(a.params().toVector() == b.params().toVector());
    CHECK(a.params().toVector() != c.params().toVector());
    // Weights are random but not degenerate; biases start at biasInit (0).
    const std::vector<float> p = a.params().toVector();
    int nonZero = 0;
    for (size_t i = 0; i < 32; ++i) nonZero += p[i] != 0.0f;
    CHECK(nonZero == 32);
    for (size_t i = 32; i < 40; ++i) CHECK(p[i] == 0.0f);
    // init() again resets to the same values after training.
    const std::vector<float> before = a.params().toVector();
    a.fit(toyData());
    CHECK(a.params().toVector() != before);
    CHECK(a.getIterationCount() == 1);
    a.init();
    CHECK(a.params().toVector() == before);
    CHECK(a.getIterationCount() == 0);
  }

  TEST_CASE(
      "MultiLayerNetwork: score decreases over 50 fits with Sgd(0.1) on a learnable problem") {
    MultiLayerNetwork net = initialized(denseConf(42, 0.1));
    const DataSet data = toyData();
    const double initial = net.score(data);
    CHECK(std::isfinite(initial));
    net.fit(data);
    const double first = net.score();
    CHECK(first == doctest::Approx(initial).epsilon(1e-5));  // score() is the pre-update loss
    double previous = first;
    int increases = 0;
    for (int i = 1; i < 50; ++i) {
      net.fit(data);
      if (net.score() > previous + 1e-9) ++increases;
      previous = net.score();
    }
    CAPTURE(initial);
    CAPTURE(previous);
    CHECK(net.getIterationCount() == 50);
    CHECK(increases == 0);  // full-batch gradient descent with a small step: monotone
    CHECK(net.score(data) < 0.7 * initial);
    // The trained network classifies better than chance on what it saw.
    const Tensor out = net.output(data.features);
    int correct = 0;
    for (int64_t r = 0; r < 12; ++r) {
      int best = 0;
      for (int k = 1; k < 3; ++k)
        if (out.at(r * 3 + k) > out.at(r * 3 + best)) best = k;
      correct += data.labels.at(r * 3 + best) == 1.0f;
    }
    CHECK(correct >= 8);
  }

  TEST_CASE(
      "MultiLayerNetwork: weights from a distribution, biases from biasInit, in a model file") {
    const MultiLayerConfiguration conf = NeuralNetConfiguration::Builder()
                                             .seed(3)
                                             .biasInit(0.25)
                                             .list()
                                             .layer(DenseLayer::Builder()
                                                        .nIn(40)
                                                        .nOut(50)
                                                        .weightInit(NormalDistribution(2, 0.1))
                                                        .build())
                                             .layer(OutputLayer::Builder(LossFunction::MSE)
                                                        .nOut(2)
                                                        .weightInit(UniformDistribution(-3, -1))
                                                        .build())
                                             .build();
    MultiLayerNetwork net = initialized(conf);
    const std::vector<float> p = net.params().toVector();
    // Dense W (2000), b (50); output W (100), b (2).
    double sum = 0, squares = 0;
    for (size_t i = 0; i < 2000; ++i) {
      sum += p[i];
      squares += (p[i] - 2.0) * (p[i] - 2.0);
    }
    CHECK(sum / 2000 == doctest::Approx(2).epsilon(0.005));
    CHECK(std::sqrt(squares / 2000) == doctest::Approx(0.1).epsilon(0.05));
    for (size_t i = 2000; i < 2050; ++i) CHECK(p[i] == 0.25f);
    for (size_t i = 2050; i < 2150; ++i) CHECK((p[i] >= -3 && p[i] < -1));
    for (size_t i = 2150; i < 2152; ++i) CHECK(p[i] == 0.25f);

    testutil::TempDir dir;
    net.save(dir.path() / "distribution.dl4cpp");
    MultiLayerNetwork loaded = MultiLayerNetwork::load(dir.path() / "distribution.dl4cpp");
    CHECK(loaded.getConfiguration() == conf);
    CHECK((*loaded.getConfiguration().layers[1]->weightInit == UniformDistribution(-3, -1)));
    loaded.init();  // drawn again from the file's configuration: the same weights
    CHECK(loaded.params().toVector() == p);
  }

  TEST_CASE("MultiLayerNetwork: score includes 0.5 * l2 * ||W||^2 (weights only)") {
    MultiLayerNetwork plain = initialized(denseConf(3, 0.1, 0));
    MultiLayerNetwork reg = initialized(denseConf(3, 0.1, 0.01));
    const DataSet data = toyData();
    const std::vector<float> p = plain.params().toVector();
    double w2 = 0;
    for (size_t i = 0; i < 32; ++i) w2 += double(p[i]) * p[i];        // dense W
    for (size_t i = 40; i < 40 + 24; ++i) w2 += double(p[i]) * p[i];  // output W
    CHECK(reg.score(data) == doctest::Approx(plain.score(data) + 0.5 * 0.01 * w2).epsilon(1e-5));
  }

  TEST_CASE("MultiLayerNetwork: score(data, true) is the training loss, without a gradient") {
    // Batch normalisation normalises by the batch's statistics in training and by its running
    // ones (still 0 and 1 after init) otherwise, so the two modes score differently.
    const MultiLayerConfiguration conf =
        NeuralNetConfiguration::Builder()
            .seed(7)
            .updater(Sgd(0.1))
            .l2(0.01)
            .list()
            .layer(DenseLayer::Builder().nIn(4).nOut(8).activation(Activation::TANH).build())
            .layer(BatchNormalization::Builder().build())
            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                       .nOut(3)
                       .activation(Activation::SOFTMAX)
                       .build())
            .build();
    MultiLayerNetwork net = initialized(conf);
    const DataSet data = toyData();
    const std::vector<float> params = net.params().toVector();
    const double training = net.score(data, true);
    const double inference = net.score(data);
    CHECK(inference == net.score(data, false));
    CHECK(std::fabs(training - inference) > 1e-4);
    CHECK(net.params().toVector() == params);  // scoring changes no parameter
    const double fitted = net.computeGradientAndScore(data) + net.calcRegularizationScore();
    CHECK(training == doctest::Approx(fitted).epsilon(1e-6));
  }

  TEST_CASE("MultiLayerNetwork: output() shape, softmax rows and no state change") {
    MultiLayerNetwork net = initialized(denseConf());
    const DataSet data = toyData(5);
    const Tensor out = net.output(data.features);
    CHECK(out.shape() == Shape{5, 3});
    for (int64_t r = 0; r < 5; ++r) {
      const double sum = out.at(r * 3) + out.at(r * 3 + 1) + out.at(r * 3 + 2);
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
    }
    // The result is an independent tensor: a later call does not overwrite it.
    const std::vector<float> first = out.toVector();
    net.output(toyData(7).features);
    CHECK(out.toVector() == first);
    CHECK(net.getIterationCount() == 0);
    // A bigger then a smaller batch (buffers sized for the largest batch are reused).
    CHECK(net.output(toyData(12).features).shape() == Shape{12, 3});
    const Tensor again = net.output(data.features);
    CHECK(again.toVector() == first);
  }

  TEST_CASE("MultiLayerNetwork: params()/setParams round trip, a size mismatch is a ShapeError") {
    MultiLayerNetwork a = initialized(denseConf(1));
    MultiLayerNetwork b = initialized(denseConf(2));
    const DataSet data = toyData();
    const Tensor saved = a.params().clone();
    b.setParams(a.params());
    CHECK(b.params().toVector() == saved.toVector());
    CHECK(b.output(data.features).toVector() == a.output(data.features).toVector());
    // params() is a view of the network's buffer (DL4J semantics), setParams copies.
    Tensor view = a.params();
    view.data()[0] += 1.0f;
    CHECK(a.params().at(0) == saved.at(0) + 1.0f);
    CHECK(b.params().at(0) == saved.at(0));
    a.setParams(saved);
    CHECK(a.params().toVector() == saved.toVector());

    const std::string msg = errorMessage<ShapeError>([&] { a.setParams(Tensor(Shape{10})); });
    CHECK(contains(msg, "10"));
    CHECK(contains(msg, std::to_string(a.numParams())));
    CHECK_THROWS_AS(a.setParams(Tensor(Shape{a.numParams() + 1})), ShapeError);
    CHECK_THROWS_AS(a.setUpdaterState(Tensor(Shape{3})), ShapeError);
    CHECK(a.params().toVector() == saved.toVector());
  }

  TEST_CASE("MultiLayerNetwork: clone() is identical and independent") {
    MultiLayerNetwork net(
        NeuralNetConfiguration::Builder()
            .seed(5)
            .updater(Nesterovs(0.05, 0.9))
            .list()
            .layer(DenseLayer::Builder().nIn(4).nOut(8).activation(Activation::TANH).build())
            .layer(OutputLayer::Builder().nOut(3).activation(Activation::SOFTMAX).build())
            .build(),
        Device::cpu(), 1);
    net.init();
    const DataSet data = toyData();
    for (int i = 0; i < 3; ++i) net.fit(data);  // non-zero velocity and counters

    MultiLayerNetwork copy = net.clone();
    CHECK(copy.isInitialized());
    CHECK(copy.params().toVector() == net.params().toVector());
    CHECK(copy.params().data() != net.params().data());
    CHECK(copy.updaterState().toVector() == net.updaterState().toVector());
    CHECK(copy.getIterationCount() == 3);
    CHECK(copy.score() == net.score());
    CHECK(copy.output(data.features).toVector() == net.output(data.features).toVector());

    const std::vector<float> original = net.params().toVector();
    const std::vector<float> originalState = net.updaterState().toVector();
    for (int i = 0; i < 5; ++i) copy.fit(data);
    CHECK(net.params().toVector() == original);
    CHECK(net.updaterState().toVector() == originalState);
    CHECK(net.getIterationCount() == 3);
    CHECK(copy.params().toVector() != original);

    // Both continue identically when given the same data (the updater state was copied too).
    MultiLayerNetwork twin = net.clone();
    net.fit(data);
    twin.fit(data);
    CHECK(twin.params().toVector() == net.params().toVector());

    // Cloning an uninitialised network gives an uninitialised one.
    MultiLayerNetwork raw(denseConf());
    CHECK_FALSE(raw.clone().isInitialized());
  }

  TEST_CASE("MultiLayerNetwork: wrong feature width or label shape is a ShapeError naming both") {
    MultiLayerNetwork net = initialized(denseConf());
    const std::vector<float> before = net.params().toVector();

    const DataSet wideFeatures(Tensor(Shape{6, 5}), Tensor(Shape{6, 3}));
    std::string msg = errorMessage<ShapeError>([&] { net.fit(wideFeatures); });
    INFO("message: " << msg);
    CHECK(contains(msg, "[6, 5]"));
    CHECK(contains(msg, "[N, 4]"));
    CHECK_THROWS_AS(net.output(Tensor(Shape{2, 3})), ShapeError);
    CHECK_THROWS_AS(net.output(Tensor(Shape{0, 4})), ShapeError);

    const DataSet wrongClasses(Tensor(Shape{6, 4}), Tensor(Shape{6, 2}));
    msg = errorMessage<ShapeError>([&] { net.fit(wrongClasses); });
    CHECK(contains(msg, "[6, 2]"));
    CHECK(contains(msg, "[6, 3]"));

    // A label count that differs from the feature count (DataSet's constructor refuses that, so
    // build the pair by hand, as a buggy iterator could).
    DataSet wrongCount;
    wrongCount.features = Tensor(Shape{6, 4});
    wrongCount.labels = Tensor(Shape{5, 3});
    msg = errorMessage<ShapeError>([&] { net.fit(wrongCount); });
    CHECK(contains(msg, "[5, 3]"));
    CHECK(contains(msg, "[6, 3]"));

    DataSet noLabels;
    noLabels.features = Tensor(Shape{6, 4});
    CHECK_THROWS_AS(net.fit(noLabels), ShapeError);
    CHECK_THROWS_AS(net.score(wrongClasses), ShapeError);

    CHECK(net.params().toVector() == before);
    CHECK(net.getIterationCount() == 0);
  }

  TEST_CASE("MultiLayerNetwork: methods before init() are a ConfigError") {
    MultiLayerNetwork net(denseConf());
    CHECK_FALSE(net.isInitialized());
    CHECK(net.numLayers() == 0);
    CHECK(net.numParams() == 0);
    CHECK(net.params().empty());
    const DataSet data = toyData(4);
    const std::string msg = errorMessage<ConfigError>([&] { net.fit(data); });
    CHECK(contains(msg, "init()"));
    CHECK_THROWS_AS(net.output(data.features), ConfigError);
    CHECK_THROWS_AS(net.score(data), ConfigError);
    CHECK_THROWS_AS(net.setParams(Tensor(Shape{67})), ConfigError);
    CHECK_THROWS_AS(net.setUpdaterState(Tensor(Shape{1})), ConfigError);
    CHECK_THROWS_AS(net.computeGradientAndScore(data), ConfigError);
    CHECK_THROWS_AS(net.applyUpdate(), ConfigError);
    ListDataSetIterator it(data, 2);
    CHECK_THROWS_AS(net.fit(it), ConfigError);
    CHECK_THROWS_AS(net.evaluate(it), ConfigError);
  }

  TEST_CASE("MultiLayerNetwork: NaN features are a NumericalError and leave parameters unchanged") {
    MultiLayerNetwork net(
        NeuralNetConfiguration::Builder()
            .seed(9)
            .updater(Adam(0.01))
            .list()
            .layer(DenseLayer::Builder().nIn(4).nOut(8).activation(Activation::TANH).build())
            .layer(OutputLayer::Builder().nOut(3).activation(Activation::SOFTMAX).build())
            .build(),
        Device::cpu(), 1);
    net.init();
    const DataSet good = toyData();
    net.fit(good);
    const std::vector<float> params = net.params().toVector();
    const std::vector<float> state = net.updaterState().toVector();
    const double score = net.score();

    DataSet bad = good.copy();
    bad.features.data()[5] = std::numeric_limits<float>::quiet_NaN();
    const std::string msg = errorMessage<NumericalError>([&] { net.fit(bad); });
    INFO("message: " << msg);
    CHECK_FALSE(msg.empty());
    CHECK(contains(msg, "iteration 1"));
    CHECK(net.params().toVector() == params);
    CHECK(net.updaterState().toVector() == state);
    CHECK(net.getIterationCount() == 1);
    CHECK(net.score() == score);

    // Training continues normally afterwards.
    CHECK_NOTHROW(net.fit(good));
    CHECK(net.getIterationCount() == 2);
  }

  // With an infinite feature TANH saturates, so the score stays finite while dW = dz^T x holds
  // Inf/NaN: fit() must check the gradient too, before the update.
  TEST_CASE("MultiLayerNetwork: Inf features are a NumericalError and leave parameters unchanged") {
    MultiLayerNetwork net = initialized(denseConf(9));
    const DataSet good = toyData();
    const std::vector<float> params = net.params().toVector();
    DataSet bad = good.copy();
    bad.features.data()[5] = std::numeric_limits<float>::infinity();
    CHECK_THROWS_AS(net.fit(bad), NumericalError);
    CHECK(net.params().toVector() == params);
    CHECK(net.getIterationCount() == 0);
  }

  TEST_CASE(
      "MultiLayerNetwork: fit(iterator, epochs) counts iterations and epochs, listeners see each") {
    MultiLayerNetwork net = initialized(denseConf());
    auto listener = std::make_shared<RecordingListener>();
    net.setListeners({listener});
    CHECK(net.getListeners().size() == 1);
    ListDataSetIterator it(toyData(10), 4);  // batches of 4, 4, 2
    net.fit(it, 3);
    CHECK(net.getIterationCount() == 9);
    CHECK(net.getEpochCount() == 3);
    REQUIRE(listener->infos.size() == 9);
    CHECK(listener->epochStarts == std::vector<int>{0, 1, 2});
    CHECK(listener->epochEnds == std::vector<int>{0, 1, 2});
    const int64_t sizes[] = {4, 4, 2};
    for (size_t i = 0; i < 9; ++i) {
      CAPTURE(i);
      const IterationInfo& info = listener->infos[i];
      CHECK(info.iteration == static_cast<int64_t>(i + 1));  // increasing, 1-based
      CHECK(info.epoch == static_cast<int>(i / 3));
      CHECK(info.examples == sizes[i % 3]);
      CHECK(info.examplesInEpoch == (i % 3 == 0 ? 4 : i % 3 == 1 ? 8 : 10));
      CHECK(info.examplesPerEpoch == 10);
      CHECK(std::isfinite(info.score));
      CHECK(info.score > 0);
    }
    // A further fit(iterator) resets the exhausted iterator and continues the counters.
    net.fit(it);
    CHECK(net.getIterationCount() == 12);
    CHECK(net.getEpochCount() == 4);
    REQUIRE(listener->infos.size() == 12);
    CHECK(listener->infos.back().iteration == 12);
    CHECK(listener->infos.back().epoch == 3);

    // addListeners appends; every listener is called on every iteration.
    auto second = std::make_shared<RecordingListener>();
    net.addListeners({second});
    CHECK(net.getListeners().size() == 2);
    it.reset();
    net.fit(it);
    CHECK(listener->infos.size() == 15);
    CHECK(second->infos.size() == 3);
    CHECK(second->infos.front().iteration == 13);
  }

  TEST_CASE("MultiLayerNetwork: fitting on an iterator without any data is a DataError") {
    MultiLayerNetwork net = initialized(denseConf());
    auto listener = std::make_shared<RecordingListener>();
    net.setListeners({listener});
    ListDataSetIterator empty(std::vector<DataSet>{}, 4);
    CHECK_THROWS_WITH_AS(net.fit(empty),
                         doctest::Contains("MultiLayerNetwork::fit: the iterator has no data"),
                         DataError);
    CHECK_THROWS_AS(net.fit(empty, 3), DataError);
    CHECK(net.getEpochCount() == 0);
    CHECK(net.getIterationCount() == 0);
    CHECK(listener->epochStarts.empty());
  }

  TEST_CASE("MultiLayerNetwork: a throwing listener ends fit with its exception") {
    struct Throwing : TrainingListener {
      void iterationDone(const Model&, const IterationInfo& info) override {
        if (info.iteration == 2) throw std::runtime_error("listener stop");
      }
    };
    MultiLayerNetwork net = initialized(denseConf());
    net.setListeners({std::make_shared<Throwing>()});
    ListDataSetIterator it(toyData(12), 4);
    CHECK_THROWS_WITH_AS(net.fit(it), "listener stop", std::runtime_error);
    CHECK(net.getIterationCount() == 2);
  }

  TEST_CASE("MultiLayerNetwork: fit on a DataSet equals the same batches from an iterator") {
    MultiLayerNetwork a = initialized(denseConf(11));
    MultiLayerNetwork b = initialized(denseConf(11));
    const DataSet data = toyData(12);
    ListDataSetIterator it(data, 5);
    a.fit(it);
    b.fit(data.rows(0, 5));
    b.fit(data.rows(5, 10));
    b.fit(data.rows(10, 12));
    CHECK(a.params().toVector() == b.params().toVector());
    CHECK(a.score() == b.score());
  }

  TEST_CASE(
      "MultiLayerNetwork: LeNet's gradient is the same bits with its first layer's backward fused "
      "or not") {
    // Convolution 1 (identity) feeds MAX pooling: without an input gradient its weight gradient
    // comes from the pooled gradient image by image, with one through the pooling layer's
    // backward pass into its full output gradient (ConvolutionPooling.h).
    MultiLayerNetwork model = initialized(samples::lenetConfiguration());
    Tensor features(Shape{6, 784}), labels(Shape{6, 10});
    for (int64_t i = 0; i < features.numel(); ++i)
      features.data()[i] = static_cast<float>((i * 7919) % 256) / 255.0f;
    for (int64_t r = 0; r < 6; ++r) labels.data()[r * 10 + (r * 3) % 10] = 1.0f;
    const DataSet batch{features, labels};
    const double fusedScore = model.computeGradientAndScore(batch, false);
    const std::vector<float> fused = model.gradient().toVector();
    const double unfusedScore = model.computeGradientAndScore(batch, true);
    CHECK(model.inputGradient().numel() == features.numel());
    CHECK(model.gradient().toVector() == fused);
    CHECK(unfusedScore == fusedScore);
  }

  TEST_CASE("MultiLayerNetwork: evaluate() counts every example") {
    MultiLayerNetwork net = initialized(denseConf());
    ListDataSetIterator it(toyData(10), 4);
    for (int i = 0; i < 30; ++i) {
      it.reset();
      net.fit(it);
    }
    const Evaluation eval = net.evaluate(it);
    CHECK(eval.accuracy() >= 0.0);
    CHECK(eval.accuracy() <= 1.0);
  }

  TEST_CASE(
      "MultiLayerNetwork: training steps on a repeated shape create no new oneDNN primitives") {
    MultiLayerNetwork net = initialized(denseConf());
    auto* cpu = dynamic_cast<cpu::CpuBackend*>(&net.context().backend());
    REQUIRE(cpu != nullptr);
    const DataSet data = toyData(8);
    net.fit(data);
    const size_t afterFirst = cpu->cachedPrimitives();
    CHECK(afterFirst > 0);
    for (int i = 0; i < 5; ++i) net.fit(data);
    CHECK(cpu->cachedPrimitives() == afterFirst);
    net.output(data.features);
    const size_t withInference = cpu->cachedPrimitives();
    net.output(data.features);
    net.fit(data);
    CHECK(cpu->cachedPrimitives() == withInference);
  }

  TEST_CASE(
      "MultiLayerNetwork: buffers larger than memory are an AllocationError naming the buffer") {
    // 2^39 parameters (2 TiB): a valid configuration, whose init() threw std::bad_alloc.
    MultiLayerNetwork huge(NeuralNetConfiguration::Builder()
                               .list()
                               .layer(OutputLayer::Builder()
                                          .nIn(int64_t{1} << 20)
                                          .nOut(int64_t{1} << 19)
                                          .hasBias(false)
                                          .build())
                               .build());
    CHECK_THROWS_WITH_AS(
        huge.init(),
        doctest::Contains("MultiLayerNetwork::init: parameters (549755813888 values): cannot "
                          "allocate a float32 tensor of shape [549755813888]"),
        AllocationError);
    CHECK_FALSE(huge.isInitialized());
    // Few parameters, but 2^20 feature maps of 1024 x 1024 per example (4 TiB at batch size 1).
    MultiLayerNetwork wide(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(ConvolutionLayer::Builder(1, 1).nOut(int64_t{1} << 20).build())
            .layer(SubsamplingLayer::Builder(PoolingType::MAX, 1024, 1024, 1024, 1024).build())
            .layer(OutputLayer::Builder().nOut(2).build())
            .setInputType(InputType::convolutionalFlat(1024, 1024, 1))
            .build());
    wide.init();
    CHECK_THROWS_WITH_AS(
        wide.output(Tensor(Shape{1, 1024 * 1024})),
        doctest::Contains("MultiLayerNetwork: outputs of layer 0 (ConvolutionLayer) for a batch of "
                          "1: cannot allocate a float32 tensor of shape [1, 1048576, 1024, 1024]"),
        AllocationError);
  }
}
