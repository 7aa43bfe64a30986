// ONNX export of trained models: LeNet trained on real MNIST (200 steps), saved with the
// normalizer it trained behind and exported from its model file as dl4cpp-onnx does, the
// normalizer becoming the ONNX model's leading nodes: ONNX Runtime on raw test images must give
// dl4cpp's outputs on the normalized images (within 1e-4) and the same classes. A normalizer that
// is not x * scale + shift is refused.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <iostream>
#include <optional>

#include "LenetConfiguration.h"
#include "TempDir.h"
#include "nn/onnx/OnnxExport.h"
#include "nn/onnx/OnnxExportTestUtil.h"
#include "nn/onnx/OnnxRuntimeRunner.h"

using namespace dl4cpp;
using testutil::checkSameOutputs;

namespace {

// Clamps values: not an affine map, so ONNX export must refuse it.
class ClampingNormalizer : public DataNormalization {
 public:
  void fit(DataSetIterator&) override {}
  bool isFitted() const override { return true; }
  void transform(DataSet& batch) const override { clamp(batch.features); }
  void requireInput(const InputType&) const override {}
  void transformInput(Tensor& features, const InputType&) const override { clamp(features); }
  std::unique_ptr<DataNormalization> clone() const override {
    return std::make_unique<ClampingNormalizer>(*this);
  }

 private:
  static void clamp(Tensor& t) {
    for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = std::min(t.data()[i], 1.5f);
  }
};

}  // namespace

TEST_SUITE("nn/onnx") {
  TEST_CASE("OnnxExport: LeNet trained on MNIST with its normalizer matches ONNX Runtime") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    std::optional<MnistDataSetIterator> train, test;
    try {
      train.emplace(32, 6400, false, true, true, 123);
      test.emplace(500, 500, false, false, false, 1);
    } catch (const DataNotFoundError& e) {
      std::cout << "skipped: MNIST not found (scripts/get-mnist.sh): " << e.what() << "\n";
      return;
    }
    auto normalizer = std::make_shared<NormalizerStandardize>();
    normalizer->fit(*train);
    train->setPreProcessor(normalizer);
    MultiLayerNetwork lenet(samples::lenetConfiguration());
    lenet.init();
    lenet.fit(*train);  // 200 steps of 32
    const DataSet raw = test->next();
    DataSet normalized = raw;
    normalized.features = raw.features.clone();
    normalizer->transform(normalized);
    const Tensor expected = lenet.output(normalized.features);
    // Trained: the test images' classes are mostly right.
    const auto predicted = testutil::argmaxRows(expected),
               labels = testutil::argmaxRows(raw.labels);
    int64_t correct = 0;
    for (size_t i = 0; i < labels.size(); ++i) correct += predicted[i] == labels[i];
    INFO("test images right: " << correct << " of 500");
    CHECK(correct >= 425);

    testutil::TempDir dir;
    ModelSerializer::writeModel(lenet, dir / "lenet.dl4cpp", false, normalizer.get());
    onnx::exportModelFile(dir / "lenet.dl4cpp", dir / "lenet.onnx");
    const auto withNormalizer = testutil::runInOnnxRuntime(
        dir / "lenet.onnx", {{"input", raw.features}}, {"output"}, dir.path());
    checkSameOutputs(expected, withNormalizer.at(0), "LeNet with its normalizer, on raw images",
                     true);

    onnx::exportModelFile(dir / "lenet.dl4cpp", dir / "bare.onnx", false);
    const auto bare = testutil::runInOnnxRuntime(
        dir / "bare.onnx", {{"input", normalized.features}}, {"output"}, dir.path());
    checkSameOutputs(expected, bare.at(0), "LeNet alone, on normalized images", true);
    testutil::checkRoundTrip(dir / "bare.onnx", {normalized.features}, {expected}, "LeNet");
  }

  TEST_CASE("OnnxExport: the image scaler as leading nodes and a normalizer that is not affine") {
    MultiLayerNetwork net(
        NeuralNetConfiguration::Builder()
            .seed(4)
            .list()
            .layer(ConvolutionLayer::Builder(2, 2).nOut(2).activation(Activation::RELU).build())
            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                       .nOut(3)
                       .activation(Activation::SOFTMAX)
                       .build())
            .setInputType(InputType::convolutionalFlat(3, 3, 2))
            .build());
    net.init();
    testutil::TempDir dir;
    const ClampingNormalizer clamping;
    CHECK_THROWS_WITH_AS(onnx::exportModel(net, dir / "clamped.onnx", {.normalizer = &clamping}),
                         doctest::Contains("x * scale + shift"), ModelExchangeError);

    if (testutil::skippedWithoutOnnxRuntime()) return;
    const ImagePreProcessingScaler scaler(-1.0, 1.0, 8);
    onnx::exportModel(net, dir / "scaled.onnx", {.normalizer = &scaler});
    const Tensor pixels = testutil::randomTensor(Shape{4, 18}, 41, 0, 255);
    Tensor scaled = pixels.clone();
    scaler.transformInput(scaled, net.getConfiguration().inputType);
    const auto actual = testutil::runInOnnxRuntime(dir / "scaled.onnx", {{"input", pixels}},
                                                   {"output"}, dir.path());
    checkSameOutputs(net.output(scaled), actual.at(0), "ImagePreProcessingScaler as leading nodes");
  }
}
