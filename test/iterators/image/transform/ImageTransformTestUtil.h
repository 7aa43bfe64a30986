#pragma once
// Small hand-made images for the transform tests and ways to compare them bit for bit.
#include <cstdint>
#include <cstring>

#include "iterators/image/ExampleRandom.h"
#include "iterators/image/Image.h"
#include "iterators/image/ImageTransform.h"

namespace testutil {

// Sample (c, y, x) = 100 c + 10 y + x: every sample of a small image tells where it came from.
inline dl4cpp::Image numberedImage(int channels, int height, int width) {
  dl4cpp::Image image(channels, height, width);
  for (int c = 0; c < channels; ++c)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) image.at(c, y, x) = static_cast<float>(100 * c + 10 * y + x);
  return image;
}

// Same shape and the same bits in every sample.
inline bool bitIdentical(const dl4cpp::Image& a, const dl4cpp::Image& b) {
  return a.channels == b.channels && a.height == b.height && a.width == b.width &&
         a.pixels.size() == b.pixels.size() &&
         std::memcmp(a.pixels.data(), b.pixels.data(), a.pixels.size() * sizeof(float)) == 0;
}

// `transform` applied to a copy of `image` with the draws of (seed, epoch, example).
inline dl4cpp::Image transformed(const dl4cpp::ImageTransform& transform,
                                 const dl4cpp::Image& image, uint64_t example, uint64_t seed = 42,
                                 uint64_t epoch = 0) {
  dl4cpp::Image out = image;
  dl4cpp::ExampleRandom random(seed, epoch, example);
  transform.transform(out, random);
  return out;
}

// The sample-weighted centre of channel 0 and its total: where a single bright dot went.
struct Centroid {
  double x = 0, y = 0, mass = 0;
};
inline Centroid centroid(const dl4cpp::Image& image) {
  Centroid c;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      c.x += x * static_cast<double>(image.at(0, y, x));
      c.y += y * static_cast<double>(image.at(0, y, x));
      c.mass += image.at(0, y, x);
    }
  c.x /= c.mass;
  c.y /= c.mass;
  return c;
}

// How many values `transform` drew from the example's stream (-1 when more than 64): the next
// value after it is the fresh stream's value at that position.
inline int drawsUsed(const dl4cpp::ImageTransform& transform, const dl4cpp::Image& image,
                     uint64_t example) {
  dl4cpp::Image out = image;
  dl4cpp::ExampleRandom after(42, 0, example);
  transform.transform(out, after);
  const uint64_t next = after.nextBits();
  dl4cpp::ExampleRandom fresh(42, 0, example);
  for (int used = 0; used <= 64; ++used)
    if (fresh.nextBits() == next) return used;
  return -1;
}

}  // namespace testutil
