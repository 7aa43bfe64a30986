#pragma once
// InvalidScoreIterationTerminationCondition: ends training when the score is NaN or infinite
// (DL4J's): training diverged. See IterationTerminationCondition.h for how a diverged step, which
// the model refuses with NumericalError, reaches it.
#include "nn/earlystopping/termination/IterationTerminationCondition.h"

namespace dl4cpp {

class InvalidScoreIterationTerminationCondition : public IterationTerminationCondition {
 public:
  bool terminate(double lastMiniBatchScore) override;
  std::string reason() const override;

 private:
  double lastScore_ = 0;
};

}  // namespace dl4cpp
