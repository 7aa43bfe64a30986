#include "nn/earlystopping/scorecalc/DataSetLossCalculator.h"

#include "nn/api/Model.h"
#include "nn/eval/ValidationIterator.h"

namespace dl4cpp {

namespace {
constexpr const char* kName = "DataSetLossCalculator";
}

DataSetLossCalculator::DataSetLossCalculator(DataSetIterator& validation)
    : validation_(validation) {
  requireResettable(validation, kName);
}

double DataSetLossCalculator::calculateScore(Model& model) {
  startValidationPass(validation_, kName);
  double lossSum = 0;
  int64_t examples = 0;
  while (validation_.hasNext()) {
    const DataSet batch = validation_.next();
    const int64_t n = batch.numExamples();
    lossSum += model.score(batch) * static_cast<double>(n);
    examples += n;
  }
  return lossSum / static_cast<double>(examples);
}

}  // namespace dl4cpp
