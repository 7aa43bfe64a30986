#include "nn/earlystopping/scorecalc/ClassificationScoreCalculator.h"

#include <fmt/format.h>

#include "nn/api/Model.h"
#include "nn/core/Error.h"
#include "nn/eval/ValidationIterator.h"

namespace dl4cpp {

namespace {
constexpr const char* kName = "ClassificationScoreCalculator";
}

ClassificationScoreCalculator::ClassificationScoreCalculator(Metric metric,
                                                             DataSetIterator& validation)
    : metric_(metric), validation_(validation) {
  requireResettable(validation, kName);
}

double ClassificationScoreCalculator::calculateScore(Model& model) {
  startValidationPass(validation_, kName);
  const Evaluation eval = model.evaluate(validation_);
  switch (metric_) {
    case Metric::ACCURACY:
      return eval.accuracy();
    case Metric::F1:
      return eval.f1();
    case Metric::PRECISION:
      return eval.precision();
    case Metric::RECALL:
      return eval.recall();
  }
  throw ConfigError(fmt::format("{}: unknown metric {}", kName, static_cast<int>(metric_)));
}

}  // namespace dl4cpp
