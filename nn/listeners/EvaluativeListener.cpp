#include "nn/listeners/EvaluativeListener.h"

#include <fmt/format.h>

#include "nn/core/Error.h"
#include "nn/eval/ValidationIterator.h"

namespace dl4cpp {

namespace {
constexpr const char* kName = "EvaluativeListener";
}

EvaluativeListener::EvaluativeListener(DataSetIterator& validation, int frequency,
                                       InvocationType type)
    : validation_(validation), frequency_(frequency), type_(type), multiples_(frequency) {
  if (frequency < 1)
    throw ConfigError(fmt::format("{}: frequency must be >= 1, got {}", kName, frequency));
  requireResettable(validation, kName);
}

void EvaluativeListener::iterationDone(const MultiLayerNetwork& model, const IterationInfo& info) {
  if (type_ == InvocationType::ITERATION_END && multiples_.reached(info.iteration))
    evaluate(model, info.iteration, info.epoch);
}

void EvaluativeListener::onEpochEnd(const MultiLayerNetwork& model, int epoch) {
  if (type_ == InvocationType::EPOCH_END && (epoch + 1) % frequency_ == 0)
    evaluate(model, model.getIterationCount(), epoch);
}

void EvaluativeListener::evaluate(const MultiLayerNetwork& model, int64_t iteration, int epoch) {
  MultiLayerNetwork& copy = evaluationCopy(model);
  startValidationPass(validation_, kName);
  ValidationResult result;
  result.iteration = iteration;
  result.epoch = epoch;
  result.evaluation = copy.evaluate(validation_);
  result.accuracy = result.evaluation.accuracy();
  results_.push_back(std::move(result));
  if (callback_) callback_(results_.back());
}

MultiLayerNetwork& EvaluativeListener::evaluationCopy(const MultiLayerNetwork& model) {
  // A listener may be moved to another model: the copy is remade when the configuration differs.
  if (!copy_ || !(copy_->getConfiguration() == model.getConfiguration())) {
    copy_.emplace(model.clone());
  } else {
    copy_->setParams(model.params());
    copy_->setLayerState(model.layerState());
  }
  return *copy_;
}

}  // namespace dl4cpp
