#pragma once
// Image: one decoded image as the image pipeline passes it from decoding through augmentation and
// resizing to a batch: `channels` planes of height x width float samples (CHW, the layout of one
// example of an image batch), every sample in [0, 255] whatever the file's bit depth (16-bit
// samples are scaled by 255/65535), so that ImagePreProcessingScaler's default range fits every
// source. Floats, not bytes, so that a chain of transforms rounds once, at the end, if ever.
#include <cstddef>
#include <vector>

namespace dl4cpp {

struct Image {
  int channels = 0;
  int height = 0;
  int width = 0;
  std::vector<float> pixels;  // channels * height * width samples, channel-major (CHW)

  Image() = default;
  Image(int channels, int height, int width)
      : channels(channels),
        height(height),
        width(width),
        pixels(static_cast<size_t>(channels) * static_cast<size_t>(height) *
               static_cast<size_t>(width)) {}

  float& at(int c, int y, int x) { return pixels[index(c, y, x)]; }
  float at(int c, int y, int x) const { return pixels[index(c, y, x)]; }

 private:
  size_t index(int c, int y, int x) const {
    return (static_cast<size_t>(c) * static_cast<size_t>(height) + static_cast<size_t>(y)) *
               static_cast<size_t>(width) +
           static_cast<size_t>(x);
  }
};

}  // namespace dl4cpp
