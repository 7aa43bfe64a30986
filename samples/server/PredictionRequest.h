#pragma once
// Turns the body of a POST /predict request into the 784 features of one MNIST image: its grey
// levels 0..255, row by row, in the pixel range of the data the model was trained on (PixelRange.h:
// grey level / 255, or the levels as they are). Two encodings are accepted:
//   application/json  {"pixels": [784 numbers, each a grey level in 0..255, row by row]}
//   image/png         a 28x28 PNG of any colour type and bit depth, decoded to grey as
//                     ImageRecordReader decodes training images (ImageDecoder with 1 channel:
//                     colour becomes its BT.601 luma, alpha is dropped, 16-bit samples are scaled
//                     to 0..255)
// Anything else is a RequestError whose message says what was wrong, quoting client bytes only as
// printable ASCII (HttpAnswer.h); the server answers it with 400 and that message. A PNG's size is
// checked on its header, before it is decoded, so decoding needs memory for one 28x28 image
// whatever the body holds.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "server/PixelRange.h"

namespace samples::server {

inline constexpr int kImageSide = 28;
inline constexpr int kImagePixels = kImageSide * kImageSide;

// A request the client must fix (HTTP 400).
class RequestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::vector<float> pixelsFromJson(std::string_view body, PixelRange range);
std::vector<float> pixelsFromPng(std::string_view body, PixelRange range);
// Dispatches on the Content-Type header (parameters such as "; charset=utf-8" are ignored).
std::vector<float> pixelsFromRequest(std::string_view contentType, std::string_view body,
                                     PixelRange range);

}  // namespace samples::server
