#pragma once
// DataSetPreProcessor: a transformation an iterator applies to every batch before handing it out,
// as DL4J's DataSetPreProcessor (the normalizers are ones). Set with
// DataSetIterator::setPreProcessor().
#include "iterators/DataSet.h"

namespace dl4cpp {

class DataSetPreProcessor {
 public:
  virtual ~DataSetPreProcessor() = default;
  // Transforms `batch` in place (its tensors are the iterator's fresh batch, owned by the caller).
  virtual void preProcess(DataSet& batch) const = 0;

 protected:
  DataSetPreProcessor() = default;
  DataSetPreProcessor(const DataSetPreProcessor&) = default;
  DataSetPreProcessor& operator=(const DataSetPreProcessor&) = default;
};

}  // namespace dl4cpp
