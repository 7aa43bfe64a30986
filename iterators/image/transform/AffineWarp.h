#pragma once
// The one affine warp that every geometric transform (rotation, zoom, translation, DataVec's
// scale) samples through, as DataVec's transforms all go through OpenCV's warpAffine/resize.
// Coordinates are pixel centres: pixel (x, y) sits at the point (x, y), so the image's centre is
// ((width - 1) / 2, (height - 1) / 2) and a flip or a quarter turn maps the pixel grid onto itself.
#include "iterators/image/Image.h"

namespace dl4cpp {

// The map (x, y) -> (xx * x + xy * y + x0, yx * x + yy * y + y0).
struct AffineMap {
  double xx = 1, xy = 0, x0 = 0;
  double yx = 0, yy = 1, y0 = 0;

  // OpenCV's getRotationMatrix2D: rotation by `degrees` (counter-clockwise as the image is shown,
  // y pointing down) and scaling by `scale` about (centerX, centerY).
  static AffineMap rotation(double centerX, double centerY, double degrees, double scale);
  static AffineMap translation(double dx, double dy);
  // The map whose composition with this one is the identity; the map must be invertible.
  AffineMap inverse() const;
};

// What a sample outside the source image reads.
enum class WarpBorder {
  Zero,       // 0, OpenCV's BORDER_CONSTANT with value 0 (warpAffine's default)
  Replicate,  // the nearest edge sample, as OpenCV's resize
};

// The height x width image whose pixel (x, y) is `source` sampled bilinearly at
// destinationToSource(x, y), every channel alike. A map that lands exactly on pixel centres (the
// identity, an integer shift, a quarter turn) copies samples exactly.
Image warpAffine(const Image& source, const AffineMap& destinationToSource, int height, int width,
                 WarpBorder border);

}  // namespace dl4cpp
