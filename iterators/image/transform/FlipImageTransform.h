#pragma once
// FlipImageTransform: DataVec's FlipImageTransform. With a mode it always flips that way
// (DataVec's flipMode 1 = Horizontal, 0 = Vertical, -1 = Both); without one it picks, per example
// and with equal odds, no flip, horizontal, vertical or both (DataVec's constructor with a Random).
// MATLAB's RandXReflection / RandYReflection (a flip half of the time) are
// FlipImageTransform(FlipMode::Horizontal) / (FlipMode::Vertical) at probability 0.5 in a
// PipelineImageTransform. Flips move samples and never resample them: the result is exact.
//
// FlipImageTransform(seed) is DataVec's FlipImageTransform(rng) as a port writes it, the seed
// standing for the Random: random modes as above, each example's drawn from a stream keyed by
// the seed and the example's own draws, so a different seed flips other examples and the same one
// flips the same, whatever decodes them. An int is refused at compile time (the deleted
// constructor): DataVec's FlipImageTransform(int flipMode) is FlipImageTransform(FlipMode::...)
// here, and a mode must not silently become a seed.
#include <cstdint>
#include <optional>

#include "iterators/image/ImageTransform.h"

namespace dl4cpp {

enum class FlipMode {
  Horizontal,  // left <-> right (about the vertical axis)
  Vertical,    // top <-> bottom (about the horizontal axis)
  Both,        // both: a half turn
};

class FlipImageTransform : public ImageTransform {
 public:
  // Random: none, Horizontal, Vertical or Both, each with probability 1/4 (one draw).
  FlipImageTransform() = default;
  // Always `mode` (no draw).
  explicit FlipImageTransform(FlipMode mode) : mode_(mode) {}
  // Random, keyed by `seed` too (one draw of the example's stream, one of the keyed stream).
  explicit FlipImageTransform(uint64_t seed) : seed_(seed) {}
  explicit FlipImageTransform(int flipMode) = delete;

  void transform(Image& image, ExampleRandom& random) const override;

 private:
  std::optional<FlipMode> mode_;
  std::optional<uint64_t> seed_;
};

}  // namespace dl4cpp
