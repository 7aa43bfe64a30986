#pragma once
// EarlyStoppingConfiguration: what an early-stopping run checks and keeps (DL4J's
// org.deeplearning4j.earlystopping.EarlyStoppingConfiguration):
//
//   auto conf = EarlyStoppingConfiguration::Builder()
//       .epochTerminationConditions({std::make_shared<MaxEpochsTerminationCondition>(50),
//                                    std::make_shared<ScoreImprovementEpochTerminationCondition>(5)})
//       .iterationTerminationConditions(
//           {std::make_shared<MaxTimeIterationTerminationCondition>(std::chrono::minutes(20))})
//       .scoreCalculator(std::make_shared<DataSetLossCalculator>(validationIterator))
//       .evaluateEveryNEpochs(1)
//       .modelSaver(std::make_shared<LocalFileModelSaver>("early-stopping"))
//       .build();
//
// build() checks the whole configuration and throws ConfigError naming what is wrong: no
// termination condition at all (training would never end), a null condition, score calculator or
// model saver, evaluateEveryNEpochs < 1. The model saver defaults to an InMemoryModelSaver.
// Conditions, calculator and saver are shared, not copied: one configuration serves one run at a
// time (conditions keep state, see EpochTerminationCondition.h).
#include <memory>
#include <vector>

#include "nn/earlystopping/saver/EarlyStoppingModelSaver.h"
#include "nn/earlystopping/scorecalc/ScoreCalculator.h"
#include "nn/earlystopping/termination/EpochTerminationCondition.h"
#include "nn/earlystopping/termination/IterationTerminationCondition.h"

namespace dl4cpp {

class EarlyStoppingConfiguration {
 public:
  class Builder;

  const std::vector<std::shared_ptr<EpochTerminationCondition>>& epochTerminationConditions()
      const {
    return epochConditions_;
  }
  const std::vector<std::shared_ptr<IterationTerminationCondition>>&
  iterationTerminationConditions() const {
    return iterationConditions_;
  }
  ScoreCalculator& scoreCalculator() const { return *scoreCalculator_; }
  EarlyStoppingModelSaver& modelSaver() const { return *modelSaver_; }
  // Epochs e (0-based) with (e + 1) % evaluateEveryNEpochs() == 0 are evaluated, and so is the
  // epoch that ends the run.
  int evaluateEveryNEpochs() const { return evaluateEveryNEpochs_; }
  // Whether the latest model is saved too: at every evaluation and when an iteration condition
  // ends the run.
  bool saveLastModel() const { return saveLastModel_; }

 private:
  EarlyStoppingConfiguration() = default;

  std::vector<std::shared_ptr<EpochTerminationCondition>> epochConditions_;
  std::vector<std::shared_ptr<IterationTerminationCondition>> iterationConditions_;
  std::shared_ptr<ScoreCalculator> scoreCalculator_;
  std::shared_ptr<EarlyStoppingModelSaver> modelSaver_;
  int evaluateEveryNEpochs_ = 1;
  bool saveLastModel_ = false;
};

class EarlyStoppingConfiguration::Builder {
 public:
  Builder();

  Builder& epochTerminationConditions(
      std::vector<std::shared_ptr<EpochTerminationCondition>> conditions) {
    conf_.epochConditions_ = std::move(conditions);
    return *this;
  }
  Builder& iterationTerminationConditions(
      std::vector<std::shared_ptr<IterationTerminationCondition>> conditions) {
    conf_.iterationConditions_ = std::move(conditions);
    return *this;
  }
  Builder& scoreCalculator(std::shared_ptr<ScoreCalculator> calculator) {
    conf_.scoreCalculator_ = std::move(calculator);
    return *this;
  }
  Builder& modelSaver(std::shared_ptr<EarlyStoppingModelSaver> saver) {
    conf_.modelSaver_ = std::move(saver);
    return *this;
  }
  Builder& evaluateEveryNEpochs(int n) {
    conf_.evaluateEveryNEpochs_ = n;
    return *this;
  }
  Builder& saveLastModel(bool save) {
    conf_.saveLastModel_ = save;
    return *this;
  }

  // Validates (see the top of this file).
  EarlyStoppingConfiguration build() const;

 private:
  EarlyStoppingConfiguration conf_;
};

}  // namespace dl4cpp
