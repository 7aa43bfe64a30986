#include "nn/earlystopping/termination/BestScoreEpochTerminationCondition.h"

#include <fmt/format.h>

#include <cmath>

#include "nn/core/Error.h"

namespace dl4cpp {

BestScoreEpochTerminationCondition::BestScoreEpochTerminationCondition(double bestExpectedScore)
    : target_(bestExpectedScore) {
  if (std::isnan(bestExpectedScore))
    throw ConfigError("BestScoreEpochTerminationCondition: bestExpectedScore must not be NaN");
}

bool BestScoreEpochTerminationCondition::terminate(int epoch, std::optional<double> score,
                                                   bool minimize) {
  if (!score) return false;
  lastScore_ = *score;
  lastEpoch_ = epoch;
  return minimize ? *score < target_ : *score > target_;
}

std::string BestScoreEpochTerminationCondition::reason() const {
  return fmt::format(
      "BestScoreEpochTerminationCondition: score {} at epoch {} is better than the target {}",
      lastScore_, lastEpoch_, target_);
}

}  // namespace dl4cpp
