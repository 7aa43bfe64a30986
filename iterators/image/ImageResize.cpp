#include "iterators/image/ImageResize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "iterators/image/ImageShape.h"
#include "nn/core/Error.h"

namespace dl4cpp {

namespace {

// How one axis's outputs are made from its inputs: output i is the sum over k of
// weights[offset[i] + k] * input[first[i] + k], for offset[i] <= offset[i] + k < offset[i + 1].
struct AxisFilter {
  std::vector<int> first;
  std::vector<size_t> offset{0};
  std::vector<float> weights;

  void addOutput(int firstInput) {
    first.push_back(firstInput);
    offset.push_back(weights.size());
  }
};

// Area averaging. Measured in 1/out of an input sample, output i covers [i in, (i + 1) in) and
// input j covers [j out, (j + 1) out): integers, so the weights (the overlaps over `in`) are exact
// for integer factors and no input that merely touches a footprint gets a weight.
AxisFilter areaFilter(int in, int out) {
  AxisFilter filter;
  for (int i = 0; i < out; ++i) {
    const int64_t begin = int64_t{i} * in;
    const int64_t end = begin + in;
    const int64_t firstInput = begin / out;
    for (int64_t j = firstInput; j * out < end; ++j) {
      const int64_t covered = std::min(end, (j + 1) * out) - std::max(begin, j * out);
      filter.weights.push_back(static_cast<float>(static_cast<double>(covered) / in));
    }
    filter.addOutput(static_cast<int>(firstInput));
  }
  return filter;
}

// Bilinear interpolation between the two inputs around (i + 0.5) in / out - 0.5; outside the
// first and last input's centres, that input alone.
AxisFilter linearFilter(int in, int out) {
  AxisFilter filter;
  for (int i = 0; i < out; ++i) {
    const double x = (i + 0.5) * in / out - 0.5;
    int j = static_cast<int>(std::floor(x));
    double t = x - j;
    if (j < 0) j = 0, t = 0;
    if (j >= in - 1) j = in - 1, t = 0;
    filter.weights.push_back(static_cast<float>(1 - t));
    if (t > 0) filter.weights.push_back(static_cast<float>(t));
    filter.addOutput(j);
  }
  return filter;
}

// Row y of channel c (Image::at gives values, not addresses, on a const image).
const float* rowOf(const Image& image, int c, int y) {
  return image.pixels.data() +
         (static_cast<size_t>(c) * static_cast<size_t>(image.height) + static_cast<size_t>(y)) *
             static_cast<size_t>(image.width);
}

AxisFilter filterFor(int in, int out) {
  return out < in ? areaFilter(in, out) : linearFilter(in, out);
}

// (c, h, w) to (c, h, width): each row through the filter.
Image filterRows(const Image& in, int width) {
  const AxisFilter filter = filterFor(in.width, width);
  Image out = allocateImage(in.channels, in.height, width, "resize");
  for (int c = 0; c < in.channels; ++c)
    for (int y = 0; y < in.height; ++y) {
      const float* src = rowOf(in, c, y);
      float* dst = &out.at(c, y, 0);
      for (size_t x = 0; x < static_cast<size_t>(width); ++x) {
        const float* taps = src + filter.first[x];
        float sum = 0;
        for (size_t k = filter.offset[x]; k < filter.offset[x + 1]; ++k)
          sum += filter.weights[k] * taps[k - filter.offset[x]];
        dst[x] = sum;
      }
    }
  return out;
}

// (c, h, w) to (c, height, w): each column through the filter, a row at a time.
Image filterColumns(const Image& in, int height) {
  const AxisFilter filter = filterFor(in.height, height);
  Image out = allocateImage(in.channels, height, in.width, "resize");
  const size_t width = static_cast<size_t>(in.width);
  for (int c = 0; c < in.channels; ++c)
    for (size_t y = 0; y < static_cast<size_t>(height); ++y) {
      float* dst = &out.at(c, static_cast<int>(y), 0);
      for (size_t k = filter.offset[y]; k < filter.offset[y + 1]; ++k) {
        const float weight = filter.weights[k];
        const float* src = rowOf(in, c, filter.first[y] + static_cast<int>(k - filter.offset[y]));
        for (size_t x = 0; x < width; ++x) dst[x] += weight * src[x];
      }
    }
  return out;
}

}  // namespace

Image resize(const Image& image, int height, int width) {
  if (height < 1 || width < 1)
    throw ConfigError(
        fmt::format("resize: the size {} x {} must be at least 1 x 1", height, width));
  checkImageShape(image, "resize");
  if (height == image.height && width == image.width) {
    Image copy = allocateImage(image.channels, height, width, "resize");
    std::copy(image.pixels.begin(), image.pixels.end(), copy.pixels.begin());
    return copy;
  }
  if (height == image.height) return filterRows(image, width);
  if (width == image.width) return filterColumns(image, height);
  return filterColumns(filterRows(image, width), height);
}

}  // namespace dl4cpp
