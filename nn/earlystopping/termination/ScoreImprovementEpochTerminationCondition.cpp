#include "nn/earlystopping/termination/ScoreImprovementEpochTerminationCondition.h"

#include <fmt/format.h>

#include <cmath>

#include "nn/core/Error.h"
#include "nn/earlystopping/ScoreImprovement.h"

namespace dl4cpp {

ScoreImprovementEpochTerminationCondition::ScoreImprovementEpochTerminationCondition(
    int maxEpochsWithNoImprovement, double minImprovement)
    : patience_(maxEpochsWithNoImprovement), minImprovement_(minImprovement) {
  if (maxEpochsWithNoImprovement < 1)
    throw ConfigError(fmt::format(
        "ScoreImprovementEpochTerminationCondition: maxEpochsWithNoImprovement must be >= 1, "
        "got {}",
        maxEpochsWithNoImprovement));
  if (!std::isfinite(minImprovement) || minImprovement < 0)
    throw ConfigError(fmt::format(
        "ScoreImprovementEpochTerminationCondition: minImprovement must be finite and >= 0, got {}",
        minImprovement));
}

void ScoreImprovementEpochTerminationCondition::initialize() {
  bestEpoch_ = -1;
  bestScore_ = 0;
  lastEpoch_ = -1;
}

bool ScoreImprovementEpochTerminationCondition::terminate(int epoch, std::optional<double> score,
                                                          bool minimize) {
  if (!score) return false;
  lastEpoch_ = epoch;
  if (bestEpoch_ < 0 || scoreImprovement(*score, bestScore_, minimize) > minImprovement_) {
    bestEpoch_ = epoch;
    bestScore_ = *score;
    return false;
  }
  return epoch - bestEpoch_ >= patience_;
}

std::string ScoreImprovementEpochTerminationCondition::reason() const {
  const std::string byMore =
      minImprovement_ > 0 ? fmt::format(" greater than {}", minImprovement_) : std::string();
  const int epochs = lastEpoch_ - bestEpoch_;
  return fmt::format(
      "ScoreImprovementEpochTerminationCondition: no improvement{} for {} epoch{} (best score {} "
      "at epoch {})",
      byMore, epochs, epochs == 1 ? "" : "s", bestScore_, bestEpoch_);
}

}  // namespace dl4cpp
