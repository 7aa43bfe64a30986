#pragma once
// EarlyStoppingResult: how an early-stopping run ended and what it kept (DL4J's
// org.deeplearning4j.earlystopping.EarlyStoppingResult).
//
// DL4J also has a TerminationReason Error, returned in place of an exception thrown by training;
// here exceptions propagate from EarlyStoppingTrainer::fit() instead (see EarlyStoppingTrainer.h),
// so every result is a run that ended as configured.
#include <map>
#include <memory>
#include <string>

#include "nn/api/Model.h"
#include "nn/core/Error.h"
#include "nn/multilayer/MultiLayerNetwork.h"

namespace dl4cpp {

struct EarlyStoppingResult {
  enum class TerminationReason { EpochTerminationCondition, IterationTerminationCondition };

  TerminationReason terminationReason;
  // Which condition fired and why, in words: "ScoreImprovementEpochTerminationCondition: no
  // improvement for 3 epochs (best score 0.215 at epoch 6)".
  std::string terminationDetails;
  // The score of every evaluated epoch, by 0-based epoch of the run.
  std::map<int, double> scoreVsEpoch;
  // The epoch whose model is bestModel and its score; -1 and NaN when no epoch was evaluated
  // (an iteration condition ended the run first).
  int bestModelEpoch = -1;
  double bestModelScore = 0;
  // Epochs completed; an epoch cut short by an iteration condition does not count.
  int totalEpochs = 0;
  // The best epoch's model, as the model saver returns it; when no epoch was evaluated, a copy of
  // the model as training left it (as DL4J does). Of the kind trained: getBestModel<M>() gives it
  // as that type.
  std::shared_ptr<Model> bestModel;

  // DL4J's getBestModel(): the best model as a MultiLayerNetwork or ComputationGraph (the kind
  // trained; ConfigError for the other).
  template <typename M = MultiLayerNetwork>
  M& getBestModel() const {
    auto* model = dynamic_cast<M*>(bestModel.get());
    if (model == nullptr)
      throw ConfigError(
          "EarlyStoppingResult::getBestModel: the best model is not of the type asked for (a "
          "network's run gives a MultiLayerNetwork, a graph's a ComputationGraph)");
    return *model;
  }
};

// "EpochTerminationCondition" / "IterationTerminationCondition".
std::string toString(EarlyStoppingResult::TerminationReason reason);

}  // namespace dl4cpp
