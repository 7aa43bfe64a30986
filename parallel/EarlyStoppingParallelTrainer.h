#pragma once
// EarlyStoppingParallelTrainer: early stopping for data-parallel training (DL4J's
// org.deeplearning4j.parallelism.EarlyStoppingParallelTrainer), for a MultiLayerNetwork or a
// ComputationGraph (any Model ParallelWrapper trains): each epoch is one
// ParallelWrapper::fit of the model over the training iterator, then the run goes on as for one
// model (BaseEarlyStoppingTrainer.h: evaluation, best-model saving, termination, errors).
//
//   EarlyStoppingParallelTrainer trainer(conf, model, trainIterator,
//       ParallelWrapper::Builder(model).workers(2).averagingFrequency(3));
//   EarlyStoppingResult result = trainer.fit();
//
// `wrapper` is a ParallelWrapper::Builder made for `model`, with whatever settings the run wants;
// the trainer builds it (starting the workers) at construction and closes it when destroyed. Its
// listeners are replaced by the model's own followed by the trainer's (as DL4J does): they are
// called after every averaging round with the averaged model, and an iteration condition that
// fires calls ParallelWrapper::stopFit(), which ends the epoch at that round's boundary. The model
// is evaluated and saved as averaged. A builder made for another model is a ConfigError at the
// first round. `model` (initialised) and `train` must outlive the trainer.
#include "nn/earlystopping/trainer/BaseEarlyStoppingTrainer.h"
#include "parallel/ParallelWrapper.h"

namespace dl4cpp::parallel {

class EarlyStoppingParallelTrainer : public BaseEarlyStoppingTrainer {
 public:
  EarlyStoppingParallelTrainer(EarlyStoppingConfiguration conf, Model& model,
                               DataSetIterator& train, ParallelWrapper::Builder wrapper);

  // The wrapper the run trains through (its statistics() are the last epoch's).
  ParallelWrapper& wrapper() { return wrapper_; }

 protected:
  void trainEpoch(DataSetIterator& train, const Listeners& listeners) override;
  void stopEpoch() override;

 private:
  ParallelWrapper wrapper_;
};

}  // namespace dl4cpp::parallel
