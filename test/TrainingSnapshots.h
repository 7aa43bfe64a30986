#pragma once
// A listener that records the model's parameters after every iteration (ParallelWrapper: every
// averaging round) and at every epoch end, for tests that check what a listener or a trainer saw.
#include <cstdint>
#include <map>
#include <vector>

#include "nn/api/TrainingListener.h"
#include "nn/multilayer/MultiLayerNetwork.h"

namespace testutil {

class ParameterSnapshots : public dl4cpp::TrainingListener {
 public:
  void iterationDone(const dl4cpp::Model& model, const dl4cpp::IterationInfo& info) override {
    atIteration[info.iteration] = model.params().toVector();
  }
  void onEpochEnd(const dl4cpp::Model& model, int epoch) override {
    atEpochEnd[epoch] = model.params().toVector();
  }

  std::map<int64_t, std::vector<float>> atIteration;
  std::map<int, std::vector<float>> atEpochEnd;
};

}  // namespace testutil
