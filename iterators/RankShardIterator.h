#pragma once
// RankShardIterator: one rank's shard of an iterator that every rank of a cluster constructs
// alike (same data, same seed, so the same order): batch i of every epoch goes to rank
// i mod size, and the batches of other ranks are skipped (DataSetIterator::skipNext), not
// returned. Together the ranks read every batch of an epoch exactly once; shards differ by at
// most one batch. ParallelWrapper shards this way by itself when it trains on a cluster, which
// with one worker per rank deals exactly the batches one process with `size` workers would.
//
// reset() resets the underlying iterator (so a shuffling one reshuffles alike on every rank).
#include "iterators/DataSetIterator.h"

namespace dl4cpp {

class RankShardIterator final : public DataSetIterator {
 public:
  // Reads from `all` (which must outlive this) from where it stands: its next batch counts as
  // batch 0 (a resumed epoch deals its remaining batches as a fresh one would). ConfigError
  // unless 0 <= rank < size.
  RankShardIterator(DataSetIterator& all, int rank, int size);

  bool hasNext() override;
  DataSet next() override;
  void skipNext() override;
  void reset() override;
  bool resetSupported() const override { return all_->resetSupported(); }
  bool asyncSupported() const override { return all_->asyncSupported(); }
  int batch() const override { return all_->batch(); }
  int64_t inputColumns() const override { return all_->inputColumns(); }
  int totalOutcomes() const override { return all_->totalOutcomes(); }
  // Unknown: the shard's share depends on how the last batches fall.
  int64_t totalExamples() const override { return -1; }

 private:
  // Skips the other ranks' batches up to this rank's next one.
  void seek();

  DataSetIterator* all_;
  int rank_, size_;
  int64_t position_ = 0;  // index of all_'s next batch, counted from construction or reset()
};

}  // namespace dl4cpp
