#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "iterators/image/ImageDataSetIterator.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
using namespace std::chrono_literals;

namespace {

// Examples whose pixels say which example they are (pixel 0 = index) and carry the example's
// augmentation draws; loads take an index-dependent time so decode threads finish out of order.
class NumberedSource : public LabeledImageSource {
 public:
  NumberedSource(int64_t size, int64_t failAt = -1) : size_(size), failAt_(failAt) {}

  int64_t size() const override { return size_; }
  ImageShape imageShape() const override { return {2, 2, 3}; }
  const std::vector<std::string>& labels() const override { return labels_; }
  int load(int64_t index, ExampleRandom& random, float* pixels) const override {
    loads_.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::microseconds((index * 7919) % 300));
    if (index == failAt_) throw DataFormatError("example " + std::to_string(index) + " is corrupt");
    pixels[0] = static_cast<float>(index);
    for (int i = 1; i < 12; ++i) pixels[i] = static_cast<float>(random.nextDouble());
    return static_cast<int>(index % 3);
  }
  int64_t loads() const { return loads_.load(); }

 private:
  int64_t size_, failAt_;
  std::vector<std::string> labels_{"a", "b", "c"};
  mutable std::atomic<int64_t> loads_{0};
};

std::vector<float> flatten(const DataSet& batch) {
  std::vector<float> values(batch.features.data(), batch.features.data() + batch.features.numel());
  values.insert(values.end(), batch.labels.data(), batch.labels.data() + batch.labels.numel());
  return values;
}

// Every batch of one epoch, flattened.
std::vector<std::vector<float>> epoch(ImageDataSetIterator& it) {
  std::vector<std::vector<float>> batches;
  while (it.hasNext()) batches.push_back(flatten(it.next()));
  return batches;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE(
      "ImageDataSetIterator: batches are (n, C, H, W) with one-hot labels, every example once "
      "per epoch, the last batch partial") {
    const NumberedSource source(10);
    ImageDataSetIterator it(source, 4, {.decodeThreads = 2, .seed = 5});
    CHECK(it.totalExamples() == 10);
    CHECK(it.inputColumns() == 12);
    CHECK(it.totalOutcomes() == 3);
    std::multiset<int> seen;
    std::vector<int64_t> sizes;
    while (it.hasNext()) {
      const DataSet batch = it.next();
      CHECK(batch.features.shape() == Shape{batch.numExamples(), 2, 2, 3});
      CHECK(batch.labels.shape() == Shape{batch.numExamples(), 3});
      sizes.push_back(batch.numExamples());
      for (int64_t r = 0; r < batch.numExamples(); ++r) {
        const int index = static_cast<int>(batch.features.data()[r * 12]);
        seen.insert(index);
        for (int c = 0; c < 3; ++c)
          CHECK(batch.labels.data()[r * 3 + c] == (c == index % 3 ? 1.0f : 0.0f));
      }
    }
    CHECK(sizes == std::vector<int64_t>{4, 4, 2});
    CHECK(seen == std::multiset<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    CHECK_THROWS_AS(it.next(), DataError);
  }

  TEST_CASE(
      "ImageDataSetIterator: an epoch's batches are bit-identical for any number of decode "
      "threads, and the next epoch reshuffles and redraws") {
    const NumberedSource source(37);
    ImageDataSetIterator inline_(source, 5, {.decodeThreads = 0, .prefetchBatches = 1, .seed = 9});
    const auto first = epoch(inline_);
    inline_.reset();
    const auto second = epoch(inline_);
    CHECK(first != second);
    for (int threads : {1, 2, 3, 4}) {
      CAPTURE(threads);
      ImageDataSetIterator it(source, 5,
                              {.decodeThreads = threads, .prefetchBatches = 4, .seed = 9});
      CHECK(epoch(it) == first);
      it.reset();
      CHECK(epoch(it) == second);
    }
    ImageDataSetIterator otherSeed(source, 5, {.decodeThreads = 2, .seed = 10});
    CHECK(epoch(otherSeed) != first);
  }

  TEST_CASE("ImageDataSetIterator: without shuffling, examples come in the source's order") {
    const NumberedSource source(7);
    ImageDataSetIterator it(source, 3, {.decodeThreads = 2, .shuffle = false});
    std::vector<int> order;
    while (it.hasNext()) {
      const DataSet batch = it.next();
      for (int64_t r = 0; r < batch.numExamples(); ++r)
        order.push_back(static_cast<int>(batch.features.data()[r * 12]));
    }
    CHECK(order == std::vector<int>{0, 1, 2, 3, 4, 5, 6});
  }

  TEST_CASE("ImageDataSetIterator: decode threads stop prefetchBatches ahead of the consumer") {
    const NumberedSource source(400);
    {
      ImageDataSetIterator it(source, 4, {.decodeThreads = 2, .prefetchBatches = 2});
      it.next();
      // One batch delivered and two decoded ahead: 12 examples, then the threads wait (however
      // slow the machine: wait for the 12, then give them time to overrun).
      for (int i = 0; i < 1000 && source.loads() < 12; ++i) std::this_thread::sleep_for(10ms);
      std::this_thread::sleep_for(200ms);
      CHECK(source.loads() == 12);
    }  // destroyed mid-epoch: the threads are joined, not left running
    CHECK(source.loads() == 12);
  }

  TEST_CASE(
      "ImageDataSetIterator: a failing example fails its batch on the caller's thread, again "
      "until reset, and the epoch after reset fails at the same batch") {
    const NumberedSource source(40, 17);
    ImageDataSetIterator it(source, 4, {.decodeThreads = 3, .shuffle = false});
    for (int b = 0; b < 4; ++b) CHECK_NOTHROW(it.next());
    CHECK_THROWS_WITH_AS(it.next(), "example 17 is corrupt", DataFormatError);
    CHECK_THROWS_WITH_AS(it.next(), "example 17 is corrupt", DataFormatError);
    it.reset();
    for (int b = 0; b < 4; ++b) CHECK_NOTHROW(it.next());
    CHECK_THROWS_AS(it.next(), DataFormatError);

    ImageDataSetIterator inline_(source, 4,
                                 {.decodeThreads = 0, .prefetchBatches = 1, .shuffle = false});
    for (int b = 0; b < 4; ++b) CHECK_NOTHROW(inline_.next());
    CHECK_THROWS_AS(inline_.next(), DataFormatError);
  }

  TEST_CASE("ImageDataSetIterator: bad settings are ConfigErrors") {
    const NumberedSource source(5);
    CHECK_THROWS_AS(ImageDataSetIterator(source, 0), ConfigError);
    CHECK_THROWS_AS(ImageDataSetIterator(source, 2, {.decodeThreads = -1}), ConfigError);
    CHECK_THROWS_AS(ImageDataSetIterator(source, 2, {.decodeThreads = 4, .prefetchBatches = 3}),
                    ConfigError);
    CHECK_THROWS_AS(ImageDataSetIterator(source, 2, {.decodeThreads = 0, .prefetchBatches = 0}),
                    ConfigError);
  }
}
