#include "iterators/AsyncDataSetIterator.h"

#include <concurrentqueue/blockingconcurrentqueue.h>
#include <concurrentqueue/lightweightsemaphore.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace dl4cpp {

namespace {

using Clock = std::chrono::steady_clock;

// How long the producer and the consumer block before they look at their flags again. Stopping is
// normally immediate (reset()/the destructor signal the producer); the time-outs are the backstop
// that makes a forever-blocked thread impossible.
constexpr std::int64_t kPollMicros = 20'000;

// One entry of the queue: a batch, the end of the epoch, or an error captured from the source.
struct Item {
  enum class Kind { Batch, End, HasNextError, NextError };
  Kind kind = Kind::End;
  DataSet data;
  std::exception_ptr error;
};

// Everything one epoch's producer shares with the consumer. A fresh Epoch per epoch means no
// semaphore count, stale item or stop flag can leak from one epoch into the next.
struct Epoch {
  explicit Epoch(int queueSize)
      : queue(static_cast<size_t>(queueSize) + 2), freeSlots(queueSize, /*maxSpins=*/100) {}

  moodycamel::BlockingConcurrentQueue<Item> queue;
  // Free prefetch slots: the producer takes one before source.next(); next() gives it back when
  // it hands the batch to the caller. This is what bounds the memory held by the wrapper.
  moodycamel::LightweightSemaphore freeSlots;
  std::atomic<bool> stop{false};
  // Set (release) by the producer after its last enqueue, whatever the way it ends.
  std::atomic<bool> finished{false};
  std::thread thread;
};

void produce(Epoch& e, DataSetIterator& source) {
  struct Finish {
    Epoch& e;
    ~Finish() { e.finished.store(true, std::memory_order_release); }
  } finish{e};

  auto push = [&e](Item&& item) {
    if (!e.queue.enqueue(std::move(item))) throw std::bad_alloc();
  };

  try {
    for (;;) {
      // Wait for a free slot, but never forever: a stop request must always be seen.
      for (;;) {
        if (e.stop.load(std::memory_order_acquire)) return;
        if (e.freeSlots.wait(kPollMicros)) break;
      }
      if (e.stop.load(std::memory_order_acquire)) return;

      Item item;
      try {
        if (!source.hasNext()) {
          item.kind = Item::Kind::End;
          push(std::move(item));
          return;
        }
      } catch (...) {
        item.kind = Item::Kind::HasNextError;
        item.error = std::current_exception();
        push(std::move(item));
        return;
      }
      try {
        item.data = source.next();
        item.kind = Item::Kind::Batch;
      } catch (...) {
        item.kind = Item::Kind::NextError;
        item.error = std::current_exception();
        push(std::move(item));
        return;
      }
      push(std::move(item));
    }
  } catch (...) {
    // Only a failed enqueue (out of memory) lands here. The consumer notices `finished` with an
    // empty queue and reports it; nothing may escape a thread function.
  }
}

}  // namespace

struct AsyncDataSetIterator::Impl {
  std::unique_ptr<Epoch> epoch;  // null until the producer of the current epoch is started
  std::optional<Item> pending;   // taken out of the queue by hasNext(), not yet returned by next()
  bool ended = false;            // the end-of-epoch marker has been taken out of the queue
  std::exception_ptr failure;    // sticky until a successful reset()
  std::atomic<int64_t> waitNanos{0};

  void start(DataSetIterator& source, int queueSize) {
    auto e = std::make_unique<Epoch>(queueSize);
    Epoch* raw = e.get();
    e->thread = std::thread([raw, &source] { produce(*raw, source); });
    epoch = std::move(e);
  }

  // Stops and joins the producer and drops everything it prefetched. Never throws, never blocks
  // longer than a source call already in progress (plus one poll interval at worst).
  void stop() noexcept {
    pending.reset();
    ended = false;
    if (!epoch) return;
    Epoch& e = *epoch;
    e.stop.store(true, std::memory_order_release);
    e.freeSlots.signal();  // wake a producer waiting for a slot
    Item drop;
    while (e.queue.try_dequeue(drop)) e.freeSlots.signal();
    if (e.thread.joinable()) {
      try {
        e.thread.join();
      } catch (...) {
        // join() only throws for a thread that is not joinable or is this one; neither can
        // happen here. Detaching would leave the producer using a dead Epoch, so do not.
      }
    }
    epoch.reset();  // destroys the queue and any batch still in it
  }

  // Makes sure the next item of the epoch is known: `pending` holds a batch (or a next() error),
  // or `ended` is set. Rethrows the sticky failure or a hasNext() error.
  void fetch(DataSetIterator& source, int queueSize) {
    if (failure) std::rethrow_exception(failure);
    if (pending || ended) return;
    if (!epoch) start(source, queueSize);
    Epoch& e = *epoch;
    Item item;
    if (!e.queue.try_dequeue(item)) {
      const auto t0 = Clock::now();
      bool got = false;
      while (!got) {
        got = e.queue.wait_dequeue_timed(item, kPollMicros);
        if (!got && e.finished.load(std::memory_order_acquire)) {
          got = e.queue.try_dequeue(item);  // the last item may have landed just now
          if (!got) {
            waitNanos.fetch_add(
                std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count(),
                std::memory_order_relaxed);
            failure = std::make_exception_ptr(
                DataError("AsyncDataSetIterator: the prefetch thread ended without a batch or an "
                          "end-of-epoch marker (could not enqueue: out of memory)"));
            std::rethrow_exception(failure);
          }
        }
      }
      waitNanos.fetch_add(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count(),
          std::memory_order_relaxed);
    }
    switch (item.kind) {
      case Item::Kind::Batch:
      case Item::Kind::NextError:
        pending = std::move(item);
        return;
      case Item::Kind::End:
        ended = true;
        return;
      case Item::Kind::HasNextError:
        failure = item.error;
        std::rethrow_exception(failure);
    }
  }
};

namespace {

int checkedQueueSize(int queueSize) {
  if (queueSize < 1)
    throw ConfigError("AsyncDataSetIterator: queueSize must be at least 1, got " +
                      std::to_string(queueSize));
  return queueSize;
}

DataSetIterator& checkedSource(const std::unique_ptr<DataSetIterator>& source) {
  if (!source) throw ConfigError("AsyncDataSetIterator: the source iterator is null");
  return *source;
}

}  // namespace

AsyncDataSetIterator::AsyncDataSetIterator(DataSetIterator& source, int queueSize)
    : source_(source), queueSize_(checkedQueueSize(queueSize)), impl_(std::make_unique<Impl>()) {
  if (!source_.asyncSupported())
    throw ConfigError(
        "AsyncDataSetIterator: the source iterator does not support asynchronous "
        "prefetching (asyncSupported() is false; it may itself be asynchronous)");
  refreshMetadata();
}

AsyncDataSetIterator::AsyncDataSetIterator(std::unique_ptr<DataSetIterator> source, int queueSize)
    : AsyncDataSetIterator(checkedSource(source), queueSize) {
  owned_ = std::move(source);
}

AsyncDataSetIterator::~AsyncDataSetIterator() {
  // impl_ is only null if the constructor threw before creating it, in which case the destructor
  // does not run; still, be defensive.
  if (impl_) impl_->stop();
}

void AsyncDataSetIterator::refreshMetadata() {
  resetSupported_ = source_.resetSupported();
  batch_ = source_.batch();
  inputColumns_ = source_.inputColumns();
  totalOutcomes_ = source_.totalOutcomes();
  totalExamples_ = source_.totalExamples();
}

bool AsyncDataSetIterator::hasNext() {
  impl_->fetch(source_, queueSize_);
  return impl_->pending.has_value();
}

DataSet AsyncDataSetIterator::next() {
  impl_->fetch(source_, queueSize_);
  if (!impl_->pending) throwNoNext("AsyncDataSetIterator");
  Item item = std::move(*impl_->pending);
  impl_->pending.reset();
  if (item.kind == Item::Kind::NextError) {
    impl_->failure = item.error;
    std::rethrow_exception(impl_->failure);
  }
  impl_->epoch->freeSlots.signal();  // the batch leaves the wrapper: one more may be prefetched
  return preProcessed(std::move(item.data));
}

void AsyncDataSetIterator::reset() {
  if (!resetSupported_)
    throw DataError(
        "AsyncDataSetIterator::reset(): the source iterator does not support reset, "
        "so it cannot serve another epoch");
  impl_->stop();  // from here on the source is used by this thread only
  impl_->failure = nullptr;
  try {
    source_.reset();
    refreshMetadata();
  } catch (...) {
    impl_->failure = std::current_exception();
    throw;
  }
  // The producer of the new epoch starts lazily, on the next hasNext()/next().
}

double AsyncDataSetIterator::consumerWaitSeconds() const {
  return static_cast<double>(impl_->waitNanos.load(std::memory_order_relaxed)) * 1e-9;
}

void AsyncDataSetIterator::resetStatistics() {
  impl_->waitNanos.store(0, std::memory_order_relaxed);
}

}  // namespace dl4cpp
