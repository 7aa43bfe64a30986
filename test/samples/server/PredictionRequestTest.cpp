#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "iterators/image/PngTestFiles.h"
#include "samples/server/PngTestUtil.h"
#include "server/PredictionRequest.h"

using samples::server::kImagePixels;
using samples::server::PixelRange;
using samples::server::pixelsFromJson;
using samples::server::pixelsFromPng;
using samples::server::pixelsFromRequest;
using samples::server::RequestError;

namespace {

constexpr PixelRange kUnit = PixelRange::UNIT;

std::string jsonPixels(int count, const std::string& value = "0") {
  std::string body = R"({"pixels": [)";
  for (int i = 0; i < count; ++i) body += (i ? "," : "") + value;
  return body + "]}";
}

}  // namespace

TEST_SUITE("samples") {
  TEST_CASE("PredictionRequest: JSON grey levels are scaled by 1/255, row by row") {
    std::string body = R"({"pixels": [255, 51)";
    for (int i = 2; i < kImagePixels; ++i) body += ",0";
    body += "]}";
    const std::vector<float> pixels = pixelsFromJson(body, kUnit);
    REQUIRE(pixels.size() == kImagePixels);
    CHECK(pixels[0] == doctest::Approx(1.0));
    CHECK(pixels[1] == doctest::Approx(0.2));
    CHECK(pixels[2] == 0.0f);
  }

  TEST_CASE(
      "PredictionRequest: in the 0-255 range, JSON and PNG grey levels are kept as they are") {
    std::string body = R"({"pixels": [255, 51, 12.5)";
    for (int i = 3; i < kImagePixels; ++i) body += ",0";
    body += "]}";
    const std::vector<float> json = pixelsFromJson(body, PixelRange::LEVELS);
    REQUIRE(json.size() == kImagePixels);
    CHECK(json[0] == 255.0f);
    CHECK(json[1] == 51.0f);
    CHECK(json[2] == 12.5f);
    CHECK(json[3] == 0.0f);
    std::vector<unsigned char> grey(kImagePixels);
    for (int i = 0; i < kImagePixels; ++i)
      grey[static_cast<size_t>(i)] = static_cast<unsigned char>(i % 256);
    const std::vector<float> png =
        pixelsFromRequest("image/png", testutil::encodePng(grey, 28, 28), PixelRange::LEVELS);
    REQUIRE(png.size() == kImagePixels);
    for (int i = 0; i < kImagePixels; ++i)
      CHECK(png[static_cast<size_t>(i)] == static_cast<float>(i % 256));
  }

  TEST_CASE("PredictionRequest: malformed JSON bodies are RequestErrors naming the problem") {
    auto reason = [](const std::string& body) {
      try {
        pixelsFromJson(body, kUnit);
      } catch (const RequestError& e) {
        return std::string(e.what());
      }
      FAIL("accepted: " << body);
      return std::string();
    };
    CHECK(reason("{not json").find("not valid JSON") != std::string::npos);
    CHECK(reason("[1, 2]").find("\"pixels\" array") != std::string::npos);
    CHECK(reason(R"({"pixels": "abc"})").find("must be an array") != std::string::npos);
    CHECK(reason(jsonPixels(783)).find("got 783") != std::string::npos);
    CHECK(reason(jsonPixels(785)).find("got 785") != std::string::npos);
    CHECK(reason(jsonPixels(784, "\"7\"")).find("[0] must be a number") != std::string::npos);
    CHECK(reason(jsonPixels(784, "256")).find("not a grey level") != std::string::npos);
    CHECK(reason(jsonPixels(784, "-1")).find("not a grey level") != std::string::npos);
  }

  TEST_CASE(
      "PredictionRequest: bytes that are not UTF-8, overflowing numbers and binary bodies are "
      "RequestErrors quoting them printably") {
    // Each of these once escaped as another exception (500) or gave a message that could not be
    // serialised as JSON.
    for (const std::string body :
         {std::string("{\"pixels\": [\"\xff\"]}"), std::string("{\"pi\xc3\x28\": 1}"),
          std::string("{\"pixels\": [1e999]}"), std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
          std::string("{\"pixels\": [-1e999]}")}) {
      CAPTURE(body);
      try {
        pixelsFromJson(body, kUnit);
        FAIL("accepted");
      } catch (const RequestError& e) {
        const std::string reason = e.what();
        CHECK(reason.find("not valid JSON") != std::string::npos);
        CHECK(std::all_of(reason.begin(), reason.end(),
                          [](char c) { return c >= 0x20 && c < 0x7f; }));
      }
    }
    CHECK_THROWS_WITH_AS(pixelsFromRequest("application/\xff", "{}", kUnit),
                         doctest::Contains("unsupported Content-Type 'application/\\xff'"),
                         RequestError);
  }

  TEST_CASE("PredictionRequest: JSON is checked as it is read, without building the document") {
    CHECK_THROWS_WITH_AS(pixelsFromJson(std::string(400000, '[') + std::string(400000, ']'), kUnit),
                         "JSON body must be an object with a \"pixels\" array", RequestError);
    CHECK_THROWS_WITH_AS(pixelsFromJson(R"({"pixels": [[1]]})", kUnit),
                         "\"pixels\"[0] must be a number, got array", RequestError);
    CHECK_THROWS_WITH_AS(pixelsFromJson(R"({"pixels": {}})", kUnit),
                         "\"pixels\" must be an array, got object", RequestError);
    CHECK_THROWS_WITH_AS(pixelsFromJson(R"({"other": 1})", kUnit),
                         "JSON body must be an object with a \"pixels\" array", RequestError);
    CHECK_THROWS_WITH_AS(pixelsFromJson(jsonPixels(784) + "x", kUnit),
                         doctest::Contains("not valid JSON"), RequestError);
    std::string twice = jsonPixels(784);
    twice.insert(1, R"("pixels": [], )");
    CHECK_THROWS_AS(pixelsFromJson(twice, kUnit), RequestError);
    // Other members, however nested, are skipped.
    std::string extra = jsonPixels(784);
    extra.insert(1, R"("id": {"a": [1, {"b": null}], "c": "d"}, )");
    CHECK(pixelsFromJson(extra, kUnit).size() == kImagePixels);
  }

  TEST_CASE("PredictionRequest: a 28x28 grey PNG decodes to the same features as its JSON") {
    std::vector<unsigned char> grey(kImagePixels);
    for (int i = 0; i < kImagePixels; ++i)
      grey[static_cast<size_t>(i)] = static_cast<unsigned char>(i % 256);
    const std::vector<float> fromPng = pixelsFromPng(testutil::encodePng(grey, 28, 28), kUnit);
    REQUIRE(fromPng.size() == kImagePixels);
    for (int i = 0; i < kImagePixels; ++i)
      CHECK(fromPng[static_cast<size_t>(i)] == static_cast<float>((i % 256) / 255.0));
  }

  TEST_CASE(
      "PredictionRequest: a PNG is decoded to grey as ImageRecordReader decodes training images "
      "(luma, alpha dropped)") {
    // Fully transparent pixels keep their colour: the server once composited alpha over black,
    // unlike the decoding of the image files a model is trained on.
    std::vector<unsigned char> rgba;
    for (int i = 0; i < kImagePixels; ++i) rgba.insert(rgba.end(), {200, 100, 50, 0});
    rgba[4 * 5 + 3] = 255;  // one opaque pixel: the same grey
    for (const float p : pixelsFromPng(testutil::encodePng(rgba, 28, 28, 4), kUnit))
      REQUIRE(p == doctest::Approx((0.299 * 200 + 0.587 * 100 + 0.114 * 50) / 255).epsilon(1e-6));
    std::vector<unsigned char> greyAlpha;
    for (int i = 0; i < kImagePixels; ++i) greyAlpha.insert(greyAlpha.end(), {51, 0});
    for (const float p : pixelsFromPng(testutil::encodePng(greyAlpha, 28, 28, 2), kUnit))
      REQUIRE(p == 0.2f);
  }

  TEST_CASE(
      "PredictionRequest: wrong-size, corrupt, empty and non-PNG bodies are RequestErrors with the "
      "decoder's reason") {
    auto reason = [](const std::string& body) {
      try {
        pixelsFromPng(body, kUnit);
      } catch (const RequestError& e) {
        std::string text = e.what();
        CHECK(std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
        return text;
      }
      FAIL("accepted");
      return std::string();
    };
    CHECK(reason(testutil::encodePng(std::vector<unsigned char>(size_t{32} * 32, 0), 32, 32)) ==
          "PNG must be 28x28, got 32x32");
    // Judged by its header: a few bytes may declare a large image, which is never decoded (its
    // data, one row here, would be a corrupt PNG).
    const testutil::Bytes large = testutil::pngFile({8192, 8192, 8, 0}, {{0}});
    CHECK(reason(std::string(large.begin(), large.end())) == "PNG must be 28x28, got 8192x8192");

    std::string png = testutil::encodePng(std::vector<unsigned char>(kImagePixels, 9), 28, 28);
    CHECK(reason(png.substr(0, png.size() / 2))
              .starts_with("the image/png body: truncated PNG: the file ends"));
    std::string badCrc = png;
    badCrc[29] = static_cast<char>(badCrc[29] ^ 0xff);  // IHDR's CRC
    CHECK(reason(badCrc) == "the image/png body: corrupt PNG: IHDR: CRC error");
    CHECK(reason("") == "the image/png body: empty file (0 bytes), not a PNG or JPEG image");
    CHECK(reason("{\"pixels\": []}") ==
          "the image/png body: not a PNG or JPEG image: the data looks like text");
    const dl4cpp::Image photo(1, 28, 28);
    const std::vector<std::byte> jpeg = dl4cpp::ImageWriter::encodeJpeg(photo);
    CHECK(reason(std::string(reinterpret_cast<const char*>(jpeg.data()), jpeg.size())) ==
          "the image/png body is a JPEG image, not a PNG");
  }

  TEST_CASE("PredictionRequest: the Content-Type picks the decoder, others are refused") {
    CHECK(pixelsFromRequest("application/json; charset=utf-8", jsonPixels(784), kUnit).size() ==
          kImagePixels);
    CHECK(pixelsFromRequest(
              "Image/PNG", testutil::encodePng(std::vector<unsigned char>(kImagePixels, 1), 28, 28),
              kUnit)
              .size() == kImagePixels);
    CHECK_THROWS_WITH_AS(pixelsFromRequest("text/plain", "1,2,3", kUnit),
                         doctest::Contains("unsupported Content-Type 'text/plain'"), RequestError);
    CHECK_THROWS_AS(pixelsFromRequest("", "{}", kUnit), RequestError);
  }
}
