#pragma once
// IterationTerminationCondition: decides, after each iteration of an early-stopping run, whether
// training ends at once, in the middle of an epoch (DL4J's
// org.deeplearning4j.earlystopping.termination.IterationTerminationCondition). Under
// EarlyStoppingParallelTrainer an "iteration" is one ParallelWrapper averaging round, with the
// round's averaged score.
//
// Conditions keep state: initialize() starts it afresh, and every EarlyStoppingTrainer::fit()
// calls it before the first epoch. One condition object serves one run at a time.
#include <string>

namespace dl4cpp {

class IterationTerminationCondition {
 public:
  virtual ~IterationTerminationCondition() = default;

  virtual void initialize() {}
  // Called after every iteration with its score (the model's score()). A training step whose
  // score is not finite throws NumericalError and leaves the model as it was; the trainer then
  // asks the conditions with a NaN score (see EarlyStoppingTrainer.h). True ends training.
  virtual bool terminate(double lastMiniBatchScore) = 0;
  // Why the condition fired, in words, after terminate() returned true.
  virtual std::string reason() const = 0;
};

}  // namespace dl4cpp
