// A network that ends in global pooling and a parameterless loss, with zero padding and local
// response normalisation on the way: it learns, and it survives model files and clones.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include "../../TempDir.h"
#include "nn/tensor/Random.h"

using namespace dl4cpp;

namespace {

constexpr int64_t kClasses = 4, kSide = 6, kChannels = 2;

// 6x6x2 images -> pad 1 -> conv 3x3 (4 maps, one per class) -> LRN -> global AVG -> softmax loss.
MultiLayerConfiguration globalPoolingNet() {
  return NeuralNetConfiguration::Builder()
      .seed(77)
      .updater(Adam(0.02))
      .activation(Activation::TANH)
      .list()
      .layer(ZeroPaddingLayer::Builder(1).build())
      .layer(ConvolutionLayer::Builder(3, 3).nOut(kClasses).activation(Activation::RELU).build())
      .layer(LocalResponseNormalization::Builder(1, 3, 0.1, 0.75).build())
      .layer(GlobalPoolingLayer::Builder(PoolingType::MAX).build())
      .layer(LossLayer::Builder(LossFunction::MCXENT).activation(Activation::SOFTMAX).build())
      .setInputType(InputType::convolutionalFlat(kSide, kSide, kChannels))
      .build();
}

// Each class a fixed random +-1 pattern, each example its class's pattern plus noise.
DataSet patterns(int64_t n, uint64_t seed) {
  const int64_t size = kSide * kSide * kChannels;
  Random templates(5);
  std::vector<float> pattern(static_cast<size_t>(kClasses * size));
  for (float& v : pattern) v = templates.uniform(0, 1) < 0.5 ? -1.0f : 1.0f;
  Random random(seed);
  Tensor features(Shape{n, size}), labels(Shape{n, kClasses});
  for (int64_t r = 0; r < n; ++r) {
    const int64_t cls = r % kClasses;
    for (int64_t i = 0; i < size; ++i)
      features.data()[r * size + i] = pattern[static_cast<size_t>(cls * size + i)] +
                                      static_cast<float>(random.uniform(-0.5, 0.5));
    labels.data()[r * kClasses + cls] = 1;
  }
  return {features, labels};
}

}  // namespace

TEST_SUITE("nn/multilayer") {
  TEST_CASE("GlobalPooling -> LossLayer network: the loss falls and the model learns") {
    MultiLayerNetwork net(globalPoolingNet(), Device::cpu(), 1);
    net.init();
    CHECK(net.numParams() == kClasses * kChannels * 9 + kClasses);  // the convolution's only
    const DataSet train = patterns(32, 1);
    const double before = net.score(train);
    for (int i = 0; i < 60; ++i) net.fit(train);
    const double after = net.score(train);
    INFO("score before " << before << ", after " << after);
    CHECK(after < 0.5 * before);
    const Evaluation eval = [&] {
      Evaluation e(kClasses);
      const DataSet test = patterns(32, 2);
      e.eval(test.labels, net.output(test.features));
      return e;
    }();
    CHECK(eval.accuracy() >= 0.9);
  }

  TEST_CASE("GlobalPooling -> LossLayer network: model file and clone give the same outputs") {
    MultiLayerNetwork net(globalPoolingNet(), Device::cpu(), 1);
    net.init();
    const DataSet data = patterns(8, 3);
    for (int i = 0; i < 3; ++i) net.fit(data);
    testutil::TempDir dir;
    net.save(dir / "global-pooling.dl4cpp");
    MultiLayerNetwork loaded = MultiLayerNetwork::load(dir / "global-pooling.dl4cpp");
    CHECK(loaded.getConfiguration() == net.getConfiguration());
    CHECK(loaded.params().toVector() == net.params().toVector());
    CHECK(loaded.updaterState().toVector() == net.updaterState().toVector());
    CHECK(loaded.output(data.features).toVector() == net.output(data.features).toVector());
    CHECK(net.clone().output(data.features).toVector() == net.output(data.features).toVector());
    // Training resumes identically from the file.
    net.fit(data);
    loaded.fit(data);
    CHECK(loaded.params().toVector() == net.params().toVector());
  }
}
