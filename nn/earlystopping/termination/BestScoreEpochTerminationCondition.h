#pragma once
// BestScoreEpochTerminationCondition: ends training once an evaluated epoch's score is better than
// bestExpectedScore (DL4J's): below it when minimizing, above it otherwise. A target reached.
#include "nn/earlystopping/termination/EpochTerminationCondition.h"

namespace dl4cpp {

class BestScoreEpochTerminationCondition : public EpochTerminationCondition {
 public:
  // bestExpectedScore must not be NaN (ConfigError).
  explicit BestScoreEpochTerminationCondition(double bestExpectedScore);

  bool terminate(int epoch, std::optional<double> score, bool minimize) override;
  std::string reason() const override;

 private:
  double target_;
  double lastScore_ = 0;
  int lastEpoch_ = -1;
};

}  // namespace dl4cpp
