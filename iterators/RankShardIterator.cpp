#include "iterators/RankShardIterator.h"

#include <fmt/format.h>

namespace dl4cpp {

RankShardIterator::RankShardIterator(DataSetIterator& all, int rank, int size)
    : all_(&all), rank_(rank), size_(size) {
  if (size < 1 || rank < 0 || rank >= size)
    throw ConfigError(fmt::format(
        "RankShardIterator: rank {} of {}: need size >= 1 and 0 <= rank < size", rank, size));
}

void RankShardIterator::seek() {
  while (position_ % size_ != rank_ && all_->hasNext()) {
    all_->skipNext();
    ++position_;
  }
}

bool RankShardIterator::hasNext() {
  seek();
  return all_->hasNext();
}

DataSet RankShardIterator::next() {
  if (!hasNext()) throwNoNext("RankShardIterator");
  ++position_;
  return preProcessed(all_->next());
}

void RankShardIterator::skipNext() {
  if (!hasNext()) throwNoNext("RankShardIterator");
  ++position_;
  all_->skipNext();
}

void RankShardIterator::reset() {
  all_->reset();
  position_ = 0;
}

}  // namespace dl4cpp
