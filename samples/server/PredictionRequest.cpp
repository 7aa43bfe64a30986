#include "server/PredictionRequest.h"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>

#include "iterators/image/ImageDecoder.h"
#include "nn/core/Error.h"
#include "server/HttpAnswer.h"

namespace samples::server {
namespace {

constexpr size_t kPixels = kImagePixels;

// The media type of a Content-Type header, lower-cased, without parameters or spaces.
std::string mediaType(std::string_view contentType) {
  std::string type(contentType.substr(0, contentType.find(';')));
  std::erase_if(type, [](char c) { return c == ' ' || c == '\t'; });
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type;
}

// Reads {"pixels": [...]} as the parser reports it (SAX), without building the document: memory
// stays at the 784 features whatever the body holds (a DOM of a 1 MiB body of nested or empty
// arrays takes tens of MB), and the first value out of place ends the parse with its reason.
// Other members of the object are skipped.
class PixelsReader final : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit PixelsReader(PixelRange range) : range_(range) {}

  std::vector<float> features = std::vector<float>(kPixels);
  bool sawPixels = false;

  bool null() override { return scalar("null"); }
  bool boolean(bool) override { return scalar("boolean"); }
  bool number_integer(number_integer_t value) override {
    return number(static_cast<double>(value));
  }
  bool number_unsigned(number_unsigned_t value) override {
    return number(static_cast<double>(value));
  }
  bool number_float(number_float_t value, const string_t&) override { return number(value); }
  bool string(string_t&) override { return scalar("string"); }
  bool binary(binary_t&) override { return scalar("binary"); }
  bool start_object(std::size_t) override { return open("object"); }
  bool start_array(std::size_t) override { return open("array"); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& name) override {
    if (depth_ == 1) {
      nextIsPixels_ = name == "pixels";
      if (nextIsPixels_ && sawPixels) throw RequestError(R"(the JSON body holds "pixels" twice)");
    }
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    // The parser's message quotes the bytes it stopped at, which may be anything.
    throw RequestError(fmt::format("body is not valid JSON: {}", printable(e.what(), 160)));
  }

 private:
  bool inPixels() const { return depth_ == 2 && inPixels_; }

  bool scalar(const char* type) {
    if (depth_ == 0) throw notAnObject();
    if (depth_ == 1 && nextIsPixels_)
      throw RequestError(fmt::format(R"("pixels" must be an array, got {})", type));
    if (inPixels())
      throw RequestError(fmt::format(R"("pixels"[{}] must be a number, got {})", count_, type));
    return true;
  }

  bool number(double level) {
    if (!inPixels()) return scalar("number");
    if (!std::isfinite(level) || level < 0 || level > 255)
      throw RequestError(
          fmt::format(R"("pixels"[{}] = {} is not a grey level in 0..255)", count_, level));
    if (count_ < kPixels) features[count_] = pixelFeature(level, range_);
    ++count_;  // counted on past kImagePixels, for the message
    return true;
  }

  bool open(const char* type) {
    const bool array = std::string_view(type) == "array";
    if (depth_ == 0 && array) throw notAnObject();
    if (depth_ == 1 && nextIsPixels_) {
      if (!array) throw RequestError(R"("pixels" must be an array, got object)");
      inPixels_ = sawPixels = true;
    } else if (inPixels()) {
      throw RequestError(fmt::format(R"("pixels"[{}] must be a number, got {})", count_, type));
    }
    ++depth_;
    return true;
  }

  bool close() {
    --depth_;
    if (depth_ == 1 && inPixels_) {
      inPixels_ = nextIsPixels_ = false;
      if (count_ != kPixels)
        throw RequestError(
            fmt::format(R"("pixels" must hold {} values ({}x{} grey levels), got {})", kImagePixels,
                        kImageSide, kImageSide, count_));
    }
    return true;
  }

  static RequestError notAnObject() {
    return RequestError(R"(JSON body must be an object with a "pixels" array)");
  }

  PixelRange range_;
  size_t depth_ = 0;  // objects and arrays open
  bool nextIsPixels_ = false;
  bool inPixels_ = false;
  size_t count_ = 0;  // values in "pixels" so far
};

}  // namespace

std::vector<float> pixelsFromJson(std::string_view body, PixelRange range) {
  PixelsReader reader(range);
  nlohmann::json::sax_parse(body.begin(), body.end(), &reader);
  if (!reader.sawPixels) throw RequestError(R"(JSON body must be an object with a "pixels" array)");
  return std::move(reader.features);
}

std::vector<float> pixelsFromPng(std::string_view body, PixelRange range) {
  const std::span<const std::byte> bytes = std::as_bytes(std::span(body.data(), body.size()));
  constexpr std::string_view kName = "the image/png body";
  try {
    // The header first: a PNG of a few KB may hold a very large image.
    const dl4cpp::ImageHeader header = dl4cpp::ImageDecoder::readHeader(bytes, kName);
    if (header.format != dl4cpp::ImageFormat::Png)
      throw RequestError("the image/png body is a JPEG image, not a PNG");
    if (header.width != kImageSide || header.height != kImageSide)
      throw RequestError(fmt::format("PNG must be {}x{}, got {}x{}", kImageSide, kImageSide,
                                     header.width, header.height));
    const dl4cpp::Image grey = dl4cpp::ImageDecoder::decode(bytes, 1, kName);
    std::vector<float> features(kImagePixels);
    for (size_t i = 0; i < features.size(); ++i) features[i] = pixelFeature(grey.pixels[i], range);
    return features;
  } catch (const dl4cpp::DataError& e) {
    // The decoder's reason, kept printable whatever libpng quotes of the body (chunk names).
    throw RequestError(printable(e.what(), 240));
  }
}

std::vector<float> pixelsFromRequest(std::string_view contentType, std::string_view body,
                                     PixelRange range) {
  const std::string type = mediaType(contentType);
  if (type == "application/json") return pixelsFromJson(body, range);
  if (type == "image/png") return pixelsFromPng(body, range);
  throw RequestError(fmt::format(
      "unsupported Content-Type '{}': send application/json {{\"pixels\": [...]}} or image/png",
      printable(contentType)));
}

}  // namespace samples::server
