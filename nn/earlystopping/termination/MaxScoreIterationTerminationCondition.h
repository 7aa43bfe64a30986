#pragma once
// MaxScoreIterationTerminationCondition: ends training when an iteration's score exceeds maxScore
// (DL4J's): a run going astray is cut short before it wastes more time.
#include "nn/earlystopping/termination/IterationTerminationCondition.h"

namespace dl4cpp {

class MaxScoreIterationTerminationCondition : public IterationTerminationCondition {
 public:
  // maxScore must not be NaN (ConfigError).
  explicit MaxScoreIterationTerminationCondition(double maxScore);

  bool terminate(double lastMiniBatchScore) override;
  std::string reason() const override;

 private:
  double maxScore_;
  double lastScore_ = 0;
};

}  // namespace dl4cpp
