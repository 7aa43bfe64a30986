#include "nn/earlystopping/termination/MaxScoreIterationTerminationCondition.h"

#include <fmt/format.h>

#include <cmath>

#include "nn/core/Error.h"

namespace dl4cpp {

MaxScoreIterationTerminationCondition::MaxScoreIterationTerminationCondition(double maxScore)
    : maxScore_(maxScore) {
  if (std::isnan(maxScore))
    throw ConfigError("MaxScoreIterationTerminationCondition: maxScore must not be NaN");
}

bool MaxScoreIterationTerminationCondition::terminate(double lastMiniBatchScore) {
  lastScore_ = lastMiniBatchScore;
  return lastMiniBatchScore > maxScore_;
}

std::string MaxScoreIterationTerminationCondition::reason() const {
  return fmt::format("MaxScoreIterationTerminationCondition: score {} exceeds the maximum {}",
                     lastScore_, maxScore_);
}

}  // namespace dl4cpp
