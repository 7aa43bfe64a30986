#include "nn/earlystopping/termination/InvalidScoreIterationTerminationCondition.h"

#include <fmt/format.h>

#include <cmath>

namespace dl4cpp {

bool InvalidScoreIterationTerminationCondition::terminate(double lastMiniBatchScore) {
  lastScore_ = lastMiniBatchScore;
  return !std::isfinite(lastMiniBatchScore);
}

std::string InvalidScoreIterationTerminationCondition::reason() const {
  return fmt::format("InvalidScoreIterationTerminationCondition: score is {}", lastScore_);
}

}  // namespace dl4cpp
