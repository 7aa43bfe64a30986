#pragma once
// InMemoryModelSaver: keeps the best and latest models as copies in memory (DL4J's), on the
// device of the model saved (MultiLayerNetwork::clone: parameters, updater state, layer state and
// counters). The getters return further copies, so the saver keeps its own. The default saver of
// EarlyStoppingConfiguration.
#include "nn/earlystopping/saver/EarlyStoppingModelSaver.h"

namespace dl4cpp {

class InMemoryModelSaver : public EarlyStoppingModelSaver {
 public:
  void saveBestModel(const MultiLayerNetwork& model) override { best_.emplace(model.clone()); }
  void saveLatestModel(const MultiLayerNetwork& model) override { latest_.emplace(model.clone()); }
  std::optional<MultiLayerNetwork> getBestModel() override { return copyOf(best_); }
  std::optional<MultiLayerNetwork> getLatestModel() override { return copyOf(latest_); }

 private:
  static std::optional<MultiLayerNetwork> copyOf(const std::optional<MultiLayerNetwork>& model) {
    if (!model) return std::nullopt;
    return model->clone();
  }

  std::optional<MultiLayerNetwork> best_, latest_;
};

}  // namespace dl4cpp
