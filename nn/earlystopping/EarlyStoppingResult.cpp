#include "nn/earlystopping/EarlyStoppingResult.h"

namespace dl4cpp {

std::string toString(EarlyStoppingResult::TerminationReason reason) {
  return reason == EarlyStoppingResult::TerminationReason::EpochTerminationCondition
             ? "EpochTerminationCondition"
             : "IterationTerminationCondition";
}

}  // namespace dl4cpp
