#pragma once
// EarlyStoppingTrainer: trains one model with early stopping (DL4J's
// org.deeplearning4j.earlystopping.trainer.EarlyStoppingTrainer):
//
//   EarlyStoppingTrainer trainer(conf, model, trainIterator);  // conf: EarlyStoppingConfiguration
//   EarlyStoppingResult result = trainer.fit();
//   std::cout << toString(result.terminationReason) << ": " << result.terminationDetails << "\n";
//   MultiLayerNetwork& best = result.getBestModel();      // getBestModel<ComputationGraph>()
//
// `model` is any Model: a MultiLayerNetwork or a ComputationGraph (DL4J's EarlyStoppingTrainer and
// EarlyStoppingGraphTrainer in one). Each epoch is the model's fit(trainIterator) with its
// listeners; an iteration
// condition stops it at once. The run, its result and its errors: BaseEarlyStoppingTrainer.h.
// `model` (initialised) and `train` must outlive the trainer; `model` is trained in place and ends
// as the last epoch left it, which need not be the best model.
#include "nn/earlystopping/trainer/BaseEarlyStoppingTrainer.h"

namespace dl4cpp {

class EarlyStoppingTrainer : public BaseEarlyStoppingTrainer {
 public:
  EarlyStoppingTrainer(EarlyStoppingConfiguration conf, Model& model, DataSetIterator& train);

 protected:
  void trainEpoch(DataSetIterator& train, const Listeners& listeners) override;
  void stopEpoch() override;
};

}  // namespace dl4cpp
