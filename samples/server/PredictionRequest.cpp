#include "server/PredictionRequest.h"

#include <png.h>

#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace samples::server {
namespace {

float scaleGreyLevel(double level) { return static_cast<float>(level / 255.0); }

// The media type of a Content-Type header, lower-cased, without parameters or spaces.
std::string mediaType(std::string_view contentType) {
  std::string type(contentType.substr(0, contentType.find(';')));
  std::erase_if(type, [](char c) { return c == ' ' || c == '\t'; });
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type;
}

}  // namespace

std::vector<float> pixelsFromJson(std::string_view body) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(body);
  } catch (const nlohmann::json::parse_error& e) {
    throw RequestError(fmt::format("body is not valid JSON: {}", e.what()));
  }
  if (!document.is_object() || !document.contains("pixels"))
    throw RequestError(R"(JSON body must be an object with a "pixels" array)");
  const nlohmann::json& pixels = document["pixels"];
  if (!pixels.is_array())
    throw RequestError(fmt::format(R"("pixels" must be an array, got {})", pixels.type_name()));
  if (pixels.size() != kImagePixels)
    throw RequestError(fmt::format(R"("pixels" must hold {} values ({}x{} grey levels), got {})",
                                   kImagePixels, kImageSide, kImageSide, pixels.size()));
  std::vector<float> features(kImagePixels);
  for (int i = 0; i < kImagePixels; ++i) {
    const nlohmann::json& value = pixels[static_cast<size_t>(i)];
    if (!value.is_number())
      throw RequestError(fmt::format(R"("pixels"[{}] must be a number, got {})", i, value.type_name()));
    const double level = value.get<double>();
    if (!std::isfinite(level) || level < 0 || level > 255)
      throw RequestError(fmt::format(R"("pixels"[{}] = {} is not a grey level in 0..255)", i, level));
    features[static_cast<size_t>(i)] = scaleGreyLevel(level);
  }
  return features;
}

std::vector<float> pixelsFromPng(std::string_view body) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  // png_image_free is safe on an image whose reading failed or finished (it then does nothing).
  const std::unique_ptr<png_image, void (*)(png_imagep)> cleanup(&image, png_image_free);
  if (!png_image_begin_read_from_memory(&image, body.data(), body.size()))
    throw RequestError(fmt::format("body is not a readable PNG: {}", image.message));
  if (image.width != kImageSide || image.height != kImageSide)
    throw RequestError(fmt::format("PNG must be {}x{}, got {}x{}", kImageSide, kImageSide,
                                   image.width, image.height));
  image.format = PNG_FORMAT_GRAY;
  // Zero-filled: an alpha channel is composited onto this buffer, i.e. onto black (MNIST's
  // background).
  std::vector<png_byte> grey(PNG_IMAGE_SIZE(image), 0);
  if (!png_image_finish_read(&image, nullptr, grey.data(), 0, nullptr))
    throw RequestError(fmt::format("PNG could not be decoded: {}", image.message));
  std::vector<float> features(kImagePixels);
  for (int i = 0; i < kImagePixels; ++i) features[static_cast<size_t>(i)] = scaleGreyLevel(grey[static_cast<size_t>(i)]);
  return features;
}

std::vector<float> pixelsFromRequest(std::string_view contentType, std::string_view body) {
  const std::string type = mediaType(contentType);
  if (type == "application/json") return pixelsFromJson(body);
  if (type == "image/png") return pixelsFromPng(body);
  throw RequestError(fmt::format(
      "unsupported Content-Type '{}': send application/json {{\"pixels\": [...]}} or image/png",
      contentType));
}

}  // namespace samples::server
