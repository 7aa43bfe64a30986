#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "iterators/AsyncDataSetIterator.h"
#include "iterators/ListDataSetIterator.h"
#include "nn/core/Error.h"
#include "nn/multilayer/MultiLayerNetwork.h"

using namespace dl4cpp;
using namespace std::chrono_literals;

namespace {

// Runs `body` on its own thread and fails the test if it has not finished within `limit`, so a
// deadlock in the iterator shows up as a failure, never as a hung CI job. A body that hangs
// cannot be cancelled and still refers to the test's locals, so after reporting the failure the
// process is ended (a plain REQUIRE would unwind into std::future's blocking destructor and hang).
// Exceptions and failed REQUIREs inside the body propagate through get().
template <typename F>
void bounded(F&& body, std::chrono::seconds limit = 10s) {
  auto fut = std::async(std::launch::async, std::forward<F>(body));
  if (fut.wait_for(limit) != std::future_status::ready) {
    FAIL_CHECK("the test body did not finish within " << limit.count()
                                                      << " s (deadlock or lost wake-up)");
    std::fprintf(stderr,
                 "AsyncDataSetIteratorTest: body timed out after %lld s; aborting the run\n",
                 static_cast<long long>(limit.count()));
    std::fflush(nullptr);
    std::_Exit(3);
  }
  fut.get();
}

// n examples of 3 features and 2 label columns; example i has features (first+i)*10 + {0,1,2}
// and labels {first+i, -(first+i)}, so every row says which example it is.
DataSet examples(int64_t n, int64_t first = 0) {
  std::vector<float> f, l;
  for (int64_t i = 0; i < n; ++i) {
    const float id = static_cast<float>(first + i);
    for (int c = 0; c < 3; ++c) f.push_back(id * 10 + static_cast<float>(c));
    l.push_back(id);
    l.push_back(-id);
  }
  return DataSet(Tensor::fromVector(Shape{n, 3}, f), Tensor::fromVector(Shape{n, 2}, l));
}

// Every batch of the rest of the epoch, as (features, labels) value vectors.
struct Values {
  std::vector<float> features, labels;
  bool operator==(const Values&) const = default;
};
std::vector<Values> drain(DataSetIterator& it) {
  std::vector<Values> out;
  while (it.hasNext()) {
    const DataSet ds = it.next();
    out.push_back({ds.features.toVector(), ds.labels.toVector()});
  }
  return out;
}

struct SourceFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A source over examples(n) in batches of `batch`, instrumented for the tests: counts the batches
// it produced, can sleep in next(), and can throw from the k-th next() or from hasNext() once k
// batches have been produced.
class ScriptedSource : public DataSetIterator {
 public:
  ScriptedSource(int64_t n, int batch) : list_(examples(n), batch) {}

  int throwOnNext = 0;           // the k-th next() of an epoch throws SourceFailure (0: never)
  int throwInHasNextAfter = -1;  // hasNext() throws once this many batches came out (-1: never)
  std::chrono::milliseconds sleepInNext{0};
  bool canReset = true;
  bool canAsync = true;

  std::atomic<int64_t> produced{0};  // batches returned by next(), over all epochs
  std::atomic<int> resets{0};

  bool hasNext() override {
    if (throwInHasNextAfter >= 0 && inEpoch_ >= throwInHasNextAfter)
      throw SourceFailure("hasNext failed after " + std::to_string(inEpoch_) + " batches");
    return list_.hasNext();
  }
  DataSet next() override {
    if (throwOnNext > 0 && inEpoch_ + 1 == throwOnNext)
      throw SourceFailure("next failed at batch " + std::to_string(inEpoch_ + 1));
    if (sleepInNext.count() > 0) std::this_thread::sleep_for(sleepInNext);
    DataSet ds = list_.next();
    ++inEpoch_;
    produced.fetch_add(1);
    return ds;
  }
  void reset() override {
    list_.reset();
    inEpoch_ = 0;
    resets.fetch_add(1);
  }
  bool resetSupported() const override { return canReset; }
  bool asyncSupported() const override { return canAsync; }
  int batch() const override { return list_.batch(); }
  int64_t inputColumns() const override { return list_.inputColumns(); }
  int totalOutcomes() const override { return list_.totalOutcomes(); }
  int64_t totalExamples() const override { return list_.totalExamples(); }

 private:
  ListDataSetIterator list_;
  int inEpoch_ = 0;
};

// Waits (bounded by the caller's `bounded`) until `cond` holds.
template <typename C>
void waitUntil(C&& cond) {
  while (!cond()) std::this_thread::sleep_for(1ms);
}

// 4 -> 8 (TANH) -> 3 (SOFTMAX, MCXENT), plain SGD.
MultiLayerConfiguration denseConf() {
  return NeuralNetConfiguration::Builder()
      .seed(1)
      .updater(Sgd(0.1))
      .weightInit(WeightInit::XAVIER)
      .list()
      .layer(DenseLayer::Builder().nIn(4).nOut(8).activation(Activation::TANH).build())
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .build();
}

// A small classification problem: the class is the index of the largest of the first three
// features. Fixed values, no randomness.
DataSet toyData(int64_t n) {
  std::vector<float> f, l;
  for (int64_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(i);
    const float a = static_cast<float>(std::sin(1.3 * x + 0.2));
    const float b = static_cast<float>(std::sin(2.1 * x + 1.7));
    const float c = static_cast<float>(std::cos(0.7 * x + 0.4));
    const float d = static_cast<float>(0.5 * std::cos(3.3 * x));
    f.insert(f.end(), {a, b, c, d});
    const int cls = a >= b && a >= c ? 0 : (b >= c ? 1 : 2);
    for (int k = 0; k < 3; ++k) l.push_back(k == cls ? 1.0f : 0.0f);
  }
  return DataSet(Tensor::fromVector(Shape{n, 4}, f), Tensor::fromVector(Shape{n, 3}, l));
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("AsyncDataSetIterator: same batches in the same order as the source") {
    bounded([] {
      for (int queueSize : {1, 2, 3, 10}) {
        CAPTURE(queueSize);
        ListDataSetIterator direct(examples(23), 5);
        const std::vector<Values> expected = drain(direct);
        REQUIRE(expected.size() == 5);
        REQUIRE(expected.back().features.size() == 3 * 3);  // last, partial batch of 3 examples

        ListDataSetIterator source(examples(23), 5);
        AsyncDataSetIterator async(source, queueSize);
        CHECK(async.batch() == 5);
        CHECK(async.inputColumns() == 3);
        CHECK(async.totalOutcomes() == 2);
        CHECK(async.totalExamples() == 23);
        CHECK(async.resetSupported());
        CHECK_FALSE(async.asyncSupported());
        CHECK(async.queueSize() == queueSize);

        CHECK(async.hasNext());
        CHECK(async.hasNext());  // no side effect
        CHECK(drain(async) == expected);
        CHECK_FALSE(async.hasNext());
        CHECK_FALSE(async.hasNext());
        CHECK_THROWS_AS(async.next(), DataError);

        // A second epoch after reset() is the same again.
        async.reset();
        CHECK(drain(async) == expected);
      }
    });
  }

  TEST_CASE("AsyncDataSetIterator: fit through it gives bit-identical parameters") {
    bounded([] {
      const DataSet data = toyData(40);

      MultiLayerNetwork direct(denseConf(), Device::cpu(), 1);
      direct.init();
      ListDataSetIterator directIt(data, 6);  // 7 batches, the last of 4
      direct.fit(directIt, 3);

      MultiLayerNetwork viaAsync(denseConf(), Device::cpu(), 1);
      viaAsync.init();
      AsyncDataSetIterator asyncIt(std::make_unique<ListDataSetIterator>(data, 6), 2);
      viaAsync.fit(asyncIt, 3);

      CHECK(viaAsync.getIterationCount() == direct.getIterationCount());
      const std::vector<float> a = direct.params().toVector();
      const std::vector<float> b = viaAsync.params().toVector();
      REQUIRE(a.size() == b.size());
      REQUIRE(!a.empty());
      CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
      CHECK(viaAsync.score() == direct.score());
    });
  }

  TEST_CASE("AsyncDataSetIterator: reset mid-epoch, then a full epoch") {
    bounded([] {
      ListDataSetIterator direct(examples(17), 4);
      const std::vector<Values> expected = drain(direct);

      ScriptedSource source(17, 4);
      AsyncDataSetIterator async(source, 2);
      async.reset();  // before anything was read: fine
      REQUIRE(async.hasNext());
      const DataSet first = async.next();
      CHECK(first.features.at(0) == 0.0f);
      REQUIRE(async.hasNext());
      async.next();
      async.reset();  // mid-epoch, with prefetched batches in the queue
      async.reset();  // twice in a row
      CHECK(drain(async) == expected);
      async.reset();  // after the end
      CHECK(drain(async) == expected);
      CHECK(source.resets.load() == 4);
    });
  }

  TEST_CASE("AsyncDataSetIterator: an exception from the source's next() reaches the consumer") {
    bounded([] {
      ScriptedSource source(30, 3);
      source.throwOnNext = 3;
      AsyncDataSetIterator async(source, 4);
      int batches = 0;
      std::string message;
      try {
        while (async.hasNext()) {
          async.next();
          ++batches;
        }
        FAIL("the source's exception was swallowed");
      } catch (const SourceFailure& e) {
        message = e.what();
      }
      CHECK(batches == 2);  // batches 1 and 2 came out, the 3rd failed
      CHECK(message == "next failed at batch 3");
      // Failed until reset(): the same exception again, never a hang or a silent end.
      CHECK_THROWS_WITH_AS(async.hasNext(), "next failed at batch 3", SourceFailure);
      CHECK_THROWS_WITH_AS(async.next(), "next failed at batch 3", SourceFailure);

      async.reset();
      source.throwOnNext = 0;  // safe: reset() joined the producer and the next one starts lazily
      ListDataSetIterator direct(examples(30), 3);
      CHECK(drain(async) == drain(direct));
    });
  }

  TEST_CASE("AsyncDataSetIterator: an exception from the source's hasNext() reaches the consumer") {
    bounded([] {
      ScriptedSource source(30, 3);
      source.throwInHasNextAfter = 2;
      AsyncDataSetIterator async(source, 3);
      int batches = 0;
      try {
        while (async.hasNext()) {
          async.next();
          ++batches;
        }
        FAIL("the source's exception was swallowed");
      } catch (const SourceFailure& e) {
        CHECK(std::string(e.what()) == "hasNext failed after 2 batches");
      }
      CHECK(batches == 2);
      CHECK_THROWS_AS(async.hasNext(), SourceFailure);
      CHECK_THROWS_AS(async.next(), SourceFailure);

      // Through fit(): the exception comes out of fit, same type.
      MultiLayerNetwork net(denseConf(), Device::cpu(), 1);
      net.init();
      CHECK_THROWS_AS(net.fit(async), SourceFailure);
    });
  }

  TEST_CASE("AsyncDataSetIterator: destruction with a full, unread queue returns promptly") {
    bounded([] {
      ScriptedSource source(100000, 1);
      const auto t0 = std::chrono::steady_clock::now();
      {
        AsyncDataSetIterator async(source, 4);
        REQUIRE(async.hasNext());
        // The producer fills every slot and then waits for a free one.
        waitUntil([&] { return source.produced.load() >= 4; });
        std::this_thread::sleep_for(30ms);
        CHECK(source.produced.load() == 4);
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      CHECK(seconds < 2.0);
      CHECK(source.produced.load() == 4);  // nothing was produced after the wrapper was gone

      // A slow source: the destructor waits only for the next() call in progress.
      ScriptedSource slow(1000, 1);
      slow.sleepInNext = 50ms;
      const auto t1 = std::chrono::steady_clock::now();
      {
        AsyncDataSetIterator async(slow, 8);
        REQUIRE(async.hasNext());
      }
      CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() < 2.0);

      // Never started: nothing to join.
      { AsyncDataSetIterator unused(source, 2); }
    });
  }

  TEST_CASE("AsyncDataSetIterator: queue size 1 works") {
    bounded([] {
      ListDataSetIterator direct(examples(11), 2);
      const std::vector<Values> expected = drain(direct);
      ListDataSetIterator source(examples(11), 2);
      AsyncDataSetIterator async(source, 1);
      for (int epoch = 0; epoch < 3; ++epoch) {
        CAPTURE(epoch);
        CHECK(drain(async) == expected);
        async.reset();
      }
    });
  }

  TEST_CASE("AsyncDataSetIterator: a slow consumer never has more than queueSize+1 outstanding") {
    bounded([] {
      constexpr int kQueue = 3;
      ScriptedSource source(40, 2);  // 20 batches
      AsyncDataSetIterator async(source, kQueue);
      int64_t consumed = 0;
      int64_t maxOutstanding = 0;
      REQUIRE(async.hasNext());
      // Let the producer run ahead as far as it may.
      waitUntil([&] { return source.produced.load() >= kQueue; });
      std::this_thread::sleep_for(20ms);
      while (async.hasNext()) {
        const int64_t outstanding = source.produced.load() - consumed;
        maxOutstanding = std::max(maxOutstanding, outstanding);
        CHECK(outstanding <= kQueue + 1);
        async.next();
        ++consumed;
        std::this_thread::sleep_for(3ms);  // slow consumer
        CHECK(source.produced.load() - consumed <= kQueue + 1);
      }
      CHECK(consumed == 20);
      CHECK(maxOutstanding >= kQueue);  // it did prefetch
    });
  }

  TEST_CASE("AsyncDataSetIterator: consumerWaitSeconds measures a slow source") {
    bounded([] {
      ScriptedSource source(6, 1);  // 6 batches
      source.sleepInNext = 20ms;
      AsyncDataSetIterator async(source, 2);
      CHECK(async.consumerWaitSeconds() == 0.0);
      int n = 0;
      while (async.hasNext()) {
        async.next();
        ++n;
      }
      CHECK(n == 6);
      // The source needs >= 120 ms for the epoch and the consumer does nothing else.
      const double waited = async.consumerWaitSeconds();
      CHECK(waited >= 0.06);
      CHECK(waited < 5.0);
      async.resetStatistics();
      CHECK(async.consumerWaitSeconds() == 0.0);
      async.reset();
      REQUIRE(async.hasNext());  // waits for the first 20 ms batch again
      CHECK(async.consumerWaitSeconds() > 0.0);
    });
  }

  TEST_CASE("AsyncDataSetIterator: configuration errors") {
    ListDataSetIterator source(examples(4), 2);
    CHECK_THROWS_AS(AsyncDataSetIterator(source, 0), ConfigError);
    CHECK_THROWS_AS(AsyncDataSetIterator(source, -3), ConfigError);
    CHECK_THROWS_AS(AsyncDataSetIterator(std::unique_ptr<DataSetIterator>(), 2), ConfigError);
    CHECK_THROWS_AS(AsyncDataSetIterator(std::make_unique<ListDataSetIterator>(examples(4), 2), 0),
                    ConfigError);

    ScriptedSource threadBound(4, 2);
    threadBound.canAsync = false;
    CHECK_THROWS_AS(AsyncDataSetIterator(threadBound, 2), ConfigError);

    AsyncDataSetIterator inner(source, 2);
    CHECK_THROWS_AS(AsyncDataSetIterator(inner, 2), ConfigError);  // already asynchronous

    try {
      AsyncDataSetIterator bad(source, 0);
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).find("queueSize") != std::string::npos);
    }
  }

  TEST_CASE("AsyncDataSetIterator: a source that cannot reset") {
    bounded([] {
      ScriptedSource source(8, 2);
      source.canReset = false;
      AsyncDataSetIterator async(source, 2);
      CHECK_FALSE(async.resetSupported());
      REQUIRE(async.hasNext());
      async.next();
      CHECK_THROWS_AS(async.reset(), DataError);
      // The epoch goes on undisturbed.
      int rest = 0;
      while (async.hasNext()) {
        async.next();
        ++rest;
      }
      CHECK(rest == 3);
      CHECK(source.resets.load() == 0);
    });
  }
}
