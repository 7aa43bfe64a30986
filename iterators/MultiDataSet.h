#pragma once
// MultiDataSet: one minibatch for a model with several inputs or outputs (DL4J's MultiDataSet):
// features[i] feeds the graph's input i, labels[j] is the target of its output j, each a host
// tensor whose dimension 0 is the example index. A DataSet is the MultiDataSet of one feature and
// one label tensor.
#include <cstdint>
#include <vector>

#include "iterators/DataSet.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

struct MultiDataSet {
  std::vector<Tensor> features;
  std::vector<Tensor> labels;

  MultiDataSet() = default;
  // Validates the tensors (see validate()).
  MultiDataSet(std::vector<Tensor> features, std::vector<Tensor> labels);
  // The single-input, single-output case.
  explicit MultiDataSet(const DataSet& data);

  // N, the examples of features[0]; 0 when there are no features.
  int64_t numExamples() const;
  // DataMismatchError when the tensors disagree on the number of examples, ShapeError when one
  // has rank 0 or is empty.
  void validate(const char* context = "MultiDataSet") const;
};

// The source of MultiDataSets for ComputationGraph::fit (DL4J's MultiDataSetIterator), with
// DataSetIterator's contract for hasNext(), next() and reset().
class MultiDataSetIterator {
 public:
  virtual ~MultiDataSetIterator() = default;
  virtual bool hasNext() = 0;
  virtual MultiDataSet next() = 0;
  virtual void reset() = 0;
  virtual bool resetSupported() const { return true; }
};

// A fixed list of MultiDataSets, in order (tests and small in-memory data).
class ListMultiDataSetIterator : public MultiDataSetIterator {
 public:
  explicit ListMultiDataSetIterator(std::vector<MultiDataSet> batches)
      : batches_(std::move(batches)) {}
  bool hasNext() override { return next_ < batches_.size(); }
  MultiDataSet next() override;
  void reset() override { next_ = 0; }

 private:
  std::vector<MultiDataSet> batches_;
  size_t next_ = 0;
};

}  // namespace dl4cpp
