#include "iterators/image/transform/AffineWarp.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <vector>

namespace dl4cpp {

AffineMap AffineMap::rotation(double centerX, double centerY, double degrees, double scale) {
  const double radians = degrees * std::numbers::pi / 180.0;
  const double a = scale * std::cos(radians), b = scale * std::sin(radians);
  return {a, b, (1 - a) * centerX - b * centerY, -b, a, b * centerX + (1 - a) * centerY};
}

AffineMap AffineMap::translation(double dx, double dy) { return {1, 0, dx, 0, 1, dy}; }

AffineMap AffineMap::inverse() const {
  const double det = xx * yy - xy * yx;
  const double ixx = yy / det, ixy = -xy / det, iyx = -yx / det, iyy = xx / det;
  return {ixx, ixy, -(ixx * x0 + ixy * y0), iyx, iyy, -(iyx * x0 + iyy * y0)};
}

namespace {

// A coordinate this close to a pixel centre is that centre. A quarter turn's matrix holds
// cos 90 deg = 6e-17, not 0: unsnapped, a 0 sample next to a 255 one would read 1e-14, not 0.
constexpr double kSnap = 1e-9;

// A sample point along one axis: its two neighbouring source indices and their weights. A
// neighbour outside the source (Zero border) has weight 0 and an index clamped into the source;
// a point a whole pixel or more outside is not `near` the source and reads 0.
struct AxisSample {
  int low = 0, high = 0;
  double lowWeight = 0, highWeight = 0;
  bool near = false;
};

inline AxisSample sampleAxis(double s, int size, WarpBorder border) {
  if (border == WarpBorder::Replicate)
    s = std::clamp(s, 0.0, static_cast<double>(size - 1));
  else if (!(s > -1 && s < size))
    return {};
  int low = static_cast<int>(s);  // floor, for s in (-1, size): no libm call per pixel
  if (low > s) --low;
  double fraction = s - low;
  if (fraction < kSnap) {
    fraction = 0;
  } else if (fraction > 1 - kSnap) {
    ++low;
    fraction = 0;
  }
  const int high = low + 1;
  return {std::clamp(low, 0, size - 1), std::min(high, size - 1),
          low >= 0 && low < size ? 1 - fraction : 0, high < size ? fraction : 0, true};
}

}  // namespace

Image warpAffine(const Image& source, const AffineMap& destinationToSource, int height, int width,
                 WarpBorder border) {
  const AffineMap& m = destinationToSource;
  Image out(source.channels, height, width);  // zeros: what the Zero border leaves
  const size_t sourceWidth = static_cast<size_t>(source.width);
  const size_t sourcePlane = static_cast<size_t>(source.height) * sourceWidth;
  const size_t outWidth = static_cast<size_t>(width);
  const size_t outPlane = static_cast<size_t>(height) * outWidth;
  // One output row at a time: its sample points first, then each channel's row from them, so that
  // every channel is read and written along its own plane. Whether each point is near the source
  // is kept in a flag array of its own, which the channel loops test faster than a sample's field.
  std::vector<AxisSample> columns(outWidth), rows(outWidth);
  std::vector<unsigned char> near(outWidth);
  for (int y = 0; y < height; ++y) {
    const double rowX = m.xy * y + m.x0, rowY = m.yy * y + m.y0;
    for (size_t x = 0; x < outWidth; ++x) {
      const double dx = static_cast<double>(x);
      columns[x] = sampleAxis(m.xx * dx + rowX, source.width, border);
      rows[x] = sampleAxis(m.yx * dx + rowY, source.height, border);
      near[x] = columns[x].near && rows[x].near;
    }
    for (int c = 0; c < source.channels; ++c) {
      const float* p = source.pixels.data() + static_cast<size_t>(c) * sourcePlane;
      float* o =
          out.pixels.data() + static_cast<size_t>(c) * outPlane + static_cast<size_t>(y) * outWidth;
      for (size_t x = 0; x < outWidth; ++x) {
        const AxisSample& ax = columns[x];
        const AxisSample& ay = rows[x];
        if (!near[x]) continue;  // out holds 0 there
        const float* low = p + static_cast<size_t>(ay.low) * sourceWidth;
        const float* high = p + static_cast<size_t>(ay.high) * sourceWidth;
        // In double: weights that add up to 1 give a result within [0, 255] after rounding.
        const double top = ax.lowWeight * low[ax.low] + ax.highWeight * low[ax.high];
        const double bottom = ax.lowWeight * high[ax.low] + ax.highWeight * high[ax.high];
        o[x] = static_cast<float>(ay.lowWeight * top + ay.highWeight * bottom);
      }
    }
  }
  return out;
}

}  // namespace dl4cpp
