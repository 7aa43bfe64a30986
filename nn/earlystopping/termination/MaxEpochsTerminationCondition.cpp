#include "nn/earlystopping/termination/MaxEpochsTerminationCondition.h"

#include <fmt/format.h>

#include "nn/core/Error.h"

namespace dl4cpp {

MaxEpochsTerminationCondition::MaxEpochsTerminationCondition(int maxEpochs)
    : maxEpochs_(maxEpochs) {
  if (maxEpochs < 1)
    throw ConfigError(
        fmt::format("MaxEpochsTerminationCondition: maxEpochs must be >= 1, got {}", maxEpochs));
}

bool MaxEpochsTerminationCondition::terminate(int epoch, std::optional<double> score,
                                              bool minimize) {
  (void)score;
  (void)minimize;
  return epoch + 1 >= maxEpochs_;
}

std::string MaxEpochsTerminationCondition::reason() const {
  return fmt::format("MaxEpochsTerminationCondition: {} epochs reached", maxEpochs_);
}

}  // namespace dl4cpp
