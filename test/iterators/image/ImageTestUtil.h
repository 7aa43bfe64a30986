#pragma once
// Images for the image tests: sample patterns that exercise every value range, smooth ones that a
// JPEG encodes closely, and comparisons.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "iterators/image/Image.h"

namespace testutil {

// The value ImageDecoder gives a 16-bit sample.
inline float from16Bit(unsigned sample) { return static_cast<float>(sample * (255.0 / 65535.0)); }

// Noise: every sample a hash of its index, integers 0..255 for 8 bits, s * 255 / 65535 for 16 bits
// (s in 0..65535), so that a write at that depth and a decode give the same floats; neither PNG
// nor JPEG compresses it much.
inline dl4cpp::Image patternImage(int channels, int height, int width, int bitDepth) {
  dl4cpp::Image image(channels, height, width);
  for (size_t i = 0; i < image.pixels.size(); ++i) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u;
    h ^= h >> 15;
    image.pixels[i] = bitDepth == 8 ? static_cast<float>(h % 256) : from16Bit(h % 65536);
  }
  image.pixels.front() = 0;  // both ends of the range
  image.pixels.back() = 255;
  return image;
}

// Smooth gradients and waves with integer values, which a JPEG encodes closely.
inline dl4cpp::Image smoothImage(int channels, int height, int width) {
  dl4cpp::Image image(channels, height, width);
  for (int c = 0; c < channels; ++c)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        image.at(c, y, x) = std::round(
            127.5f +
            60.0f * std::sin(0.11f * static_cast<float>(x) + 0.7f * static_cast<float>(c)) +
            50.0f * std::cos(0.07f * static_cast<float>(y) - 0.4f * static_cast<float>(c)));
  return image;
}

// The image as interleaved 8-bit samples (values rounded), as libjpeg and libpng take them.
inline std::vector<uint8_t> interleaved(const dl4cpp::Image& image) {
  std::vector<uint8_t> out;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x)
      for (int c = 0; c < image.channels; ++c)
        out.push_back(static_cast<uint8_t>(std::clamp(std::lround(image.at(c, y, x)), 0L, 255L)));
  return out;
}

// Mean and largest absolute difference of two images of one size.
struct Difference {
  double mean = 0;
  double max = 0;
};
inline Difference difference(const dl4cpp::Image& a, const dl4cpp::Image& b) {
  Difference d;
  for (size_t i = 0; i < a.pixels.size(); ++i) {
    const double e = std::abs(static_cast<double>(a.pixels[i]) - b.pixels[i]);
    d.mean += e;
    d.max = std::max(d.max, e);
  }
  d.mean /= static_cast<double>(a.pixels.size());
  return d;
}

}  // namespace testutil
