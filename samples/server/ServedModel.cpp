#include "server/ServedModel.h"

#include <fmt/format.h>

#include "iterators/ImagePreProcessingScaler.h"
#include "nn/core/Error.h"
#include "server/PredictionRequest.h"

namespace samples::server {

void requireMnistInput(const dl4cpp::MultiLayerConfiguration& configuration) {
  using Kind = dl4cpp::InputType::Kind;
  const dl4cpp::InputType& input = configuration.inputType;
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

PixelRangeChoice choosePixelRange(std::optional<PixelRange> requested,
                                  const dl4cpp::DataNormalization* normalizer) {
  if (requested) return {*requested, "--pixel-range"};
  const auto* scaler = dynamic_cast<const dl4cpp::ImagePreProcessingScaler*>(normalizer);
  if (scaler && scaler->getMaxBits() == 8)
    return {PixelRange::LEVELS, "the model file's ImagePreProcessingScaler"};
  return {PixelRange::UNIT, "default"};
}

}  // namespace samples::server
