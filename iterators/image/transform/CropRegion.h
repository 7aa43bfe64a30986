#pragma once
// The sub-image both crop transforms cut out.
#include "iterators/image/Image.h"

namespace dl4cpp {

// The height x width window of `image` whose top-left pixel is (left, top), every channel; the
// window must lie inside the image.
Image cropRegion(const Image& image, int top, int left, int height, int width);

}  // namespace dl4cpp
