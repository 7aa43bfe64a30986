#pragma once
// ScoreImprovementEpochTerminationCondition: ends training when the score has not improved for
// maxEpochsWithNoImprovement epochs (DL4J's; "patience"). An evaluated epoch improves on the best
// score so far when it is better by more than minImprovement (lower when minimizing, higher
// otherwise); the first evaluated epoch sets the best, and a NaN best is replaced by any number.
// The condition fires at an evaluated epoch e when e - (epoch of the best) >=
// maxEpochsWithNoImprovement; epochs count whether evaluated or not, and unevaluated epochs never
// fire it.
#include "nn/earlystopping/termination/EpochTerminationCondition.h"

namespace dl4cpp {

class ScoreImprovementEpochTerminationCondition : public EpochTerminationCondition {
 public:
  // maxEpochsWithNoImprovement >= 1 and minImprovement finite and >= 0, else ConfigError.
  explicit ScoreImprovementEpochTerminationCondition(int maxEpochsWithNoImprovement,
                                                     double minImprovement = 0);

  void initialize() override;
  bool terminate(int epoch, std::optional<double> score, bool minimize) override;
  std::string reason() const override;

 private:
  int patience_;
  double minImprovement_;
  int bestEpoch_ = -1;  // -1: no evaluated epoch yet
  double bestScore_ = 0;
  int lastEpoch_ = -1;
};

}  // namespace dl4cpp
