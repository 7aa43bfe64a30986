#pragma once
// EarlyStoppingModelSaver: where an early-stopping run keeps the best model and, when asked
// (EarlyStoppingConfiguration saveLastModel), the latest one (DL4J's
// org.deeplearning4j.earlystopping.EarlyStoppingModelSaver). InMemoryModelSaver keeps copies,
// LocalFileModelSaver writes model files. They keep
// either kind of Model (MultiLayerNetwork, ComputationGraph), as the trainer gives it.
#include <memory>

#include "nn/api/Model.h"

namespace dl4cpp {

class EarlyStoppingModelSaver {
 public:
  virtual ~EarlyStoppingModelSaver() = default;

  virtual void saveBestModel(const Model& model) = 0;
  virtual void saveLatestModel(const Model& model) = 0;
  // The model last saved as best / latest (of the kind saved), or null when there is none.
  virtual std::unique_ptr<Model> getBestModel() = 0;
  virtual std::unique_ptr<Model> getLatestModel() = 0;
};

}  // namespace dl4cpp
