#pragma once
// AsyncDataSetIterator: prefetches the batches of another DataSetIterator on a background thread,
// as DL4J's AsyncDataSetIterator, so that loading and preparing batch k+1 overlaps training on
// batch k.
//
//   ListDataSetIterator source(data, 32);
//   AsyncDataSetIterator async(source, 4);   // at most 4 batches prefetched
//   model.fit(async, 3);
//
// Contract (in addition to DataSetIterator's):
//  - Bounded. At most `queueSize` batches are held by the wrapper at any time (queued, being
//    produced, or taken out by hasNext() and not yet returned by next()), so a fast source with a
//    slow consumer cannot fill memory: the producer waits for a free slot before it calls
//    source.next() again. A slot is freed when next() hands a batch to the caller.
//  - Order. Batches come out exactly as the source produces them, same order, same contents
//    (they are moved, not copied), including the last, partial batch of an epoch.
//    A pre-processor set on the wrapper itself is applied on the consumer's thread, in next().
//  - Lazy start. The producer thread is started by the first hasNext()/next() after construction
//    or after reset(), never by the constructor, so constructing the wrapper and resetting it
//    touch the source on the caller's thread only. It ends by itself after it has seen
//    source.hasNext() == false (it queues an end-of-epoch marker) or after an error.
//  - Errors are never swallowed. An exception thrown by the source in the producer thread is
//    captured and rethrown on the consumer's thread, from the call that would have thrown had the
//    source been used directly: an exception from source.hasNext() comes out of hasNext(); one
//    from source.next() makes hasNext() return true and comes out of the matching next(). From
//    then on the wrapper is failed: every hasNext()/next() rethrows the same exception until a
//    successful reset().
//  - reset() stops the producer (it never blocks on a full queue: it waits with time-outs and
//    checks a stop flag, and reset() wakes it), joins it, drops the prefetched batches, calls
//    source.reset() and arms a fresh epoch. When the source does not support reset, reset() throws
//    DataError and leaves the current epoch untouched. An exception from source.reset() is
//    rethrown and also leaves the wrapper failed until the next successful reset().
//  - The destructor stops and joins the producer whether or not the epoch was read to the end and
//    never throws. It waits at most for a source.hasNext()/next() call already in progress.
//  - Metadata. batch(), inputColumns(), totalOutcomes(), totalExamples() and resetSupported()
//    are those of the source, read once on the caller's thread at construction (and again after
//    each reset()), so they never race with the producer. asyncSupported() is false: the wrapper
//    is already asynchronous and must not be wrapped again.
//
// Lifetime: the borrowing constructor keeps a reference; the source must outlive the wrapper and
// must not be used by anyone else while the wrapper exists (the producer thread calls it). The
// owning constructor takes the source over.
//
// Threading: one consumer thread calls hasNext/next/reset (like any DataSetIterator); the
// producer thread is internal. The source is used by one thread at a time (the producer while an
// epoch runs, the consumer in reset()), so it needs no locking of its own, but it must tolerate
// being called from a thread other than the one that created it (asyncSupported()); a source that
// reports asyncSupported() == false is rejected with ConfigError.
#include <cstdint>
#include <memory>

#include "iterators/DataSetIterator.h"

namespace dl4cpp {

class AsyncDataSetIterator : public DataSetIterator {
 public:
  // Borrows `source` (it must outlive this wrapper). queueSize >= 1 (ConfigError otherwise): the
  // number of batches prefetched ahead of the consumer.
  AsyncDataSetIterator(DataSetIterator& source, int queueSize);
  // Owns `source` (must not be null: ConfigError).
  AsyncDataSetIterator(std::unique_ptr<DataSetIterator> source, int queueSize);
  ~AsyncDataSetIterator() override;

  AsyncDataSetIterator(const AsyncDataSetIterator&) = delete;
  AsyncDataSetIterator& operator=(const AsyncDataSetIterator&) = delete;
  AsyncDataSetIterator(AsyncDataSetIterator&&) = delete;
  AsyncDataSetIterator& operator=(AsyncDataSetIterator&&) = delete;

  // Blocks until the next item of the epoch (a batch, the end of the epoch or an error) has been
  // produced. Rethrows a captured error (see above).
  bool hasNext() override;
  // The next batch; DataError when the epoch is exhausted; rethrows a captured error.
  DataSet next() override;
  void reset() override;
  bool resetSupported() const override { return resetSupported_; }
  bool asyncSupported() const override { return false; }

  int batch() const override { return batch_; }
  int64_t inputColumns() const override { return inputColumns_; }
  int totalOutcomes() const override { return totalOutcomes_; }
  int64_t totalExamples() const override { return totalExamples_; }

  int queueSize() const { return queueSize_; }

  // Statistics (for the ParallelWrapper's performance report): total wall time the consumer spent
  // blocked in hasNext()/next() waiting for the producer, since construction or the last
  // resetStatistics(). A value that grows with training time means the source is the bottleneck.
  // Safe to read from any thread.
  double consumerWaitSeconds() const;
  void resetStatistics();

 private:
  struct Impl;

  void refreshMetadata();

  std::unique_ptr<DataSetIterator> owned_;
  DataSetIterator& source_;
  int queueSize_;
  std::unique_ptr<Impl> impl_;

  bool resetSupported_ = true;
  int batch_ = 0;
  int64_t inputColumns_ = 0;
  int totalOutcomes_ = 0;
  int64_t totalExamples_ = -1;
};

}  // namespace dl4cpp
