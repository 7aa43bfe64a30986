#pragma once
// MultiDataSet: one minibatch for a model with several inputs or outputs (DL4J's MultiDataSet):
// features[i] feeds the graph's input i, labels[j] is the target of its output j, each a host
// tensor whose dimension 0 is the example index. A DataSet is the MultiDataSet of one feature and
// one label tensor.
//
// Sequences (N, F, T) may be padded, with masks as DataSet's: featuresMasks[i] (N, T) belongs to
// features[i], labelsMasks[j] to labels[j]. Each list is empty (no masks at all) or has one entry
// per tensor, an empty entry where every step is real (DL4J's getFeaturesMaskArrays).
#include <cstdint>
#include <vector>

#include "iterators/DataSet.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

struct MultiDataSet {
  std::vector<Tensor> features;
  std::vector<Tensor> labels;
  std::vector<Tensor> featuresMasks;  // empty, or one per features tensor
  std::vector<Tensor> labelsMasks;    // empty, or one per labels tensor

  MultiDataSet() = default;
  // Validates the tensors (see validate()).
  MultiDataSet(std::vector<Tensor> features, std::vector<Tensor> labels);
  MultiDataSet(std::vector<Tensor> features, std::vector<Tensor> labels,
               std::vector<Tensor> featuresMasks, std::vector<Tensor> labelsMasks);
  // The single-input, single-output case, masks included.
  explicit MultiDataSet(const DataSet& data);

  // N, the examples of features[0]; 0 when there are no features.
  int64_t numExamples() const;
  // The mask of features[i] / labels[j], or an empty tensor.
  const Tensor& featuresMask(size_t i) const;
  const Tensor& labelsMask(size_t j) const;

  // DataMismatchError when the tensors disagree on the number of examples or a mask does not
  // match its tensor ((N, T) for an (N, X, T) tensor), ShapeError when a tensor has rank 0 or is
  // empty, or a list of masks is neither empty nor one per tensor.
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
