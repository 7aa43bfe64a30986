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

void EvaluativeListener::iterationDone(const Model& model, const IterationInfo& info) {
  if (type_ == InvocationType::ITERATION_END && multiples_.reached(info.iteration))
    evaluate(model, info.iteration, info.epoch);
}

void EvaluativeListener::onEpochEnd(const Model& model, int epoch) {
  if (type_ == InvocationType::EPOCH_END && (epoch + 1) % frequency_ == 0)
    evaluate(model, model.getIterationCount(), epoch);
}

void EvaluativeListener::evaluate(const Model& model, int64_t iteration, int epoch) {
  Model& copy = evaluationCopy(model);
  startValidationPass(validation_, kName);
  ValidationResult result;
  result.iteration = iteration;
  result.epoch = epoch;
  result.evaluation = copy.evaluate(validation_);
  result.accuracy = result.evaluation.accuracy();
  results_.push_back(std::move(result));
  if (callback_) callback_(results_.back());
}

Model& EvaluativeListener::evaluationCopy(const Model& model) {
  // A listener may be moved to another model: the copy is remade when the configuration differs.
  std::string configuration = model.configurationJson();
  if (!copy_ || configuration != copyConfiguration_) {
    copy_ = model.cloneModel();
    copyConfiguration_ = std::move(configuration);
  } else {
    copy_->setParams(model.params());
    copy_->setLayerState(model.layerState());
  }
  return *copy_;
}

}  // namespace dl4cpp
