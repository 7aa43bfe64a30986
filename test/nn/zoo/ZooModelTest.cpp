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

int64_t stateValues(const MultiLayerConfiguration& conf) {
  int64_t n = 0;
  for (const auto& layer : conf.layers) n += layer->stateSize();
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
  // SimpleCNN at 48x48x3 and 7 classes (the reference's emotions): every convolution has a bias
  // (k*k*nIn*nOut + nOut) and is followed by batch norm (gamma, beta) except the last.
  //   convolutions 7x7 3->16: 2,368; 7x7 16->16: 12,560; 5x5 16->32: 12,832;
  //   5x5 32->32: 25,632; 3x3 32->64: 18,496; 3x3 64->64: 36,928; 3x3 64->128: 73,856;
  //   3x3 128->128: 147,584; 3x3 128->256: 295,168; 3x3 256->7: 16,135 (sum 641,559)
  //   batch norm: 2 * (16+16+32+32+64+64+128+128+256) = 2 * 736 = 1,472
  // 643,031 in all, and 1,472 running statistics (a mean and a variance per channel).
  const MultiLayerConfiguration simple = SimpleCNN::builder().numClasses(7).build().conf();
  CHECK(numParams(simple) == 643'031);
  CHECK(stateValues(simple) == 1'472);
  // AlexNet at 224x224x3, 1000 classes, DL4J's ungrouped variant: conv1 11x11/4 (Truncate) gives
  // 54x54, pooling (Same) 27x27, conv2 5x5 pad 2 27x27, pooling (Truncate) 13x13, conv3-5 13x13,
  // pooling 6x6, so 256 * 6 * 6 = 9,216 values into the dense layers.
  //   conv1 11*11*3*96 + 96 = 34,944; conv2 5*5*96*256 + 256 = 614,656;
  //   conv3 3*3*256*384 + 384 = 885,120; conv4 3*3*384*384 + 384 = 1,327,488;
  //   conv5 3*3*384*256 + 256 = 884,992; ffn1 9,216*4,096 + 4,096 = 37,752,832;
  //   ffn2 4,096*4,096 + 4,096 = 16,781,312; output 4,096*1,000 + 1,000 = 4,097,000
  // 62,378,344 in all.
  CHECK(numParams(AlexNet::builder().build().conf()) == 62'378'344);
  // Darknet19 at 224x224x3, 1000 classes: 18 bias-free convolutions, k*k*nIn*nOut:
  //   3x3 3->32: 864; 3x3 32->64: 18,432; 3x3 64->128: 73,728 (twice); 1x1 128->64: 8,192;
  //   3x3 128->256: 294,912 (twice); 1x1 256->128: 32,768; 3x3 256->512: 1,179,648 (three
  //   times); 1x1 512->256: 131,072 (twice); 3x3 512->1024: 4,718,592 (three times);
  //   1x1 1024->512: 524,288 (twice)  -> 19,802,976
  // each followed by batch norm, over 7,200 channels in all (2 * 7,200 = 14,400 trained values
  // and 14,400 running statistics), and the 1x1 1024->1000 classifier with bias, 1,025,000.
  const ComputationGraphConfiguration darknet = Darknet19::builder().build().conf();
  CHECK(darknet.numParams() == 19'802'976 + 14'400 + 1'025'000);
  CHECK(layerStateValues(darknet) == 14'400);
  // SqueezeNet 1.1 at 227x227x3, 1000 classes (torchvision's squeezenet1_1 has the same count):
  //   conv1 3*3*3*64 + 64 = 1,792; a fire module of input c, squeeze s, expand e holds
  //   (c*s + s) + (s*e + e) + (9*s*e + e):
  //   fire2 (64, 16, 64): 11,408; fire3 (128, 16, 64): 12,432; fire4 (128, 32, 128): 45,344;
  //   fire5 (256, 32, 128): 49,440; fire6 (256, 48, 192): 104,880; fire7 (384, 48, 192): 111,024;
  //   fire8 (384, 64, 256): 188,992; fire9 (512, 64, 256): 197,184;
  //   conv10 512*1000 + 1000 = 513,000
  // 1,235,496 in all.
  CHECK(SqueezeNet::builder().build().conf().numParams() == 1'235'496);
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
  SUBCASE("SimpleCNN") {
    // Four 2x2 poolings take 16x16 to 1x1.
    MultiLayerNetwork net =
        SimpleCNN::builder().numClasses(3).inputShape({1, 16, 16}).build().init();
    oneStep(net, randomImages(2, 1, 16, 16, 3));
  }
  SUBCASE("AlexNet") {
    // 67x67 is the smallest size whose last pooling still leaves 1x1 (15, 8, 8, 3, 3, 1).
    MultiLayerNetwork net = AlexNet::builder().numClasses(3).inputShape({3, 67, 67}).build().init();
    oneStep(net, randomImages(2, 3, 67, 67, 3));
  }
  SUBCASE("Darknet19") {
    ComputationGraph net =
        Darknet19::builder().numClasses(3).inputShape({3, 32, 32}).build().init();
    oneStep(net, randomImages(2, 3, 32, 32, 3));
    CHECK(net.outputSingle(randomImages(1, 3, 32, 32, 3).features).shape() == Shape{1, 3});
  }
  SUBCASE("SqueezeNet") {
    // 35x35: conv1 17, pool1 8, pool3 3, pool5 1.
    ComputationGraph net =
        SqueezeNet::builder().numClasses(3).inputShape({3, 35, 35}).build().init();
    oneStep(net, randomImages(2, 3, 35, 35, 3));
  }
  SUBCASE("ResNet50") {
    ComputationGraph net =
        ResNet50::builder().numClasses(3).inputShape({3, 32, 32}).seed(7).build().init();
    oneStep(net, randomImages(2, 3, 32, 32, 3));
    CHECK(net.outputSingle(randomImages(1, 3, 32, 32, 3).features).shape() == Shape{1, 3});
  }
}
