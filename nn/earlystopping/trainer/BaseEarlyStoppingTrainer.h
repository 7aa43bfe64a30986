#pragma once
// BaseEarlyStoppingTrainer: the early-stopping run that EarlyStoppingTrainer (one model) and
// parallel::EarlyStoppingParallelTrainer (ParallelWrapper) share; they differ only in how one
// epoch is trained and how it is stopped (DL4J's BaseEarlyStoppingTrainer).
//
// fit() runs epochs 0, 1, 2, ... of the run (counted from 0 whatever the model's own epoch
// count), each:
//  1. the training iterator is reset (DataError from the second epoch on when it cannot be);
//  2. one epoch is trained. After every iteration (ParallelWrapper: every averaging round) the
//     iteration conditions see its score; the first that fires stops the epoch there, and the run
//     ends with IterationTerminationCondition, saving the latest model when saveLastModel. A
//     training step that NumericalError refuses (a non-finite score or gradient) is shown to the
//     conditions as a NaN score: when one fires (InvalidScoreIterationTerminationCondition) the run
//     ends the same way, the details holding the error's message, and the model is as it was
//     before that step; when none does, the NumericalError propagates.
//  3. when the epoch is due (evaluateEveryNEpochs) the score calculator scores the model; the
//     first score, and every strictly better one, makes this epoch the best: the model saver
//     saves it. With saveLastModel the saver also saves it as the latest.
//  4. the epoch conditions see the epoch and its score (empty when not evaluated), in order; the
//     first that fires ends the run with EpochTerminationCondition, after evaluating this epoch
//     (step 3) if it was not due, so the final model is always a candidate for the best.
//
// Exceptions (from the data, the model, the score calculator, the saver, a listener) propagate
// from fit(), unlike DL4J, which returns them as a result with reason Error: the model saver
// still holds the best model saved so far (e.g. LocalFileModelSaver's bestModel.bin).
//
// Listeners: those set on the model at fit() are called as in training, followed by the trainer's
// own iteration check.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iterators/DataSetIterator.h"
#include "nn/api/Model.h"
#include "nn/api/TrainingListener.h"
#include "nn/core/Error.h"
#include "nn/earlystopping/EarlyStoppingConfiguration.h"
#include "nn/earlystopping/EarlyStoppingResult.h"

namespace dl4cpp {

class BaseEarlyStoppingTrainer {
 public:
  virtual ~BaseEarlyStoppingTrainer() = default;
  BaseEarlyStoppingTrainer(const BaseEarlyStoppingTrainer&) = delete;
  BaseEarlyStoppingTrainer& operator=(const BaseEarlyStoppingTrainer&) = delete;

  // Trains until a termination condition fires (see the top of this file).
  EarlyStoppingResult fit();

  const EarlyStoppingConfiguration& configuration() const { return conf_; }

 protected:
  using Listeners = std::vector<std::shared_ptr<TrainingListener>>;

  // `name` prefixes error messages. `model` and `train` must outlive the trainer.
  BaseEarlyStoppingTrainer(std::string name, EarlyStoppingConfiguration conf, Model& model,
                           DataSetIterator& train);

  // Trains one epoch of the model over `train`, calling `listeners` as training calls listeners.
  virtual void trainEpoch(DataSetIterator& train, const Listeners& listeners) = 0;
  // Ends the epoch being trained at the next iteration (or round) boundary. Called from a
  // listener on the training thread.
  virtual void stopEpoch() = 0;

  Model& model() { return model_; }

 private:
  class IterationCheck;
  struct Run;

  void startEpoch(int epoch);
  // After each iteration: the first iteration condition that fires stops the epoch.
  void checkIteration(const Model& model, double score);
  // After a NumericalError from training: whether an iteration condition ends the run on it.
  bool stopsOnInvalidScore(const NumericalError& error);
  // Scores the model after `epoch`, saving it as best / latest as configured.
  double evaluate(int epoch, Run& run);
  EarlyStoppingResult finish(EarlyStoppingResult::TerminationReason reason, std::string details,
                             int totalEpochs, Run& run);

  std::string name_;
  EarlyStoppingConfiguration conf_;
  Model& model_;
  DataSetIterator& train_;
  // The reason of the iteration condition that fired in this run, if one did.
  std::optional<std::string> iterationStop_;
};

}  // namespace dl4cpp
