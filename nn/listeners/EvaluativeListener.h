#pragma once
// EvaluativeListener: evaluates the model on a validation iterator during training (DL4J's
// EvaluativeListener), every `frequency` iterations (InvocationType::ITERATION_END) or every
// `frequency` epochs (EPOCH_END), and keeps each result for the caller:
//
//   auto validation = std::make_shared<EvaluativeListener>(testIterator, 500);
//   validation->setCallback([](const ValidationResult& r) {
//     std::cout << "iteration " << r.iteration << ": accuracy " << r.accuracy << "\n";
//   });
//   model.setListeners({validation});
//   model.fit(trainIterator, 3);
//   for (const ValidationResult& r : validation->results()) ...
//
// When. ITERATION_END evaluates at every report that reaches a multiple of `frequency`
// iterations (IterationMultiples.h): every `frequency` iterations for a single model, and with
// ParallelWrapper, which reports once per averaging round of k iterations, at each round that
// crosses a multiple (k = 3, frequency = 5: after iterations 6, 12, 15, 21, ...). EPOCH_END
// evaluates at the end of every epoch whose 1-based number is a multiple of `frequency`.
//
// How. Each evaluation resets the validation iterator and evaluates all of it
// (MultiLayerNetwork::evaluate). It runs on a copy of the model kept by the listener (made by the
// first evaluation, then refreshed with the model's parameters and layer state), so training is
// untouched: not its parameters, updater state, score, counters, buffers or training iterator.
// The copy costs one more model's memory on the model's device.
//
// The validation iterator must be resettable (ConfigError otherwise), must not be the training
// iterator, and must outlive the listener. Runs on the fit() thread like every listener; an
// exception from the evaluation or the callback ends fit() with that exception.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iterators/DataSetIterator.h"
#include "nn/api/Model.h"
#include "nn/api/TrainingListener.h"
#include "nn/eval/Evaluation.h"
#include "nn/listeners/IterationMultiples.h"
#include "nn/multilayer/MultiLayerNetwork.h"

namespace dl4cpp {

// DL4J's InvocationType (EPOCH_START is not offered: it would evaluate what the previous
// EPOCH_END already did).
enum class InvocationType { ITERATION_END, EPOCH_END };

// One evaluation: when it ran and what it found.
struct ValidationResult {
  int64_t iteration = 0;  // the model's iteration count when it ran
  int epoch = 0;          // the 0-based epoch it ran in (EPOCH_END: the epoch just finished)
  double accuracy = 0;    // evaluation.accuracy()
  Evaluation evaluation;
};

class EvaluativeListener : public TrainingListener {
 public:
  // Called after each evaluation, on the fit() thread, with the result just stored.
  using Callback = std::function<void(const ValidationResult&)>;

  // frequency >= 1 (ConfigError otherwise); DL4J's default invocation is ITERATION_END.
  EvaluativeListener(DataSetIterator& validation, int frequency,
                     InvocationType type = InvocationType::ITERATION_END);

  void setCallback(Callback callback) { callback_ = std::move(callback); }

  void iterationDone(const Model& model, const IterationInfo& info) override;
  void onEpochEnd(const Model& model, int epoch) override;

  // Every evaluation so far, in order.
  const std::vector<ValidationResult>& results() const { return results_; }
  int frequency() const { return frequency_; }
  InvocationType invocationType() const { return type_; }

 private:
  void evaluate(const Model& model, int64_t iteration, int epoch);
  // The listener's copy of `model`, holding the model's current parameters and layer state.
  Model& evaluationCopy(const Model& model);

  DataSetIterator& validation_;
  int frequency_;
  InvocationType type_;
  IterationMultiples multiples_;
  Callback callback_;
  std::vector<ValidationResult> results_;
  std::unique_ptr<Model> copy_;
  std::string copyConfiguration_;  // copy_'s configuration JSON
};

}  // namespace dl4cpp
