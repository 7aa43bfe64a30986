#pragma once
// EpochTerminationCondition: decides, after each epoch of an early-stopping run, whether training
// ends (DL4J's org.deeplearning4j.earlystopping.termination.EpochTerminationCondition).
//
// Conditions keep state (the best score so far, say): initialize() starts it afresh, and every
// EarlyStoppingTrainer::fit() calls it before the first epoch. One condition object serves one run
// at a time.
#include <optional>
#include <string>

namespace dl4cpp {

class EpochTerminationCondition {
 public:
  virtual ~EpochTerminationCondition() = default;

  virtual void initialize() {}
  // Called after every epoch of the run. `epoch` counts the run's epochs from 0. `score` is the
  // score calculator's result when this epoch was evaluated (see
  // EarlyStoppingConfiguration::Builder::evaluateEveryNEpochs), and empty when it was not;
  // `minimize` says whether a lower score is better. True ends training.
  virtual bool terminate(int epoch, std::optional<double> score, bool minimize) = 0;
  // Why the condition fired, in words, after terminate() returned true:
  // "MaxEpochsTerminationCondition: 10 epochs reached".
  virtual std::string reason() const = 0;
};

}  // namespace dl4cpp
