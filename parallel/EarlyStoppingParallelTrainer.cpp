#include "parallel/EarlyStoppingParallelTrainer.h"

namespace dl4cpp::parallel {

EarlyStoppingParallelTrainer::EarlyStoppingParallelTrainer(EarlyStoppingConfiguration conf,
                                                           Model& model, DataSetIterator& train,
                                                           ParallelWrapper::Builder wrapper)
    : BaseEarlyStoppingTrainer("EarlyStoppingParallelTrainer", std::move(conf), model, train),
      wrapper_(wrapper.build()) {}

void EarlyStoppingParallelTrainer::trainEpoch(DataSetIterator& train, const Listeners& listeners) {
  wrapper_.setListeners(listeners);
  wrapper_.fit(train);
}

void EarlyStoppingParallelTrainer::stopEpoch() { wrapper_.stopFit(); }

}  // namespace dl4cpp::parallel
