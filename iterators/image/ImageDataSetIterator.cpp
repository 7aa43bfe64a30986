#include "iterators/image/ImageDataSetIterator.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace dl4cpp {

namespace {

// The stream of an epoch's shuffle, apart from every example's stream (examples use indices
// below the source's size).
constexpr uint64_t kShuffleStream = ~uint64_t{0};

}  // namespace

ImageDataSetIterator::ImageDataSetIterator(const LabeledImageSource& source, int batch,
                                           Options options)
    : source_(source), batch_(batch), options_(options) {
  if (batch < 1)
    throw ConfigError(fmt::format("ImageDataSetIterator: batch must be >= 1, got {}", batch));
  if (options.decodeThreads < 0)
    throw ConfigError(fmt::format("ImageDataSetIterator: decodeThreads must be >= 0, got {}",
                                  options.decodeThreads));
  if (options.prefetchBatches < std::max(1, options.decodeThreads))
    throw ConfigError(fmt::format(
        "ImageDataSetIterator: prefetchBatches ({}) must be >= 1 and >= decodeThreads ({}), so "
        "that every decode thread has a batch to fill",
        options.prefetchBatches, options.decodeThreads));
  if (source.numLabels() < 1) throw ConfigError("ImageDataSetIterator: the source has no label");
  numBatches_ = (source.size() + batch - 1) / batch;
  startEpoch();
}

ImageDataSetIterator::~ImageDataSetIterator() { stopThreads(); }

void ImageDataSetIterator::startEpoch() {
  order_.resize(static_cast<size_t>(source_.size()));
  std::iota(order_.begin(), order_.end(), int64_t{0});
  if (options_.shuffle) {
    ExampleRandom random(options_.seed, epoch_, kShuffleStream);
    shuffleInPlace(order_, random);
  }
  delivered_ = claimed_ = consumed_ = 0;
  failed_ = nullptr;
  slots_.assign(static_cast<size_t>(options_.prefetchBatches), Slot{});
}

void ImageDataSetIterator::reset() {
  stopThreads();
  ++epoch_;
  startEpoch();
}

DataSet ImageDataSetIterator::next() {
  if (failed_) std::rethrow_exception(failed_);
  if (!hasNext()) throwNoNext("ImageDataSetIterator");
  DataSet batch;
  try {
    batch = options_.decodeThreads == 0 ? makeBatch(delivered_) : takeDecoded();
  } catch (...) {
    failed_ = std::current_exception();
    ++delivered_;
    throw;
  }
  ++delivered_;
  return preProcessed(std::move(batch));
}

DataSet ImageDataSetIterator::takeDecoded() {
  if (threads_.empty()) {
    stop_ = false;
    for (int t = 0; t < options_.decodeThreads; ++t)
      threads_.emplace_back([this] { decodeLoop(); });
  }
  Slot taken;
  {
    std::unique_lock lock(mutex_);
    Slot& slot = slots_[static_cast<size_t>(delivered_ % options_.prefetchBatches)];
    batchDecoded_.wait(lock, [&] { return slot.ready; });
    taken = std::move(slot);
    slot = Slot{};
    consumed_ = delivered_ + 1;
  }
  slotFreed_.notify_all();
  if (taken.error) std::rethrow_exception(taken.error);
  return std::move(taken.batch);
}

void ImageDataSetIterator::decodeLoop() {
  for (;;) {
    int64_t index = 0;
    {
      std::unique_lock lock(mutex_);
      slotFreed_.wait(lock, [&] {
        return stop_ || claimed_ >= numBatches_ || claimed_ < consumed_ + options_.prefetchBatches;
      });
      if (stop_ || claimed_ >= numBatches_) return;
      index = claimed_++;
    }
    Slot decoded;
    try {
      decoded.batch = makeBatch(index);
    } catch (...) {
      decoded.error = std::current_exception();
    }
    decoded.ready = true;
    {
      std::lock_guard lock(mutex_);
      slots_[static_cast<size_t>(index % options_.prefetchBatches)] = std::move(decoded);
    }
    batchDecoded_.notify_all();
  }
}

DataSet ImageDataSetIterator::makeBatch(int64_t index) const {
  const int64_t begin = index * batch_;
  const int64_t rows = std::min<int64_t>(batch_, source_.size() - begin);
  const ImageShape shape = source_.imageShape();
  const int classes = source_.numLabels();
  Tensor features({rows, shape.channels, shape.height, shape.width});
  Tensor labels({rows, classes});
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t example = order_[static_cast<size_t>(begin + row)];
    ExampleRandom random(options_.seed, epoch_, static_cast<uint64_t>(example));
    const int label = source_.load(example, random, features.data() + row * shape.size());
    if (label < 0 || label >= classes)
      throw DataError(fmt::format(
          "ImageDataSetIterator: example {} has label {}, outside the source's {} labels", example,
          label, classes));
    labels.data()[row * classes + label] = 1.0f;
  }
  return DataSet(std::move(features), std::move(labels));
}

void ImageDataSetIterator::stopThreads() noexcept {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  slotFreed_.notify_all();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

}  // namespace dl4cpp
