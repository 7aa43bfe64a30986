#pragma once
// ScoreCalculator: the score of a model at the end of an evaluated epoch of an early-stopping run
// (DL4J's org.deeplearning4j.earlystopping.scorecalc.ScoreCalculator), usually on held-out data.
// It takes any Model: a MultiLayerNetwork or a ComputationGraph.
// The best model is the one with the best score: the lowest when minimizeScore(), else the highest.
namespace dl4cpp {

class Model;

class ScoreCalculator {
 public:
  virtual ~ScoreCalculator() = default;

  // Must not change the model's parameters, updater state or counters; it may use the model's
  // forward-pass buffers (the trainer calls it between epochs).
  virtual double calculateScore(Model& model) = 0;
  // True when a lower score is better (a loss), false when a higher one is (an accuracy).
  virtual bool minimizeScore() const = 0;
};

}  // namespace dl4cpp
