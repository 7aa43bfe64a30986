#pragma once
// MaxEpochsTerminationCondition: ends training after maxEpochs epochs (DL4J's), evaluated or not.
#include "nn/earlystopping/termination/EpochTerminationCondition.h"

namespace dl4cpp {

class MaxEpochsTerminationCondition : public EpochTerminationCondition {
 public:
  // maxEpochs >= 1, else ConfigError.
  explicit MaxEpochsTerminationCondition(int maxEpochs);

  bool terminate(int epoch, std::optional<double> score, bool minimize) override;
  std::string reason() const override;

  int maxEpochs() const { return maxEpochs_; }

 private:
  int maxEpochs_;
};

}  // namespace dl4cpp
