#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include "TempDir.h"
#include "TestPaths.h"
#include "server/ServedModel.h"

using namespace dl4cpp;
using samples::server::choosePixelRange;
using samples::server::loadServedModel;
using samples::server::PixelRange;
using samples::server::requireMnistInput;

namespace {

// A few parameters behind whatever input: a 1x1 convolution, pooling over the whole image (or a
// dense layer for flat input), 10 classes.
MultiLayerConfiguration modelTaking(const InputType& input) {
  auto list = NeuralNetConfiguration::Builder().seed(1).list();
  if (input.kind == InputType::Kind::FeedForward) {
    list.layer(DenseLayer::Builder().nOut(2).build());
  } else {
    list.layer(ConvolutionLayer::Builder(1, 1).nOut(1).build())
        .layer(SubsamplingLayer::Builder(PoolingType::MAX, input.height, input.width)
                   .stride(input.height, input.width)
                   .build());
  }
  return list
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(10)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(input)
      .build();
}

// A 3.5 KB model file declaring a 16384x16384 input: served, its warm-up asked for gigabytes.
const std::filesystem::path kHugeInputModel =
    testutil::testDataDir() / "server/model-input-16384x16384.dl4cpp";

}  // namespace

TEST_SUITE("samples") {
  TEST_CASE("ServedModel: an .onnx path is imported, any other read as a model file") {
    CHECK(samples::server::isOnnxModelPath("lenet.onnx"));
    CHECK(samples::server::isOnnxModelPath("/models/LeNet.ONNX"));
    CHECK_FALSE(samples::server::isOnnxModelPath("lenet.dl4cpp"));
    CHECK_FALSE(samples::server::isOnnxModelPath("onnx"));
  }

  TEST_CASE(
      "ServedModel: an ONNX model of another input is refused naming the file (or, without "
      "ONNX, the missing import)") {
    // A model of ONNX's helper (make_import_cases.py) taking rows of 5 values.
    const std::filesystem::path rows =
        testutil::testDataDir() / "onnx-import-corpus/seed-relu.onnx";
#if DL4CPP_TEST_HAVE_ONNX
    CHECK_THROWS_WITH_AS(
        samples::server::loadServedOnnxModel(rows),
        doctest::Contains((rows.string() + ": the model takes FeedForward(5) input").c_str()),
        ConfigError);
#else
    CHECK_THROWS_WITH_AS(samples::server::loadServedOnnxModel(rows),
                         doctest::Contains("was built without ONNX import"), ConfigError);
#endif
  }

  TEST_CASE("ServedModel: models taking 28x28x1 images or 784 values are served") {
    CHECK_NOTHROW(requireMnistInput(modelTaking(InputType::convolutionalFlat(28, 28, 1))));
    CHECK_NOTHROW(requireMnistInput(modelTaking(InputType::convolutional(28, 28, 1))));
    CHECK_NOTHROW(requireMnistInput(modelTaking(InputType::feedForward(784))));
  }

  TEST_CASE("ServedModel: other inputs are refused naming the model's input and the server's") {
    for (const InputType& input :
         {InputType::convolutionalFlat(16384, 16384, 1), InputType::convolutional(28, 28, 3),
          InputType::convolutionalFlat(784, 1, 1), InputType::feedForward(100)}) {
      CAPTURE(input.toString());
      CHECK_THROWS_WITH_AS(
          requireMnistInput(modelTaking(input)),
          doctest::Contains(("the model takes " + input.toString() +
                             " input, but this server feeds it 28x28x1 MNIST images (784 values)")
                                .c_str()),
          ConfigError);
    }
  }

  TEST_CASE(
      "ServedModel: the model file with a 16384x16384 input is refused at load, naming the file") {
    // Regenerate: DL4CPP_WRITE_FIXTURES=1 build/test/dl4cpp_tests -tc="*16384x16384*"
    if (std::getenv("DL4CPP_WRITE_FIXTURES")) {
      MultiLayerNetwork model(modelTaking(InputType::convolutionalFlat(16384, 16384, 1)));
      model.init();
      model.save(kHugeInputModel, false);
    }
    CHECK(std::filesystem::file_size(kHugeInputModel) < 8192);
    CHECK_THROWS_WITH_AS(loadServedModel(kHugeInputModel),
                         doctest::Contains((kHugeInputModel.string() +
                                            ": the model takes ConvolutionalFlat(16384x16384x1)")
                                               .c_str()),
                         ConfigError);
    testutil::TempDir dir;
    MultiLayerNetwork lenetLike(modelTaking(InputType::convolutionalFlat(28, 28, 1)));
    lenetLike.init();
    lenetLike.save(dir / "served.dl4cpp");
    CHECK(loadServedModel(dir / "served.dl4cpp").model.numParams() == lenetLike.numParams());
  }
  TEST_CASE("ServedModel: the normalizer saved in the model file comes with the model") {
    testutil::TempDir dir;
    MultiLayerNetwork model(modelTaking(InputType::convolutionalFlat(28, 28, 1)));
    model.init();
    model.save(dir / "plain.dl4cpp", false);
    CHECK(loadServedModel(dir / "plain.dl4cpp").normalizer == nullptr);
    const ImagePreProcessingScaler scaler(-1, 1);
    ModelSerializer::writeModel(model, dir / "scaled.dl4cpp", false, &scaler);
    const auto served = loadServedModel(dir / "scaled.dl4cpp");
    const auto loaded = std::dynamic_pointer_cast<ImagePreProcessingScaler>(served.normalizer);
    REQUIRE(loaded);
    CHECK(loaded->getMinRange() == -1);
  }

  TEST_CASE(
      "ServedModel: the pixel range is --pixel-range's, else 0-255 for an ImagePreProcessingScaler "
      "of 8-bit pixels, else 0-1") {
    const ImagePreProcessingScaler toUnit;  // [0, 255] -> [0, 1]
    const ImagePreProcessingScaler toSymmetric(-1, 1);
    const ImagePreProcessingScaler sixteenBit(0, 1, 16);
    const NormalizerStandardize standardize;
    struct Case {
      std::optional<PixelRange> requested;
      const DataNormalization* normalizer;
      PixelRange range;
      std::string chosenBy;
    };
    const std::string byScaler = "the model file's ImagePreProcessingScaler";
    for (const Case& c : {Case{std::nullopt, nullptr, PixelRange::UNIT, "default"},
                          Case{std::nullopt, &standardize, PixelRange::UNIT, "default"},
                          Case{std::nullopt, &sixteenBit, PixelRange::UNIT, "default"},
                          Case{std::nullopt, &toUnit, PixelRange::LEVELS, byScaler},
                          Case{std::nullopt, &toSymmetric, PixelRange::LEVELS, byScaler},
                          Case{PixelRange::UNIT, &toUnit, PixelRange::UNIT, "--pixel-range"},
                          Case{PixelRange::LEVELS, nullptr, PixelRange::LEVELS, "--pixel-range"}}) {
      CAPTURE(c.chosenBy);
      const auto choice = choosePixelRange(c.requested, c.normalizer);
      CHECK(choice.range == c.range);
      CHECK(choice.chosenBy == c.chosenBy);
    }
  }
}
