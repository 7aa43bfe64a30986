#include "server/ServedModel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "iterators/ImagePreProcessingScaler.h"
#include "nn/core/Error.h"
#include "server/PredictionRequest.h"
#if DL4CPP_SAMPLES_HAVE_ONNX
#include "nn/onnx/OnnxImport.h"
#endif

namespace samples::server {

void requireMnistInput(const dl4cpp::MultiLayerConfiguration& configuration) {
  requireMnistInput(configuration.inputType);
}

void requireMnistInput(const dl4cpp::InputType& input) {
  using Kind = dl4cpp::InputType::Kind;
  const bool image = input.kind != Kind::FeedForward && input.height == kImageSide &&
                     input.width == kImageSide && input.channels == 1;
  const bool flat = input.kind == Kind::FeedForward && input.size == kImagePixels;
  if (image || flat) return;
  throw dl4cpp::ConfigError(fmt::format(
      "the model takes {} input, but this server feeds it {}x{}x1 MNIST images ({} values): it "
      "serves models whose input is ConvolutionalFlat({}x{}x1), Convolutional({}x{}x1) or "
      "FeedForward({})",
      input.toString(), kImageSide, kImageSide, kImagePixels, kImageSide, kImageSide, kImageSide,
      kImageSide, kImagePixels));
}

dl4cpp::ModelAndNormalizer loadServedModel(const std::filesystem::path& path) {
  dl4cpp::ModelAndNormalizer served =
      dl4cpp::ModelSerializer::restoreMultiLayerNetworkAndNormalizer(path, false);
  try {
    requireMnistInput(served.model.getConfiguration());
  } catch (const dl4cpp::ConfigError& e) {
    throw dl4cpp::ConfigError(fmt::format("{}: {}", path.string(), e.what()));
  }
  return served;
}

bool isOnnxModelPath(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".onnx";
}

dl4cpp::ComputationGraph loadServedOnnxModel(const std::filesystem::path& path) {
#if DL4CPP_SAMPLES_HAVE_ONNX
  dl4cpp::ComputationGraph graph = dl4cpp::onnx::importModel(path, {.trainable = false});
  const dl4cpp::ComputationGraphConfiguration& conf = graph.getConfiguration();
  if (conf.networkInputs.size() != 1 || conf.networkOutputs.size() != 1)
    throw dl4cpp::ConfigError(fmt::format(
        "{}: the model has {} inputs and {} outputs; this server serves models of one input and "
        "one output",
        path.string(), conf.networkInputs.size(), conf.networkOutputs.size()));
  try {
    requireMnistInput(conf.networkInputTypes.front());
  } catch (const dl4cpp::ConfigError& e) {
    throw dl4cpp::ConfigError(fmt::format("{}: {}", path.string(), e.what()));
  }
  return graph;
#else
  throw dl4cpp::ConfigError(fmt::format(
      "{} is an ONNX model, but this mnist_inference_server was built without ONNX import "
      "(configure with DL4CPP_WITH_ONNX=ON; Debian: libonnx-dev): serve a dl4cpp model file, or "
      "convert it with dl4cpp-onnx import on a build that has it",
      path.string()));
#endif
}

PixelRangeChoice choosePixelRange(std::optional<PixelRange> requested,
                                  const dl4cpp::DataNormalization* normalizer) {
  if (requested) return {*requested, "--pixel-range"};
  const auto* scaler = dynamic_cast<const dl4cpp::ImagePreProcessingScaler*>(normalizer);
  if (scaler && scaler->getMaxBits() == 8)
    return {PixelRange::LEVELS, "the model file's ImagePreProcessingScaler"};
  return {PixelRange::UNIT, "default"};
}

}  // namespace samples::server
