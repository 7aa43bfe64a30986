#pragma once
// DataSetLossCalculator: the model's mean loss over a validation iterator (DL4J's, with
// average = true): each minibatch's MultiLayerNetwork::score (mean loss plus the regularisation
// terms) weighted by its examples. Lower is better. Every call resets the iterator and reads all
// of it; the iterator must be resettable (ConfigError otherwise) and outlive the calculator.
#include "iterators/DataSetIterator.h"
#include "nn/earlystopping/scorecalc/ScoreCalculator.h"

namespace dl4cpp {

class DataSetLossCalculator : public ScoreCalculator {
 public:
  explicit DataSetLossCalculator(DataSetIterator& validation);

  // DataError when the iterator yields no minibatch.
  double calculateScore(Model& model) override;
  bool minimizeScore() const override { return true; }

 private:
  DataSetIterator& validation_;
};

}  // namespace dl4cpp
