#pragma once
// EarlyStoppingModelSaver: where an early-stopping run keeps the best model and, when asked
// (EarlyStoppingConfiguration saveLastModel), the latest one (DL4J's
// org.deeplearning4j.earlystopping.EarlyStoppingModelSaver). InMemoryModelSaver keeps copies,
// LocalFileModelSaver writes model files.
#include <optional>

#include "nn/multilayer/MultiLayerNetwork.h"

namespace dl4cpp {

class EarlyStoppingModelSaver {
 public:
  virtual ~EarlyStoppingModelSaver() = default;

  virtual void saveBestModel(const MultiLayerNetwork& model) = 0;
  virtual void saveLatestModel(const MultiLayerNetwork& model) = 0;
  // The model last saved as best / latest, or empty when there is none.
  virtual std::optional<MultiLayerNetwork> getBestModel() = 0;
  virtual std::optional<MultiLayerNetwork> getLatestModel() = 0;
};

}  // namespace dl4cpp
