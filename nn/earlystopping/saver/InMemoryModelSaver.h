#pragma once
// InMemoryModelSaver: keeps the best and latest models as copies in memory (DL4J's), on the
// device of the model saved (Model::cloneModel: parameters, updater state, layer state and
// counters). The getters return further copies, so the saver keeps its own. The default saver of
// EarlyStoppingConfiguration.
#include "nn/earlystopping/saver/EarlyStoppingModelSaver.h"

namespace dl4cpp {

class InMemoryModelSaver : public EarlyStoppingModelSaver {
 public:
  void saveBestModel(const Model& model) override { best_ = model.cloneModel(); }
  void saveLatestModel(const Model& model) override { latest_ = model.cloneModel(); }
  std::unique_ptr<Model> getBestModel() override { return copyOf(best_); }
  std::unique_ptr<Model> getLatestModel() override { return copyOf(latest_); }

 private:
  static std::unique_ptr<Model> copyOf(const std::unique_ptr<Model>& model) {
    return model ? model->cloneModel() : nullptr;
  }
  std::unique_ptr<Model> best_, latest_;
};

}  // namespace dl4cpp
