#pragma once
// ScaleImageTransform: DataVec's ScaleImageTransform, which changes the image's size, not its
// content's scale within a fixed frame: the height grows or shrinks by a random amount in
// [-dy, dy] pixels and the width by one in [-dx, dx] (each rounded, and at least 1 pixel), and the
// image is resized to that (bilinear, edges replicated, as OpenCV's resize). The image reader
// resizes the pipeline's result to the size it was asked for, so after it the net effect is a
// random change of aspect ratio and, with crops, of zoom.
//
// MATLAB's RandScale (a zoom about the centre that keeps the size) is RotateImageTransform's
// scale: RotateImageTransform({0, 0}, {0.8, 1.25}).
//
// Every transform() draws exactly two values (height, then width).
#include "iterators/image/ImageTransform.h"

namespace dl4cpp {

class ScaleImageTransform : public ImageTransform {
 public:
  // dx = dy = delta.
  explicit ScaleImageTransform(double delta);
  // The largest change of width (dx) and height (dy), in pixels: >= 0 and at most
  // kMaxTransformPixels (ImageTransformChecks.h).
  ScaleImageTransform(double dx, double dy);

  void transform(Image& image, ExampleRandom& random) const override;

 private:
  double dx_, dy_;
};

}  // namespace dl4cpp
