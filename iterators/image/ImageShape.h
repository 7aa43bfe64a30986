#pragma once
// The size checks of the image code, whose sizes come from files and callers.
//   allocateImage: a zero-filled Image of that size, or AllocationError (naming `what`, the size
//                  and the bytes) instead of std::bad_alloc when it cannot be had.
//   checkImageShape: ShapeError (naming `what`) unless the image has at least one channel, row and
//                  column and exactly channels x height x width samples.
#include <string_view>

#include "iterators/image/Image.h"

namespace dl4cpp {

Image allocateImage(int channels, int height, int width, std::string_view what);
void checkImageShape(const Image& image, std::string_view what);

}  // namespace dl4cpp
