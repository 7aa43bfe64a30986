#pragma once
// How much better a score is than the best so far, for the early-stopping bookkeeping and
// ScoreImprovementEpochTerminationCondition alike.
#include <cmath>
#include <limits>

namespace dl4cpp {

// Positive when `score` is better than `best`: lower when minimizing, higher otherwise. A NaN best
// (a first evaluation of a diverged model) is improved on by any number; a NaN score improves on
// nothing (the result is NaN, and every comparison with it is false).
inline double scoreImprovement(double score, double best, bool minimize) {
  if (std::isnan(best) && !std::isnan(score)) return std::numeric_limits<double>::infinity();
  return minimize ? best - score : score - best;
}

}  // namespace dl4cpp
