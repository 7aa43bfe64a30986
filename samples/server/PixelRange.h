#pragma once
// The scale of the pixels the server hands the model (and the normalizer saved with it), which must
// be that of the data the model was trained on. A request's grey levels 0..255 become
//   UNIT    "0-1"    grey level / 255, as MnistDataSetIterator gives MNIST's pixels
//   LEVELS  "0-255"  the grey levels as they are, as ImageRecordReader gives an image file's
// mnist_inference_server's --pixel-range takes the names, and /health reports the one in use.
#include <string_view>

namespace samples::server {

enum class PixelRange { UNIT, LEVELS };

// "0-1" or "0-255".
std::string_view pixelRangeName(PixelRange range);

// The range named `name`; std::invalid_argument naming both otherwise.
PixelRange parsePixelRange(std::string_view name);

// What the model is handed for grey level `level` (0..255).
float pixelFeature(double level, PixelRange range);

}  // namespace samples::server
