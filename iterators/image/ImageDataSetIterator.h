#pragma once
// ImageDataSetIterator: minibatches of labelled images, decoded in parallel, as DL4J's
// RecordReaderDataSetIterator over an ImageRecordReader (with AsyncDataSetIterator's prefetch
// built in):
//
//   ImageRecordReader reader(28, 28, 1, parts[0], augmentation);
//   ImageDataSetIterator train(reader, 64, {.decodeThreads = 2, .seed = 42});
//   wrapper.fit(train);
//
// Batches: features (n, channels, height, width) (InputType::convolutional), labels (n, classes)
// one-hot; the last batch of an epoch may be smaller.
//
// Determinism. Each epoch's order is a shuffle drawn from (seed, epoch) (or the source's order
// when shuffle is off), and example i's augmentation draws come from (seed, epoch, i). Decode
// threads each fill whole batches, but a batch's content depends on none of that: an epoch's
// batches are bit-identical whatever decodeThreads is, and batches come out in order. The first
// epoch is 0; every reset() starts the next.
//
// Bounded memory. At most prefetchBatches batches exist inside the iterator (being decoded or
// decoded and waiting); a decode thread waits for the consumer before it starts another.
// Batches returned by next() belong to the caller.
//
// Errors. An example that cannot be loaded (a corrupt image, say; the source's error names the
// file) fails its batch: next() rethrows the error, on the caller's thread, when it reaches that
// batch, and keeps rethrowing it until reset(). Decode threads never outlive the iterator: the
// destructor and reset() stop and join them, whether or not the epoch was read to its end.
// ConfigError for batch < 1, decodeThreads < 0, prefetchBatches < max(1, decodeThreads), or a
// source with no label. asyncSupported() is false: the iterator is already asynchronous.
//
// Threading: one consumer thread calls hasNext/next/reset, like any DataSetIterator. The source
// must outlive the iterator.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "iterators/DataSetIterator.h"
#include "iterators/image/LabeledImageSource.h"

namespace dl4cpp {

class ImageDataSetIterator : public DataSetIterator {
 public:
  struct Options {
    int decodeThreads = 2;    // 0: decode on the caller's thread, in next()
    int prefetchBatches = 4;  // batches decoded ahead of the consumer, at most
    bool shuffle = true;
    uint64_t seed = 0;
  };

  ImageDataSetIterator(const LabeledImageSource& source, int batch, Options options);
  ImageDataSetIterator(const LabeledImageSource& source, int batch)
      : ImageDataSetIterator(source, batch, Options{}) {}
  ~ImageDataSetIterator() override;
  ImageDataSetIterator(const ImageDataSetIterator&) = delete;
  ImageDataSetIterator& operator=(const ImageDataSetIterator&) = delete;

  bool hasNext() override { return delivered_ < numBatches_; }
  DataSet next() override;
  void reset() override;
  bool asyncSupported() const override { return false; }

  int batch() const override { return batch_; }
  int64_t inputColumns() const override { return source_.imageShape().size(); }
  int totalOutcomes() const override { return source_.numLabels(); }
  int64_t totalExamples() const override { return source_.size(); }
  const std::vector<std::string>& getLabels() const { return source_.labels(); }
  // The epoch now being read: 0 until the first reset().
  uint64_t epoch() const { return epoch_; }

 private:
  struct Slot {
    DataSet batch;
    std::exception_ptr error;
    bool ready = false;
  };

  void startEpoch();
  DataSet makeBatch(int64_t index) const;
  DataSet takeDecoded();
  void decodeLoop();
  void stopThreads() noexcept;

  const LabeledImageSource& source_;
  int batch_;
  Options options_;
  int64_t numBatches_;
  uint64_t epoch_ = 0;
  std::vector<int64_t> order_;  // the epoch's example order
  int64_t delivered_ = 0;       // batches next() has returned (or failed on)
  std::exception_ptr failed_;

  // Shared with the decode threads, under mutex_.
  std::mutex mutex_;
  std::condition_variable slotFreed_, batchDecoded_;
  std::vector<Slot> slots_;  // ring of prefetchBatches: batch b lives in slot b % size
  int64_t claimed_ = 0;      // batches handed to decode threads
  int64_t consumed_ = 0;     // delivered_, as the decode threads see it
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace dl4cpp
