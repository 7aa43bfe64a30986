#include "iterators/image/codec/InterleavedSamples.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <new>
#include <vector>

#include "iterators/image/ImageDecoder.h"
#include "iterators/image/ImageShape.h"
#include "nn/core/Error.h"

namespace dl4cpp::codec {

namespace {

// Where an output channel's values come from: a sample of the pixel (0 to 3), or one of these.
constexpr int kLuma = -1;    // 0.299 R + 0.587 G + 0.114 B of samples 0, 1, 2
constexpr int kOpaque = -2;  // 255

std::array<int, 4> channelSources(int sourceChannels, int channels) {
  const bool colour = sourceChannels >= 3;
  const int alpha = sourceChannels == 2 ? 1 : sourceChannels == 4 ? 3 : kOpaque;
  if (channels == 1) return {colour ? kLuma : 0, 0, 0, 0};
  if (colour) return {0, 1, 2, alpha};
  return {0, 0, 0, alpha};
}

// Row y's samples as floats in [0, 255].
void rowValues(const InterleavedSamples& samples, int y, std::vector<float>& values) {
  const uint8_t* row = samples.row(y);
  if (samples.bitDepth == 8) {
    std::copy(row, row + values.size(), values.begin());
    return;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const unsigned sample = (static_cast<unsigned>(row[2 * i]) << 8) | row[2 * i + 1];
    values[i] = static_cast<float>(sample * (255.0 / 65535.0));
  }
}

// v rounded to the nearest integer in [0, max]; NaN to 0.
unsigned quantize(float v, float max) {
  if (!(v > 0)) return 0;
  if (v >= max) return static_cast<unsigned>(max);
  return static_cast<unsigned>(std::lround(v));
}

}  // namespace

void checkImageSize(int64_t width, int64_t height, std::string_view name, std::string_view format) {
  if (width < 1 || height < 1)
    throw DataFormatError(fmt::format("{}: the {} header claims an empty image ({} x {} pixels)",
                                      name, format, width, height));
  if (width > ImageDecoder::kMaxSide || height > ImageDecoder::kMaxSide ||
      width * height > ImageDecoder::kMaxPixels)
    throw DataFormatError(fmt::format(
        "{}: the {} header claims {} x {} pixels, over the limit of {} pixels a side and {} in all",
        name, format, width, height, ImageDecoder::kMaxSide, ImageDecoder::kMaxPixels));
}

InterleavedSamples allocateSamples(int height, int width, int channels, int bitDepth,
                                   size_t rowBytes, std::string_view name) {
  InterleavedSamples samples;
  samples.height = height;
  samples.width = width;
  samples.channels = channels;
  samples.bitDepth = bitDepth;
  samples.rowBytes = rowBytes;
  const size_t bytes = rowBytes * static_cast<size_t>(height);
  try {
    samples.data = std::make_unique_for_overwrite<uint8_t[]>(bytes);
  } catch (const std::bad_alloc&) {
    throw AllocationError(fmt::format(
        "{}: cannot allocate {} bytes for the samples of a {} x {} image: out of memory", name,
        bytes, width, height));
  }
  return samples;
}

Image toImage(const InterleavedSamples& samples, int channels, std::string_view name) {
  Image image = allocateImage(channels, samples.height, samples.width, name);
  const std::array<int, 4> sources = channelSources(samples.channels, channels);
  const size_t width = static_cast<size_t>(samples.width);
  const size_t stride = static_cast<size_t>(samples.channels);
  std::vector<float> values(width * stride);
  for (int y = 0; y < samples.height; ++y) {
    rowValues(samples, y, values);
    for (int c = 0; c < channels; ++c) {
      float* out = &image.at(c, y, 0);
      const int source = sources[static_cast<size_t>(c)];
      if (source == kOpaque) {
        std::fill(out, out + width, 255.0f);
      } else if (source == kLuma) {
        for (size_t x = 0; x < width; ++x)
          out[x] = 0.299f * values[x * stride] + 0.587f * values[x * stride + 1] +
                   0.114f * values[x * stride + 2];
      } else {
        for (size_t x = 0; x < width; ++x)
          out[x] = values[x * stride + static_cast<size_t>(source)];
      }
    }
  }
  return image;
}

InterleavedSamples fromImage(const Image& image, int bitDepth, std::string_view what) {
  const size_t width = static_cast<size_t>(image.width);
  const size_t channels = static_cast<size_t>(image.channels);
  InterleavedSamples samples =
      allocateSamples(image.height, image.width, image.channels, bitDepth,
                      width * channels * static_cast<size_t>(bitDepth / 8), what);
  for (int y = 0; y < image.height; ++y) {
    uint8_t* row = samples.row(y);
    for (size_t c = 0; c < channels; ++c) {
      const float* in = image.pixels.data() +
                        (c * static_cast<size_t>(image.height) + static_cast<size_t>(y)) * width;
      if (bitDepth == 8) {
        for (size_t x = 0; x < width; ++x)
          row[x * channels + c] = static_cast<uint8_t>(quantize(in[x], 255));
      } else {
        for (size_t x = 0; x < width; ++x) {
          const unsigned v = quantize(in[x] * 257.0f, 65535);
          row[2 * (x * channels + c)] = static_cast<uint8_t>(v >> 8);
          row[2 * (x * channels + c) + 1] = static_cast<uint8_t>(v & 0xff);
        }
      }
    }
  }
  return samples;
}

}  // namespace dl4cpp::codec
