#pragma once
// ClassificationScoreCalculator: a classification metric of the model over a validation iterator
// (DL4J's ClassificationScoreCalculator): accuracy, or the macro-averaged F1, precision or recall
// of MultiLayerNetwork::evaluate (nn/eval/Evaluation.h). Higher is better. Every call resets the
// iterator and reads all of it; the iterator must be resettable (ConfigError otherwise) and
// outlive the calculator.
#include "iterators/DataSetIterator.h"
#include "nn/earlystopping/scorecalc/ScoreCalculator.h"

namespace dl4cpp {

class ClassificationScoreCalculator : public ScoreCalculator {
 public:
  // DL4J's Evaluation.Metric, those Evaluation computes.
  enum class Metric { ACCURACY, F1, PRECISION, RECALL };

  ClassificationScoreCalculator(Metric metric, DataSetIterator& validation);

  // DataError when the iterator yields no minibatch.
  double calculateScore(Model& model) override;
  bool minimizeScore() const override { return false; }

 private:
  Metric metric_;
  DataSetIterator& validation_;
};

}  // namespace dl4cpp
