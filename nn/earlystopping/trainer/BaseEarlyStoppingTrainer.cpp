#include "nn/earlystopping/trainer/BaseEarlyStoppingTrainer.h"

#include <fmt/format.h>

#include <limits>
#include <map>

#include "nn/earlystopping/ScoreImprovement.h"

namespace dl4cpp {

// The trainer's listener: the iteration conditions after every iteration (or round).
class BaseEarlyStoppingTrainer::IterationCheck : public TrainingListener {
 public:
  explicit IterationCheck(BaseEarlyStoppingTrainer& trainer) : trainer_(trainer) {}
  void iterationDone(const Model& model, const IterationInfo& info) override {
    trainer_.checkIteration(model, info.score);
  }

 private:
  BaseEarlyStoppingTrainer& trainer_;
};

// What the run has evaluated so far.
struct BaseEarlyStoppingTrainer::Run {
  std::map<int, double> scores;
  int bestEpoch = -1;
  double bestScore = std::numeric_limits<double>::quiet_NaN();
};

BaseEarlyStoppingTrainer::BaseEarlyStoppingTrainer(std::string name,
                                                   EarlyStoppingConfiguration conf, Model& model,
                                                   DataSetIterator& train)
    : name_(std::move(name)), conf_(std::move(conf)), model_(model), train_(train) {}

EarlyStoppingResult BaseEarlyStoppingTrainer::fit() {
  using Reason = EarlyStoppingResult::TerminationReason;
  for (const auto& c : conf_.epochTerminationConditions()) c->initialize();
  for (const auto& c : conf_.iterationTerminationConditions()) c->initialize();
  iterationStop_.reset();
  Listeners listeners = model_.getListeners();
  listeners.push_back(std::make_shared<IterationCheck>(*this));
  const bool minimize = conf_.scoreCalculator().minimizeScore();
  Run run;
  for (int epoch = 0;; ++epoch) {
    startEpoch(epoch);
    try {
      trainEpoch(train_, listeners);
    } catch (const NumericalError& error) {
      if (!stopsOnInvalidScore(error)) throw;
    }
    if (iterationStop_) {
      if (conf_.saveLastModel()) conf_.modelSaver().saveLatestModel(model_);
      return finish(Reason::IterationTerminationCondition, *iterationStop_, epoch, run);
    }
    const bool due = (epoch + 1) % conf_.evaluateEveryNEpochs() == 0;
    std::optional<double> score;
    if (due) score = evaluate(epoch, run);
    for (const auto& c : conf_.epochTerminationConditions()) {
      if (!c->terminate(epoch, score, minimize)) continue;
      if (!due) evaluate(epoch, run);
      return finish(Reason::EpochTerminationCondition, c->reason(), epoch + 1, run);
    }
  }
}

void BaseEarlyStoppingTrainer::startEpoch(int epoch) {
  if (train_.resetSupported())
    train_.reset();
  else if (epoch > 0)
    throw DataError(name_ +
                    ": the training iterator cannot be reset, so it cannot serve more than one "
                    "epoch");
}

void BaseEarlyStoppingTrainer::checkIteration(const Model& model, double score) {
  if (&model != &model_)
    throw ConfigError(name_ +
                      ": training reports a model other than the trainer's (was the "
                      "ParallelWrapper::Builder made for another model?)");
  if (iterationStop_) return;  // stopping already: the epoch ends at the next boundary
  for (const auto& c : conf_.iterationTerminationConditions()) {
    if (!c->terminate(score)) continue;
    iterationStop_ = c->reason();
    stopEpoch();
    return;
  }
}

bool BaseEarlyStoppingTrainer::stopsOnInvalidScore(const NumericalError& error) {
  for (const auto& c : conf_.iterationTerminationConditions()) {
    if (!c->terminate(std::numeric_limits<double>::quiet_NaN())) continue;
    iterationStop_ = fmt::format("{} ({})", c->reason(), error.what());
    return true;
  }
  return false;
}

double BaseEarlyStoppingTrainer::evaluate(int epoch, Run& run) {
  const double score = conf_.scoreCalculator().calculateScore(model_);
  run.scores[epoch] = score;
  const bool minimize = conf_.scoreCalculator().minimizeScore();
  if (run.bestEpoch < 0 || scoreImprovement(score, run.bestScore, minimize) > 0) {
    run.bestEpoch = epoch;
    run.bestScore = score;
    conf_.modelSaver().saveBestModel(model_);
  }
  if (conf_.saveLastModel()) conf_.modelSaver().saveLatestModel(model_);
  return score;
}

EarlyStoppingResult BaseEarlyStoppingTrainer::finish(EarlyStoppingResult::TerminationReason reason,
                                                     std::string details, int totalEpochs,
                                                     Run& run) {
  // Only a best model this run saved: a LocalFileModelSaver's directory may hold an older one.
  std::unique_ptr<Model> best;
  if (run.bestEpoch >= 0) {
    best = conf_.modelSaver().getBestModel();
    if (!best)
      throw Error(name_ + ": the model saver returned no best model, though one was saved");
  } else {
    best = model_.cloneModel();
  }
  return EarlyStoppingResult{reason,         std::move(details), std::move(run.scores),
                             run.bestEpoch,  run.bestScore,      totalEpochs,
                             std::move(best)};
}

}  // namespace dl4cpp
