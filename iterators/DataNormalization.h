#pragma once
// DataNormalization: what the normalizers have in common, as DL4J's DataNormalization. A
// normalizer is fitted on the training data (fit), then maps features the same way wherever they
// come from: every batch of an iterator it is the pre-processor of, and a network's input at
// inference (ParallelInference, the inference server sample), so a served model sees its inputs
// as it saw its training data. ModelSerializer saves one in the model file with the network.
//
//   NormalizerStandardize, NormalizerMinMaxScaler  fitted statistics, per column or per channel
//   ImagePreProcessingScaler                       pixel values [0, 2^maxBits - 1] to a range
#include <memory>
#include <string>

#include "iterators/DataSetIterator.h"
#include "iterators/DataSetPreProcessor.h"
#include "nn/conf/InputType.h"

namespace dl4cpp {

class DataNormalization : public DataSetPreProcessor {
 public:
  // Computes what the normalizer needs from one epoch of `iterator` (reset before and after).
  virtual void fit(DataSetIterator& iterator) = 0;
  virtual bool isFitted() const = 0;

  // Normalizes `batch`'s features in place; labels are left as they are. ConfigError before
  // fit(); DataMismatchError when the features are not of the kind it was fitted on.
  virtual void transform(DataSet& batch) const = 0;
  void preProcess(DataSet& batch) const override { transform(batch); }

  // Nothing when the normalizer applies to the input of a network of input type `input`;
  // otherwise DataMismatchError naming both (ConfigError before fit()).
  virtual void requireInput(const InputType& input) const = 0;
  // Normalizes `features` in place: whole examples of input.flatSize() values each, in the order
  // a network of input type `input` takes them (channel by channel for images), whatever the
  // tensor's rank. Errors as requireInput(); the caller has checked the value count.
  virtual void transformInput(Tensor& features, const InputType& input) const = 0;

  // An independent copy (fitted or not, as this one).
  virtual std::unique_ptr<DataNormalization> clone() const = 0;

 protected:
  DataNormalization() = default;
  DataNormalization(const DataNormalization&) = default;
  DataNormalization& operator=(const DataNormalization&) = default;
};

// ConfigError, naming `who`, unless [minRange, maxRange] is a target range a normalizer can map
// float values to: both ends and its width finite in float, and minRange < maxRange.
void requireTargetRange(const std::string& who, double minRange, double maxRange);

}  // namespace dl4cpp
