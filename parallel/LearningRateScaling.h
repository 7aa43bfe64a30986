#pragma once
// Learning-rate scaling by worker count, for ParallelWrapper (Builder::learningRateScaling).
//
// N workers that average every k iterations take N times fewer steps per epoch than one model on
// the same minibatches, each step averaging N workers' progress. Scaling every worker's learning
// rate by N (LINEAR: Goyal et al., "Accurate, Large Minibatch SGD", 2017) or by sqrt(N) (SQRT:
// the variance-preserving rule, gentler for adaptive updaters) lets the averaged model cover the
// distance one model would. A large rate early in training diverges, so the multiplier ramps up
// linearly from 1 over warmupIterations (Goyal et al.'s gradual warm-up); it multiplies whatever
// the layers' schedules give.
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace dl4cpp::parallel {

enum class LearningRateScaling { NONE, LINEAR, SQRT };

inline const char* learningRateScalingName(LearningRateScaling rule) {
  switch (rule) {
    case LearningRateScaling::LINEAR:
      return "LINEAR";
    case LearningRateScaling::SQRT:
      return "SQRT";
    case LearningRateScaling::NONE:
      break;
  }
  return "NONE";
}

// The multiplier at global iteration `iteration` (counted from 0) for `workers` workers: 1 at
// iteration 0, rising linearly to the full factor at iteration warmupIterations and after.
inline double learningRateScaleAt(LearningRateScaling rule, int workers, int64_t warmupIterations,
                                  int64_t iteration) {
  const double n = static_cast<double>(workers);
  const double full = rule == LearningRateScaling::LINEAR ? n
                      : rule == LearningRateScaling::SQRT ? std::sqrt(n)
                                                          : 1.0;
  if (warmupIterations <= 0 || iteration >= warmupIterations) return full;
  const double progress =
      static_cast<double>(std::max<int64_t>(iteration, 0)) / static_cast<double>(warmupIterations);
  return 1.0 + (full - 1.0) * progress;
}

}  // namespace dl4cpp::parallel
