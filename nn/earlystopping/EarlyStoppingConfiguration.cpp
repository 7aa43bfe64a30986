#include "nn/earlystopping/EarlyStoppingConfiguration.h"

#include <fmt/format.h>

#include "nn/core/Error.h"
#include "nn/earlystopping/saver/InMemoryModelSaver.h"

namespace dl4cpp {

namespace {
template <typename Condition>
void requireNoNull(const std::vector<std::shared_ptr<Condition>>& conditions, const char* what) {
  for (size_t i = 0; i < conditions.size(); ++i)
    if (!conditions[i])
      throw ConfigError(fmt::format("EarlyStoppingConfiguration: {}[{}] is null", what, i));
}
}  // namespace

EarlyStoppingConfiguration::Builder::Builder() {
  conf_.modelSaver_ = std::make_shared<InMemoryModelSaver>();
}

EarlyStoppingConfiguration EarlyStoppingConfiguration::Builder::build() const {
  if (conf_.epochConditions_.empty() && conf_.iterationConditions_.empty())
    throw ConfigError(
        "EarlyStoppingConfiguration: no termination condition: training would never end (give "
        "epochTerminationConditions, e.g. MaxEpochsTerminationCondition, or "
        "iterationTerminationConditions)");
  requireNoNull(conf_.epochConditions_, "epochTerminationConditions");
  requireNoNull(conf_.iterationConditions_, "iterationTerminationConditions");
  if (!conf_.scoreCalculator_)
    throw ConfigError(
        "EarlyStoppingConfiguration: the scoreCalculator is null (give one, e.g. "
        "DataSetLossCalculator over a validation iterator)");
  if (!conf_.modelSaver_) throw ConfigError("EarlyStoppingConfiguration: the modelSaver is null");
  if (conf_.evaluateEveryNEpochs_ < 1)
    throw ConfigError(
        fmt::format("EarlyStoppingConfiguration: evaluateEveryNEpochs must be >= 1, got {}",
                    conf_.evaluateEveryNEpochs_));
  return conf_;
}

}  // namespace dl4cpp
