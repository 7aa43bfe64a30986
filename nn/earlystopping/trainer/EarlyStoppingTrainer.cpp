#include "nn/earlystopping/trainer/EarlyStoppingTrainer.h"

#include <exception>

namespace dl4cpp {

namespace {
// Thrown by stopEpoch() from the trainer's listener, through the model's fit (which ends on
// a listener's exception, leaving the model as the last iteration made it), to trainEpoch().
struct StopEpoch : std::exception {
  const char* what() const noexcept override { return "early stopping ends the epoch"; }
};

// Gives the model back its own listeners however the epoch ends.
class ListenersRestorer {
 public:
  explicit ListenersRestorer(Model& model) : model_(model), own_(model.getListeners()) {}
  ~ListenersRestorer() { model_.setListeners(std::move(own_)); }
  ListenersRestorer(const ListenersRestorer&) = delete;
  ListenersRestorer& operator=(const ListenersRestorer&) = delete;

 private:
  Model& model_;
  std::vector<std::shared_ptr<TrainingListener>> own_;
};
}  // namespace

EarlyStoppingTrainer::EarlyStoppingTrainer(EarlyStoppingConfiguration conf, Model& model,
                                           DataSetIterator& train)
    : BaseEarlyStoppingTrainer("EarlyStoppingTrainer", std::move(conf), model, train) {}

void EarlyStoppingTrainer::trainEpoch(DataSetIterator& train, const Listeners& listeners) {
  const ListenersRestorer restorer(model());
  model().setListeners(listeners);
  try {
    model().fit(train);
  } catch (const StopEpoch&) {
    // An iteration condition fired; the base trainer knows which.
  }
}

void EarlyStoppingTrainer::stopEpoch() { throw StopEpoch{}; }

}  // namespace dl4cpp
