#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

#include "LenetConfiguration.h"
#include "nn/conf/BatchStatsTestLayer.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;

namespace {

constexpr int64_t kWidth = 6;  // testutil::smallNet: 6 inputs, 3 outputs

MultiLayerNetwork smallModel() {
  MultiLayerNetwork m(testutil::smallNet(Sgd(0.1)));
  m.init();
  return m;
}

// The same architecture with other parameters (every one scaled), so outputs differ.
MultiLayerNetwork scaledModel(const MultiLayerNetwork& from, float factor) {
  MultiLayerNetwork m = from.clone();
  float* p = m.params().data();
  for (int64_t i = 0; i < m.numParams(); ++i) p[i] *= factor;
  return m;
}

Tensor randomFeatures(int64_t rows, int64_t width, uint64_t seed) {
  Random random(seed);
  Tensor f(Shape{rows, width});
  for (int64_t i = 0; i < f.numel(); ++i) f.data()[i] = static_cast<float>(random.uniform(-1, 1));
  return f;
}

// oneDNN chooses kernels and blocking by shape, so the batch size changes the order of float
// operations: a row computed in a batch of M rows can differ from the same row computed alone in
// the last bits (measured: at most 4 ulps, 1.2e-7, on these softmax outputs; 1.0e-6 on a trained
// LeNet). BATCHED results are held to this; a request that ran alone (SEQUENTIAL, or alone in its
// batch) must be bit-identical.
constexpr float kBatchedTolerance = 1e-6f;

bool bitIdentical(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), static_cast<size_t>(a.numel()) * sizeof(float)) == 0;
}

float maxAbsDiff(const Tensor& a, const Tensor& b) {
  float d = 0;
  for (int64_t i = 0; i < std::min(a.numel(), b.numel()); ++i)
    d = std::max(d, std::abs(a.at(i) - b.at(i)));
  return d;
}

bool batchedEqual(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && maxAbsDiff(a, b) <= kBatchedTolerance;
}

// Holds a worker inside the batch listener until released, so a test can line requests up in the
// queue behind it.
class Gate {
 public:
  void wait() {
    std::unique_lock lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  void awaitWaiter() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return waiting_ > 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int waiting_ = 0;
  bool open_ = false;
};

// Waits until `n` requests are queued (the enclosing withinSeconds bounds it).
void awaitQueued(const ParallelInference& inference, int64_t n) {
  while (inference.statistics().queuedRequests < n)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// A request sent from its own thread; result() joins it and returns the result or rethrows.
class AsyncRequest {
 public:
  AsyncRequest(ParallelInference& inference, Tensor features)
      : features_(std::move(features)), thread_([this, &inference] {
          try {
            result_ = inference.output(features_);
          } catch (...) {
            error_ = std::current_exception();
          }
          done_ = true;
        }) {}
  ~AsyncRequest() {
    if (thread_.joinable()) thread_.join();
  }
  bool done() const { return done_; }
  Tensor result() {
    if (thread_.joinable()) thread_.join();
    if (error_) std::rethrow_exception(error_);
    return result_;
  }

 private:
  Tensor features_, result_;
  std::exception_ptr error_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// 8 threads x `perThread` requests of 1..maxRows rows each against `model`; every result is
// compared with model.output() of the same features computed alone. Returns the largest
// difference seen (0 when every row is bit-identical).
float concurrentCallers(const MultiLayerNetwork& source, ParallelInference::Builder builder,
                        int64_t width, int perThread, int maxRows) {
  constexpr int kThreads = 8;
  MultiLayerNetwork model = source.clone();
  std::vector<std::vector<Tensor>> features(kThreads), expected(kThreads);
  int64_t examples = 0;
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < perThread; ++i) {
      const int64_t rows = 1 + (t * 7 + i * 3) % maxRows;
      examples += rows;
      features[t].push_back(randomFeatures(rows, width, static_cast<uint64_t>(1000 * t + i)));
      expected[t].push_back(model.output(features[t].back()));
    }
  ParallelInference inference = builder.build();
  std::mutex mutex;
  float worst = 0;
  int wrongShape = 0, failures = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < perThread; ++i) {
        try {
          const Tensor out = inference.output(features[t][i]);
          std::lock_guard lock(mutex);
          if (out.shape() != expected[t][i].shape())
            ++wrongShape;
          else
            worst = std::max(worst, maxAbsDiff(out, expected[t][i]));
        } catch (...) {
          std::lock_guard lock(mutex);
          ++failures;
        }
      }
    });
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  CHECK(wrongShape == 0);
  const InferenceStatistics stats = inference.statistics();
  CHECK(stats.requests == kThreads * perThread);
  CHECK(stats.examples == examples);
  CHECK(stats.failedRequests == 0);
  CHECK(stats.maxBatchExamples <= std::max<int64_t>(inference.batchLimit(), maxRows));
  if (inference.inferenceMode() == InferenceMode::SEQUENTIAL)
    CHECK(stats.batches == stats.requests);
  return worst;
}

}  // namespace

TEST_SUITE("parallel") {
  TEST_CASE("ParallelInference serves the model's layer state, also after updateModel") {
    testutil::registerBatchStatsLayer();
    MultiLayerNetwork model(testutil::batchStatsNet(2));
    model.init();
    // The layer adds its state's means in inference mode, so served outputs show the state.
    const std::vector<float> firstState{0, 0, 0, 0, 1.5f, -2, 0};
    model.setLayerState(Tensor::fromVector({7}, firstState));
    const Tensor x = Tensor::fromVector({3, 2}, {1, 2, 3, 4, 5, 6});
    auto inference = testutil::inferenceOnCpu(model).workers(2).build();
    CHECK(inference.output(x).toVector() == model.output(x).toVector());

    MultiLayerNetwork updated = model.clone();
    updated.setLayerState(Tensor::fromVector({7}, {0, 0, 0, 0, -7, 3, 0}));
    inference.updateModel(updated);
    const auto expected = updated.output(x).toVector();
    CHECK(expected != model.output(x).toVector());
    bool served = false;
    for (int attempt = 0; attempt < 200 && !served; ++attempt) {
      served = inference.output(x).toVector() == expected;
      if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    CHECK(served);
  }

  TEST_CASE(
      "ParallelInference: 8 concurrent callers get model.output of their own features, in both "
      "modes") {
    testutil::withinSeconds(120, [] {
      const MultiLayerNetwork model = smallModel();
      for (InferenceMode mode : {InferenceMode::BATCHED, InferenceMode::SEQUENTIAL})
        for (int workers : {1, 2}) {
          CAPTURE(static_cast<int>(mode));
          CAPTURE(workers);
          auto builder =
              testutil::inferenceOnCpu(model).workers(workers).inferenceMode(mode).batchLimit(8);
          const float worst = concurrentCallers(model, builder, kWidth, 60, 5);
          if (mode == InferenceMode::SEQUENTIAL)
            CHECK(worst == 0.0f);
          else
            CHECK(worst <= kBatchedTolerance);
        }
    });
  }

  TEST_CASE(
      "ParallelInference: LeNet rows batched with others equal model.output of each request "
      "alone") {
    testutil::withinSeconds(120, [] {
      MultiLayerNetwork lenet(samples::lenetConfiguration());
      lenet.init();
      for (InferenceMode mode : {InferenceMode::BATCHED, InferenceMode::SEQUENTIAL}) {
        CAPTURE(static_cast<int>(mode));
        auto builder =
            testutil::inferenceOnCpu(lenet).workers(2).inferenceMode(mode).batchLimit(16);
        const float worst = concurrentCallers(lenet, builder, 28 * 28, 6, 3);
        if (mode == InferenceMode::SEQUENTIAL)
          CHECK(worst == 0.0f);
        else
          CHECK(worst <= kBatchedTolerance);
      }
    });
  }

  TEST_CASE(
      "ParallelInference: requests queued behind a busy worker are batched, FIFO, up to "
      "batchLimit") {
    testutil::withinSeconds(60, [] {
      MultiLayerNetwork model = smallModel();
      Gate gate;
      std::mutex mutex;
      std::vector<InferenceBatch> seen;
      auto inference = testutil::inferenceOnCpu(model)
                           .workers(1)
                           .batchLimit(8)
                           .batchListener([&](const InferenceBatch& b) {
                             bool first = false;
                             {
                               std::lock_guard lock(mutex);
                               seen.push_back(b);
                               first = seen.size() == 1;
                             }
                             if (first) gate.wait();
                           })
                           .build();
      // The first request occupies the worker; the rest queue up: rows 1,2,3 (6 <= 8, then 4 does
      // not fit), then 4,1 (5), then 12 alone (over batchLimit, not split), then 1.
      const std::vector<int64_t> rows = {1, 1, 2, 3, 4, 1, 12, 1};
      std::vector<Tensor> features, expected;
      for (size_t i = 0; i < rows.size(); ++i) {
        features.push_back(randomFeatures(rows[i], kWidth, 50 + i));
        expected.push_back(model.output(features.back()));
      }
      std::vector<std::unique_ptr<AsyncRequest>> requests;
      requests.push_back(std::make_unique<AsyncRequest>(inference, features[0]));
      gate.awaitWaiter();
      for (size_t i = 1; i < rows.size(); ++i) {
        requests.push_back(std::make_unique<AsyncRequest>(inference, features[i]));
        awaitQueued(inference, static_cast<int64_t>(i));  // one at a time: the queue order is known
      }
      gate.open();
      for (size_t i = 0; i < rows.size(); ++i) {
        CAPTURE(i);
        const Tensor out = requests[i]->result();
        const bool alone = i == 0 || i == 6 || i == 7;  // in a batch of their own
        CHECK((alone ? bitIdentical(out, expected[i]) : batchedEqual(out, expected[i])));
      }

      const InferenceStatistics stats = inference.statistics();
      CHECK(stats.requests == 8);
      CHECK(stats.batches == 5);
      CHECK(stats.maxBatchRequests == 3);
      CHECK(stats.maxBatchExamples == 12);
      CHECK(stats.meanBatchRequests() == doctest::Approx(8.0 / 5));
      std::lock_guard lock(mutex);
      REQUIRE(seen.size() == 5);
      const std::vector<std::pair<int, int64_t>> batches = {
          {1, 1}, {3, 6}, {2, 5}, {1, 12}, {1, 1}};
      for (size_t b = 0; b < batches.size(); ++b) {
        CAPTURE(b);
        CHECK(seen[b].requests == batches[b].first);
        CHECK(seen[b].examples == batches[b].second);
        CHECK(seen[b].worker == 0);
        CHECK(seen[b].modelVersion == 0);
      }
    });
  }

  TEST_CASE("ParallelInference: SEQUENTIAL runs each queued request alone") {
    testutil::withinSeconds(60, [] {
      MultiLayerNetwork model = smallModel();
      Gate gate;
      std::atomic<int> calls{0};
      auto inference = testutil::inferenceOnCpu(model)
                           .workers(1)
                           .inferenceMode(InferenceMode::SEQUENTIAL)
                           .batchListener([&](const InferenceBatch& b) {
                             CHECK(b.requests == 1);
                             if (calls++ == 0) gate.wait();
                           })
                           .build();
      std::vector<std::unique_ptr<AsyncRequest>> requests;
      requests.push_back(std::make_unique<AsyncRequest>(inference, randomFeatures(2, kWidth, 1)));
      gate.awaitWaiter();
      for (int i = 0; i < 4; ++i)
        requests.push_back(
            std::make_unique<AsyncRequest>(inference, randomFeatures(1, kWidth, 2 + i)));
      awaitQueued(inference, 4);
      gate.open();
      for (auto& r : requests) r->result();
      CHECK(inference.statistics().batches == 5);
      CHECK(inference.statistics().maxBatchRequests == 1);
    });
  }

  TEST_CASE(
      "ParallelInference: updateModel under load drops nothing and later requests see the new "
      "model") {
    testutil::withinSeconds(120, [] {
      MultiLayerNetwork modelA = smallModel();
      const MultiLayerNetwork modelB = scaledModel(modelA, 1.75f);
      constexpr int kThreads = 8, kPerThread = 80;
      std::vector<std::vector<Tensor>> features(kThreads), fromA(kThreads), fromB(kThreads);
      MultiLayerNetwork referenceB = modelB.clone();
      for (int t = 0; t < kThreads; ++t)
        for (int i = 0; i < kPerThread; ++i) {
          features[t].push_back(
              randomFeatures(1 + (t + i) % 4, kWidth, static_cast<uint64_t>(7000 + 100 * t + i)));
          fromA[t].push_back(modelA.output(features[t].back()));
          fromB[t].push_back(referenceB.output(features[t].back()));
          REQUIRE(maxAbsDiff(fromA[t].back(), fromB[t].back()) >
                  1e-3f);  // the models are told apart
        }
      auto inference = testutil::inferenceOnCpu(modelA).workers(2).batchLimit(8).build();
      std::atomic<int> served{0}, failures{0}, neither{0}, sawB{0}, aAfterB{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          bool seenB = false;
          for (int i = 0; i < kPerThread; ++i) {
            try {
              const Tensor out = inference.output(features[t][i]);
              const bool isA = batchedEqual(out, fromA[t][i]), isB = batchedEqual(out, fromB[t][i]);
              if (!isA && !isB) ++neither;
              if (isB) seenB = true;
              if (isA && seenB) ++aAfterB;  // one caller's requests are sequential: no going back
              ++served;
            } catch (...) {
              ++failures;
            }
          }
          if (seenB) ++sawB;
        });
      while (served < kThreads * kPerThread / 4) std::this_thread::yield();
      inference.updateModel(modelB);
      // Whatever was in flight, a request sent after updateModel() returned runs on the new model.
      for (int i = 0; i < 10; ++i)
        CHECK(batchedEqual(inference.output(features[0][i]), fromB[0][i]));
      for (auto& t : threads) t.join();
      CHECK(failures == 0);
      CHECK(neither == 0);
      CHECK(aAfterB == 0);
      CHECK(served == kThreads * kPerThread);
      CHECK(inference.statistics().modelUpdates == 1);
      CHECK(inference.statistics().requests == kThreads * kPerThread + 10);
    });
  }

  TEST_CASE(
      "ParallelInference: updateModel lets a taken batch finish on the old model, queued ones run "
      "on the new") {
    testutil::withinSeconds(60, [] {
      MultiLayerNetwork modelA = smallModel();
      MultiLayerNetwork modelB = scaledModel(modelA, -0.5f);
      Gate gate;
      std::vector<int64_t> versions;
      std::mutex mutex;
      auto inference = testutil::inferenceOnCpu(modelA)
                           .workers(1)
                           .batchListener([&](const InferenceBatch& b) {
                             {
                               std::lock_guard lock(mutex);
                               versions.push_back(b.modelVersion);
                             }
                             if (b.modelVersion == 0) gate.wait();
                           })
                           .build();
      const Tensor first = randomFeatures(2, kWidth, 1), queued = randomFeatures(3, kWidth, 2);
      AsyncRequest taken(inference, first);
      gate.awaitWaiter();
      AsyncRequest waiting(inference, queued);
      awaitQueued(inference, 1);
      inference.updateModel(modelB);
      // The caller's model may change afterwards: updateModel copied it.
      modelB.params().fill(0);
      gate.open();
      MultiLayerNetwork referenceB = scaledModel(modelA, -0.5f);
      CHECK(bitIdentical(taken.result(), modelA.output(first)));
      CHECK(bitIdentical(waiting.result(), referenceB.output(queued)));
      std::lock_guard lock(mutex);
      CHECK(versions == std::vector<int64_t>{0, 1});
    });
  }

  TEST_CASE(
      "ParallelInference: idle workers rebuild their replicas as soon as a model is published") {
    testutil::withinSeconds(60, [] {
      MultiLayerNetwork modelA = smallModel();
      const MultiLayerNetwork modelB = scaledModel(modelA, 2.0f);
      MultiLayerNetwork referenceB = modelB.clone();
      for (bool warmUp : {true, false}) {
        CAPTURE(warmUp);
        auto inference = testutil::inferenceOnCpu(modelA).workers(2).warmUp(warmUp).build();
        inference.updateModel(modelB);
        // No request is sent: only the eager path can rebuild them.
        while (inference.statistics().replicaSwaps < 2)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const Tensor f = randomFeatures(3, kWidth, 8);
        CHECK(bitIdentical(inference.output(f), referenceB.output(f)));
        CHECK(inference.statistics().replicaSwaps == 2);  // the request needed no further rebuild
        CHECK(inference.statistics().modelUpdates == 1);
      }
    });
  }

  TEST_CASE(
      "ParallelInference: QueueFullPolicy::FAIL throws QueueFullError at once, BLOCK waits for "
      "room") {
    for (QueueFullPolicy policy : {QueueFullPolicy::FAIL, QueueFullPolicy::BLOCK}) {
      CAPTURE(static_cast<int>(policy));
      testutil::withinSeconds(60, [policy] {
        MultiLayerNetwork model = smallModel();
        Gate gate;
        std::atomic<int> batches{0};
        auto inference = testutil::inferenceOnCpu(model)
                             .workers(1)
                             .queueLimit(2)
                             .queueFullPolicy(policy)
                             .batchListener([&](const InferenceBatch&) {
                               if (batches++ == 0) gate.wait();
                             })
                             .build();
        AsyncRequest busy(inference, randomFeatures(1, kWidth, 1));
        gate.awaitWaiter();
        AsyncRequest q1(inference, randomFeatures(1, kWidth, 2)),
            q2(inference, randomFeatures(1, kWidth, 3));
        awaitQueued(inference, 2);
        const Tensor extra = randomFeatures(1, kWidth, 4);
        const Tensor expected = model.output(extra);
        if (policy == QueueFullPolicy::FAIL) {
          CHECK_THROWS_AS(inference.output(extra), QueueFullError);
          CHECK_THROWS_WITH(inference.output(extra), doctest::Contains("queueLimit 2"));
          CHECK(inference.statistics().rejectedRequests == 2);
          gate.open();
          q1.result();
          q2.result();
          CHECK(bitIdentical(inference.output(extra), expected));  // room again
        } else {
          AsyncRequest blocked(inference, extra);
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          CHECK_FALSE(blocked.done());  // still waiting for room: the queue is full
          CHECK(inference.statistics().queuedRequests == 2);
          gate.open();
          CHECK(bitIdentical(blocked.result(), expected));
          CHECK(inference.statistics().rejectedRequests == 0);
        }
        busy.result();
        q1.result();
        q2.result();
        CHECK(inference.statistics().requests == 4);
      });
    }
  }

  TEST_CASE("ParallelInference: bad input throws to its caller only") {
    testutil::withinSeconds(60, [] {
      MultiLayerNetwork model = smallModel();
      auto inference = testutil::inferenceOnCpu(model).workers(2).build();
      CHECK_THROWS_AS(inference.output(Tensor()), ShapeError);
      CHECK_THROWS_AS(inference.output(Tensor(Shape{0, kWidth})), ShapeError);
      CHECK_THROWS_AS(inference.output(Tensor(Shape{kWidth})), ShapeError);
      CHECK_THROWS_WITH(inference.output(Tensor(Shape{2, 5})),
                        doctest::Contains("features [2, 5] do not match the model's input type"));
      Tensor nan = randomFeatures(3, kWidth, 9);
      nan.data()[2 * kWidth + 4] = std::numeric_limits<float>::quiet_NaN();
      CHECK_THROWS_AS(inference.output(nan), DataError);
      CHECK_THROWS_WITH(inference.output(nan), doctest::Contains("example 2, value 4"));
      // Meanwhile, good requests from other threads are served.
      std::atomic<int> good{0}, bad{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
          for (int i = 0; i < 30; ++i) {
            try {
              if (t % 2)
                inference.output(Tensor(Shape{1, kWidth + 1}));
              else
                inference.output(randomFeatures(1, kWidth, static_cast<uint64_t>(i)));
              ++good;
            } catch (const ShapeError&) {
              ++bad;
            }
          }
        });
      for (auto& t : threads) t.join();
      CHECK(good == 60);
      CHECK(bad == 60);
      CHECK(inference.statistics().requests == 60);  // bad input never reached a worker
    });
  }

  TEST_CASE("ParallelInference: rejectNonFinite(false) passes NaN through to the model") {
    MultiLayerNetwork model = smallModel();
    auto inference = testutil::inferenceOnCpu(model).workers(1).rejectNonFinite(false).build();
    Tensor f = randomFeatures(2, kWidth, 3);
    f.data()[0] = std::numeric_limits<float>::infinity();
    const Tensor out = inference.output(f);
    CHECK(out.shape() == Shape{2, 3});
    CHECK(bitIdentical(out.rows(1, 2), model.output(f).rows(1, 2)));
  }

  TEST_CASE(
      "ParallelInference: a failing forward pass reaches the callers of that batch and the worker "
      "keeps serving") {
    testutil::withinSeconds(60, [] {
      MultiLayerNetwork model = smallModel();
      Gate gate;
      std::atomic<int> batches{0};
      auto inference = testutil::inferenceOnCpu(model)
                           .workers(1)
                           .batchListener([&](const InferenceBatch&) {
                             const int b = batches++;
                             if (b == 0) gate.wait();
                             if (b == 1) throw BackendError("injected failure in batch 1");
                           })
                           .build();
      const Tensor f0 = randomFeatures(1, kWidth, 1), f1 = randomFeatures(2, kWidth, 2),
                   f2 = randomFeatures(1, kWidth, 3), f3 = randomFeatures(1, kWidth, 4);
      AsyncRequest first(inference, f0);
      gate.awaitWaiter();
      AsyncRequest failing1(inference, f1);
      awaitQueued(inference, 1);
      AsyncRequest failing2(inference, f2);
      awaitQueued(inference, 2);
      gate.open();
      CHECK(bitIdentical(first.result(), model.output(f0)));
      CHECK_THROWS_AS(failing1.result(), BackendError);
      CHECK_THROWS_WITH(failing2.result(), "injected failure in batch 1");
      CHECK(bitIdentical(inference.output(f3), model.output(f3)));
      const InferenceStatistics stats = inference.statistics();
      CHECK(stats.failedRequests == 2);
      CHECK(stats.requests == 4);
    });
  }

  TEST_CASE("ParallelInference: shutdown with queued requests drains them, without hanging") {
    testutil::withinSeconds(60, [] {
      MultiLayerNetwork model = smallModel();
      Gate gate;
      std::atomic<int> batches{0};
      auto inference = testutil::inferenceOnCpu(model)
                           .workers(1)
                           .inferenceMode(InferenceMode::SEQUENTIAL)
                           .batchListener([&](const InferenceBatch&) {
                             if (batches++ == 0) gate.wait();
                           })
                           .build();
      std::vector<Tensor> features;
      std::vector<std::unique_ptr<AsyncRequest>> requests;
      for (int i = 0; i < 6; ++i) {
        features.push_back(randomFeatures(1 + i % 3, kWidth, static_cast<uint64_t>(i)));
        requests.push_back(std::make_unique<AsyncRequest>(inference, features.back()));
        if (i == 0) gate.awaitWaiter();
      }
      awaitQueued(inference, 5);
      std::thread stopper([&] { inference.shutdown(); });
      while (!inference.isShutdown()) std::this_thread::yield();
      CHECK_THROWS_AS(inference.output(features[0]), InferenceShutDownError);
      gate.open();
      stopper.join();
      for (size_t i = 0; i < requests.size(); ++i)
        CHECK(bitIdentical(requests[i]->result(), model.output(features[i])));
      CHECK(inference.statistics().requests == 6);
      inference.shutdown();  // idempotent
      CHECK_THROWS_AS(inference.output(features[0]), InferenceShutDownError);
      CHECK_THROWS_AS(inference.updateModel(model), InferenceShutDownError);
    });
  }

  TEST_CASE(
      "ParallelInference: drainOnShutdown(false) fails queued requests and blocked callers with "
      "InferenceShutDownError") {
    testutil::withinSeconds(60, [] {
      MultiLayerNetwork model = smallModel();
      Gate gate;
      std::atomic<int> batches{0};
      auto inference = testutil::inferenceOnCpu(model)
                           .workers(1)
                           .queueLimit(3)
                           .drainOnShutdown(false)
                           .batchListener([&](const InferenceBatch&) {
                             if (batches++ == 0) gate.wait();
                           })
                           .build();
      const Tensor f = randomFeatures(1, kWidth, 5);
      AsyncRequest inFlight(inference, f);
      gate.awaitWaiter();
      std::vector<std::unique_ptr<AsyncRequest>> queued;
      for (int i = 0; i < 3; ++i) queued.push_back(std::make_unique<AsyncRequest>(inference, f));
      awaitQueued(inference, 3);
      AsyncRequest blocked(inference, f);  // BLOCK: waits for room
      std::thread stopper([&] { inference.shutdown(); });
      while (!inference.isShutdown()) std::this_thread::yield();
      gate.open();
      stopper.join();
      CHECK(bitIdentical(inFlight.result(), model.output(f)));  // already taken: completed
      for (auto& r : queued) CHECK_THROWS_AS(r->result(), InferenceShutDownError);
      CHECK_THROWS_AS(blocked.result(), InferenceShutDownError);
      CHECK(inference.statistics().requests == 1);
    });
  }

  TEST_CASE("ParallelInference: destructor, move and repeated shutdown are safe") {
    testutil::withinSeconds(60, [] {
      MultiLayerNetwork model = smallModel();
      const Tensor f = randomFeatures(2, kWidth, 1);
      std::optional<ParallelInference> holder(testutil::inferenceOnCpu(model).workers(2).build());
      ParallelInference moved = std::move(*holder);
      CHECK(holder->isShutdown());
      CHECK_THROWS_AS(holder->output(f), InferenceShutDownError);
      holder.reset();  // destroying a moved-from object
      CHECK(moved.workers() == 2);
      CHECK(bitIdentical(moved.output(f), model.output(f)));
      ParallelInference other = testutil::inferenceOnCpu(model).workers(1).build();
      other = std::move(moved);  // shuts the old `other` down, takes over `moved`'s workers
      CHECK(other.workers() == 2);
      CHECK(bitIdentical(other.output(f), model.output(f)));
      other.shutdown();
      other.shutdown();
      CHECK(other.isShutdown());
    });
  }

  TEST_CASE(
      "ParallelInference::Builder: defaults, invalid settings and mismatched models are "
      "ConfigErrors") {
    MultiLayerNetwork model = smallModel();
    {
      auto inference = ParallelInference::Builder(model).build();
      CHECK(inference.devices() == defaultDevices());
      CHECK(inference.workers() == std::max(1, cudaDeviceCount()));
      CHECK(inference.threadsPerWorker() ==
            std::max(1, hardwareConcurrency() / inference.workers()));
      CHECK(inference.batchLimit() == 32);
      CHECK(inference.inferenceMode() == InferenceMode::BATCHED);
    }
    CHECK_THROWS_WITH_AS(ParallelInference::Builder(model).batchLimit(0).build(),
                         doctest::Contains("batchLimit must be >= 1, got 0"), ConfigError);
    CHECK_THROWS_WITH_AS(ParallelInference::Builder(model).queueLimit(-3).build(),
                         doctest::Contains("queueLimit must be >= 1, got -3"), ConfigError);
    CHECK_THROWS_AS(ParallelInference::Builder(model).workers(-1).build(), ConfigError);
    CHECK_THROWS_WITH_AS(ParallelInference::Builder(model).devices({Device::cuda(99)}).build(),
                         doctest::Contains("device cuda:99 is not visible"), ConfigError);
    CHECK_THROWS_AS(ParallelInference::Builder(model).threadsPerWorker(-1).build(), ConfigError);
    MultiLayerNetwork uninitialised(testutil::smallNet(Sgd(0.1)));
    CHECK_THROWS_AS(ParallelInference::Builder(uninitialised).build(), ConfigError);

    auto inference = testutil::inferenceOnCpu(model).workers(1).build();
    MultiLayerNetwork lenet(samples::lenetConfiguration());
    lenet.init();
    CHECK_THROWS_WITH_AS(inference.updateModel(lenet),
                         doctest::Contains("maps 784 inputs to 10 outputs"), ConfigError);
    CHECK_THROWS_AS(inference.updateModel(uninitialised), ConfigError);
    const Tensor f = randomFeatures(1, kWidth, 2);
    CHECK(bitIdentical(inference.output(f), model.output(f)));  // still serving the old model
  }

  TEST_CASE(
      "ParallelInference: LSTM requests of 3, 5 and 8 steps batched together answer as alone") {
    const auto output = RnnOutputLayer::Builder(LossFunction::MCXENT)
                            .nOut(3)
                            .activation(Activation::SOFTMAX)
                            .build();
    MultiLayerNetwork network(NeuralNetConfiguration::Builder()
                                  .seed(9)
                                  .list()
                                  .layer(LSTM::Builder().nOut(5).build())
                                  .layer(output)
                                  .setInputType(InputType::recurrent(4))
                                  .build());
    ComputationGraph graph(NeuralNetConfiguration::Builder()
                               .seed(9)
                               .graphBuilder()
                               .addInputs("in")
                               .setInputTypes(InputType::recurrent(4))
                               .addLayer("lstm", LSTM::Builder().nOut(5).build(), "in")
                               .addLayer("out", output, "lstm")
                               .setOutputs("out")
                               .build());
    Model* models[] = {&network, &graph};
    for (Model* served : models) {
      CAPTURE(served->configurationJson().substr(0, 40));
      testutil::withinSeconds(60, [served] {
        Model& model = *served;
        model.init();
        Gate gate;
        std::atomic<int> batches{0};
        auto inference = testutil::inferenceOnCpu(model)
                             .workers(1)
                             .batchLimit(16)
                             .batchListener([&](const InferenceBatch&) {
                               if (batches++ == 0) gate.wait();
                             })
                             .build();
        // The first request holds the worker; the three behind it of 3, 5 and 8 steps (2, 1 and 3
        // sequences) form one padded batch.
        const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 2}, {2, 3}, {1, 5}, {3, 8}};
        std::vector<Tensor> features, expected;
        for (size_t i = 0; i < shapes.size(); ++i) {
          Random random(70 + i);
          Tensor f(Shape{shapes[i].first, 4, shapes[i].second});
          for (int64_t k = 0; k < f.numel(); ++k)
            f.data()[k] = static_cast<float>(random.uniform(-1, 1));
          features.push_back(f);
          expected.push_back(model.outputSingle(f, false));
        }
        std::vector<std::unique_ptr<AsyncRequest>> requests;
        requests.push_back(std::make_unique<AsyncRequest>(inference, features[0]));
        gate.awaitWaiter();
        for (size_t i = 1; i < shapes.size(); ++i) {
          requests.push_back(std::make_unique<AsyncRequest>(inference, features[i]));
          awaitQueued(inference, static_cast<int64_t>(i));
        }
        gate.open();
        for (size_t i = 0; i < shapes.size(); ++i) {
          CAPTURE(i);
          const Tensor out = requests[i]->result();
          CHECK(out.shape() == Shape{shapes[i].first, 3, shapes[i].second});
          CHECK(batchedEqual(out, expected[i]));
        }
        const InferenceStatistics stats = inference.statistics();
        CHECK(stats.batches == 2);
        CHECK(stats.maxBatchRequests == 3);
        CHECK(stats.maxBatchExamples == 6);

        // Sequences that do not fit the input type are refused on the caller's thread.
        CHECK_THROWS_AS(inference.output(Tensor(Shape{2, 3, 5})), ShapeError);
        CHECK_THROWS_AS(inference.output(Tensor(Shape{2, 4})), ShapeError);
      });
    }
  }
}
