#pragma once
// resize: an Image scaled to height x width, each axis on its own:
//   shrinking  area averaging (OpenCV's INTER_AREA): each output sample is the mean of the input
//              samples its footprint covers, each weighted by the fraction covered; an integer
//              factor gives the plain mean of each block.
//   enlarging  bilinear interpolation with half-pixel centres (OpenCV's INTER_LINEAR): output x
//              samples the input at (x + 0.5) * in / out - 0.5, clamped to the edge samples.
//   unchanged  the samples are copied as they are.
// An axis that shrinks and one that grows (mixed) each get their own method.
// ConfigError for a height or width below 1; ShapeError for an image whose pixels do not match
// its size; AllocationError when the result does not fit in memory.
#include "iterators/image/Image.h"

namespace dl4cpp {

Image resize(const Image& image, int height, int width);

}  // namespace dl4cpp
