// The model zoo: each model's parameter count at its published shape matches the published
// architecture's, and one training step runs at a small input shape.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>

#include "nn/tensor/Random.h"

using namespace dl4cpp;

namespace {

DataSet randomImages(int64_t n, int64_t channels, int64_t height, int64_t width, int64_t classes) {
  Random random(3);
  Tensor f(Shape{n, channels, height, width}), l(Shape{n, classes});
  for (int64_t i = 0; i < f.numel(); ++i) f.data()[i] = float(random.uniform(0, 1));
  l.fill(0);
  for (int64_t r = 0; r < n; ++r) l.data()[r * classes + r % classes] = 1;
  return DataSet(f, l);
}

int64_t layerStateValues(const ComputationGraphConfiguration& conf) {
  int64_t n = 0;
  for (const auto& v : conf.vertices)
    if (v.layer) n += v.layer->stateSize();
  return n;
}

int64_t numParams(const MultiLayerConfiguration& conf) {
  int64_t n = 0;
  for (const auto& layer : conf.layers) n += layer->numParams();
  return n;
}

template <typename Net>
void oneStep(Net& net, const DataSet& batch) {
  const Tensor before = net.params().clone();
  net.fit(batch);
  CHECK(std::isfinite(net.score()));
  CHECK(net.getIterationCount() == 1);
  CHECK(net.params().toVector() != before.toVector());
}

}  // namespace

TEST_CASE("Zoo: parameter counts match the published architectures") {
  // DL4J's zoo LeNet at 28x28x1, 10 classes (Same-mode convolutions: a 7x7x50 map into the dense
  // layer).
  CHECK(numParams(LeNet::builder().build().conf()) == 1'256'080);
  // VGG16 at 224x224x3, 1000 classes (Simonyan and Zisserman's configuration D).
  CHECK(numParams(VGG16::builder().build().conf()) == 138'357'544);
  // ResNet50 at 224x224x3, 1000 classes: the published 25,636,712 counts the batch-norm running
  // statistics, which dl4cpp keeps as layer state.
  const ComputationGraphConfiguration resnet = ResNet50::builder().build().conf();
  CHECK(resnet.numParams() == 25'583'592);
  CHECK(resnet.numParams() + layerStateValues(resnet) == 25'636'712);
  // The class count and input shape reach the configuration.
  const auto small = ResNet50::builder().numClasses(10).inputShape({3, 32, 32}).build().conf();
  CHECK(small.numParams() == 25'583'592 - 2049 * 1000 + 2049 * 10);
}

TEST_CASE("Zoo: one training step runs at a small input shape") {
  SUBCASE("LeNet") {
    MultiLayerNetwork net = LeNet::builder().numClasses(4).inputShape({1, 12, 12}).build().init();
    oneStep(net, randomImages(2, 1, 12, 12, 4));
  }
  SUBCASE("VGG16") {
    MultiLayerNetwork net = VGG16::builder().numClasses(3).inputShape({3, 32, 32}).build().init();
    oneStep(net, randomImages(2, 3, 32, 32, 3));
  }
  SUBCASE("ResNet50") {
    ComputationGraph net =
        ResNet50::builder().numClasses(3).inputShape({3, 32, 32}).seed(7).build().init();
    oneStep(net, randomImages(2, 3, 32, 32, 3));
    CHECK(net.outputSingle(randomImages(1, 3, 32, 32, 3).features).shape() == Shape{1, 3});
  }
}
