#pragma once
// FlipImageTransform: DataVec's FlipImageTransform. With a mode it always flips that way
// (DataVec's flipMode 1 = Horizontal, 0 = Vertical, -1 = Both); without one it picks, per example
// and with equal odds, no flip, horizontal, vertical or both (DataVec's constructor with a Random).
// MATLAB's RandXReflection / RandYReflection (a flip half of the time) are
// FlipImageTransform(FlipMode::Horizontal) / (FlipMode::Vertical) at probability 0.5 in a
// PipelineImageTransform. Flips move samples and never resample them: the result is exact.
#include <dl4cpp/iterators/image/ImageTransform.h>

#include <optional>

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

  void transform(Image& image, ExampleRandom& random) const override;

 private:
  std::optional<FlipMode> mode_;
};

}  // namespace dl4cpp
