#pragma once
// DataSetIterator: the source of minibatches for training and evaluation, as in DL4J.
//
// Contract:
//  - hasNext() says whether next() has a batch left in the current epoch; it has no side effect.
//  - next() returns the next batch (host tensors, dimension 0 = examples, at most batch() rows;
//    the last batch of an epoch may be smaller). Calling it when hasNext() is false throws
//    DataError; it is never undefined behaviour.
//  - reset() starts a new epoch (iterators that shuffle reshuffle here). When resetSupported() is
//    false, reset() throws DataError and callers must not expect a second epoch.
//  - asyncSupported() says whether the iterator may be driven from a background prefetch thread
//    (AsyncDataSetIterator). It is still used by one thread at a time: implementations need not
//    be thread-safe.
//  - setPreProcessor(p): every batch next() returns has been through p->preProcess() (DL4J's
//    DataSetIterator.setPreProcessor; a normalizer, say). Null removes it.
//  - The DataSets returned own or share storage that the iterator no longer writes to, so a
//    caller may keep a batch after calling next() again.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "iterators/DataSet.h"
#include "iterators/DataSetPreProcessor.h"
#include "nn/core/Error.h"

namespace dl4cpp {

class DataSetIterator {
 public:
  virtual ~DataSetIterator() = default;

  virtual bool hasNext() = 0;
  virtual DataSet next() = 0;
  virtual void reset() = 0;
  // Passes over the next batch without returning it (a rank skipping the batches of other ranks:
  // RankShardIterator). DataError when hasNext() is false. Iterators that can skip without
  // reading or decoding the batch override it.
  virtual void skipNext() { next(); }
  virtual bool resetSupported() const { return true; }
  virtual bool asyncSupported() const { return true; }

  // Examples per batch (the last batch of an epoch may hold fewer).
  virtual int batch() const = 0;
  // Number of values in one example's features (784 for MNIST).
  virtual int64_t inputColumns() const = 0;
  // Number of label columns (classes): 10 for MNIST.
  virtual int totalOutcomes() const = 0;
  // Examples per epoch, or -1 when unknown.
  virtual int64_t totalExamples() const { return -1; }

  void setPreProcessor(std::shared_ptr<const DataSetPreProcessor> preProcessor) {
    preProcessor_ = std::move(preProcessor);
  }
  const std::shared_ptr<const DataSetPreProcessor>& getPreProcessor() const {
    return preProcessor_;
  }

 protected:
  DataSetIterator() = default;
  DataSetIterator(const DataSetIterator&) = default;
  DataSetIterator& operator=(const DataSetIterator&) = default;

  // For implementations: `batch` after the pre-processor, if one is set; next() returns this.
  DataSet preProcessed(DataSet batch) const {
    if (preProcessor_) preProcessor_->preProcess(batch);
    return batch;
  }

  // For implementations: the error next() throws when the epoch is exhausted.
  [[noreturn]] static void throwNoNext(const std::string& iterator) {
    throw DataError(iterator +
                    "::next(): no batch left in this epoch (hasNext() is false); call "
                    "reset() to start a new epoch");
  }

 private:
  std::shared_ptr<const DataSetPreProcessor> preProcessor_;
};

// For trainers, at the start of an epoch: resets `iterator` when it is exhausted (and can be
// reset), then throws DataError naming `caller` when it still has no batch. Training on no data at
// all (an empty data file, a filter that kept nothing) is a mistake to report, not a run that
// ends at once with nothing learned.
inline void requireBatchForEpoch(DataSetIterator& iterator, const std::string& caller) {
  if (!iterator.hasNext() && iterator.resetSupported()) iterator.reset();
  if (!iterator.hasNext())
    throw DataError(caller +
                    ": the iterator has no data: it yields no minibatch, even after reset() "
                    "(an empty data set?); nothing was trained");
}

}  // namespace dl4cpp
