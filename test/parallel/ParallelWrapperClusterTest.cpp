// ParallelWrapper across the ranks of a cluster, with the ranks as threads of this process
// (InProcessCluster runs the protocol MpiCluster runs; test/cluster runs it under mpirun).
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>

#include "TempDir.h"
#include "parallel/ClusterTestUtil.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;
using testutil::messageOf;
using testutil::runRanks;
using testutil::ShufflingIterator;
using testutil::VectorIterator;

namespace {

struct Result {
  std::vector<float> params, updaterState, layerState;
  double score = 0;
  int64_t iterations = 0;
  int epochs = 0;
  int64_t minibatchesInEpoch = 0;
};

Result resultOf(const MultiLayerNetwork& m) {
  return {m.params().toVector(), m.updaterState().toVector(), m.layerState().toVector(), m.score(),
          m.getIterationCount(), m.getEpochCount(),           m.getMinibatchesInEpoch()};
}

void checkSame(const Result& a, const Result& b) {
  CHECK(a.params == b.params);  // bit for bit (float ==; no NaN in a trained model)
  CHECK(a.updaterState == b.updaterState);
  CHECK(a.layerState == b.layerState);
  CHECK(a.score == b.score);
  CHECK(a.iterations == b.iterations);
  CHECK(a.epochs == b.epochs);
  CHECK(a.minibatchesInEpoch == b.minibatchesInEpoch);
}

using Configure = std::function<ParallelWrapper::Builder&(ParallelWrapper::Builder&)>;

// One process, `workers` workers.
Result alone(const MultiLayerConfiguration& conf, const std::vector<DataSet>& data, int workers,
             int epochs, const Configure& configure) {
  MultiLayerNetwork root(conf);
  root.init();
  auto builder = testutil::wrapperOnCpu(root).workers(workers).threadsPerWorker(1);
  auto wrapper = configure(builder).build();
  VectorIterator it(data);
  wrapper.fit(it, epochs);
  return resultOf(root);
}

// `ranks` ranks of one worker each; every rank's result. Rank r > 0 starts from a model
// initialised with another seed: fit() must replace it by rank 0's.
std::vector<Result> acrossRanks(const MultiLayerConfiguration& conf,
                                const std::vector<DataSet>& data, int ranks, int epochs,
                                const Configure& configure) {
  std::vector<Result> results(static_cast<size_t>(ranks));
  const auto failures = runRanks(ranks, [&](int rank, std::shared_ptr<Cluster> cluster) {
    MultiLayerConfiguration own = conf;
    own.seed += static_cast<uint64_t>(rank);
    MultiLayerNetwork root(own);
    root.init();
    auto builder =
        testutil::wrapperOnCpu(root).workers(1).threadsPerWorker(1).cluster(std::move(cluster));
    auto wrapper = configure(builder).build();
    VectorIterator it(data);
    wrapper.fit(it, epochs);
    results[static_cast<size_t>(rank)] = resultOf(root);
  });
  for (const auto& f : failures) REQUIRE(messageOf(f) == "");
  return results;
}

MultiLayerConfiguration batchNormNet() {
  return NeuralNetConfiguration::Builder()
      .seed(8)
      .updater(Adam(0.01))
      .list()
      .layer(DenseLayer::Builder().nIn(6).nOut(8).activation(Activation::IDENTITY).build())
      .layer(BatchNormalization::Builder().activation(Activation::RELU).build())
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::feedForward(6))
      .build();
}

// Calls `onRead` before serving batch `at` (1-based count of next() calls).
class HookedIterator : public VectorIterator {
 public:
  HookedIterator(std::vector<DataSet> data, int64_t at, std::function<void()> onRead)
      : VectorIterator(std::move(data)), at_(at), onRead_(std::move(onRead)) {}
  DataSet next() override {
    if (served() + 1 == at_) onRead_();
    return VectorIterator::next();
  }

 private:
  int64_t at_;
  std::function<void()> onRead_;
};

struct CountingListener : TrainingListener {
  std::atomic<int> calls{0};
  int64_t examples = 0;
  void iterationDone(const Model&, const IterationInfo& info) override {
    ++calls;
    examples += info.examples;
  }
};

// A small run of `workers` workers on `cluster`.
void fitFourBatches(std::shared_ptr<Cluster> cluster, int workers) {
  MultiLayerNetwork root(testutil::smallNet(Sgd(0.1)));
  root.init();
  auto wrapper = testutil::wrapperOnCpu(root)
                     .workers(workers)
                     .threadsPerWorker(1)
                     .cluster(std::move(cluster))
                     .build();
  VectorIterator it(testutil::batches(4, 4));
  wrapper.fit(it);
}

}  // namespace

TEST_SUITE("parallel") {
  TEST_CASE(
      "ParallelWrapper on a cluster: 2 ranks x 1 worker equal 1 process x 2 workers, bit for "
      "bit (averaging, with updater state)") {
    testutil::withinSeconds(120, [] {
      const auto conf = testutil::smallNet(Adam(0.01), 1e-3);
      const auto data = testutil::batches(11, 8, 5, 3);  // rounds of 3 do not divide 11
      auto k3 = [](ParallelWrapper::Builder& b) -> ParallelWrapper::Builder& {
        return b.averagingFrequency(3).prefetchBuffer(4);
      };
      const Result expected = alone(conf, data, 2, 2, k3);
      const auto ranks = acrossRanks(conf, data, 2, 2, k3);
      for (const Result& r : ranks) checkSame(r, expected);
      CHECK(expected.epochs == 2);
    });
  }

  TEST_CASE(
      "ParallelWrapper on a cluster: 3 ranks with uneven shards lose nothing and never hang") {
    testutil::withinSeconds(120, [] {
      const auto conf = testutil::smallNet(Nesterovs(0.05, 0.9));
      const auto data = testutil::batches(5, 4, 9, 2);  // ranks hold 2, 2 and 1 batches
      auto k2 = [](ParallelWrapper::Builder& b) -> ParallelWrapper::Builder& {
        return b.averagingFrequency(2);
      };
      const Result expected = alone(conf, data, 3, 1, k2);
      const auto ranks = acrossRanks(conf, data, 3, 1, k2);
      for (const Result& r : ranks) checkSame(r, expected);
      CHECK(expected.iterations == 2);
    });
  }

  TEST_CASE("ParallelWrapper on a cluster: shared gradients equal one process, bit for bit") {
    testutil::withinSeconds(120, [] {
      const auto conf = testutil::smallNet(Nesterovs(0.05, 0.9), 1e-3);
      const auto data = testutil::batches(9, 6, 2, 5);
      auto shared = [](ParallelWrapper::Builder& b) -> ParallelWrapper::Builder& {
        return b.trainingMode(TrainingMode::SHARED_GRADIENTS);
      };
      const Result expected = alone(conf, data, 2, 1, shared);
      const auto ranks = acrossRanks(conf, data, 2, 1, shared);
      for (const Result& r : ranks) checkSame(r, expected);
    });
  }

  TEST_CASE("ParallelWrapper on a cluster: BatchNormalization's statistics are pooled over ranks") {
    testutil::withinSeconds(120, [] {
      const auto data = testutil::batches(8, 10, 4);
      auto k2 = [](ParallelWrapper::Builder& b) -> ParallelWrapper::Builder& {
        return b.averagingFrequency(2);
      };
      const Result expected = alone(batchNormNet(), data, 2, 1, k2);
      REQUIRE_FALSE(expected.layerState.empty());
      const auto ranks = acrossRanks(batchNormNet(), data, 2, 1, k2);
      for (const Result& r : ranks) checkSame(r, expected);
    });
  }

  TEST_CASE(
      "ParallelWrapper on a cluster: listeners run on rank 0 only, with every rank's "
      "examples") {
    testutil::withinSeconds(120, [] {
      const auto data = testutil::batches(6, 4, 1, 3);
      std::vector<std::shared_ptr<CountingListener>> listeners{
          std::make_shared<CountingListener>(), std::make_shared<CountingListener>()};
      const auto failures = runRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
        MultiLayerNetwork root(testutil::smallNet(Sgd(0.1)));
        root.init();
        auto wrapper = testutil::wrapperOnCpu(root)
                           .workers(1)
                           .cluster(cluster)
                           .averagingFrequency(1)
                           .setListeners({listeners[static_cast<size_t>(rank)]})
                           .build();
        VectorIterator it(data);
        wrapper.fit(it);
      });
      for (const auto& f : failures) REQUIRE(messageOf(f) == "");
      CHECK(listeners[0]->calls == 3);
      CHECK(listeners[0]->examples == 5 * 4 + 3);
      CHECK(listeners[1]->calls == 0);
    });
  }

  TEST_CASE(
      "ParallelWrapper on a cluster: stopFit on one rank stops every rank after the same "
      "round") {
    testutil::withinSeconds(120, [] {
      const auto data = testutil::batches(40, 4);
      std::atomic<ParallelWrapper*> rankOne{nullptr};
      std::vector<Result> results(2);
      const auto failures = runRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
        MultiLayerNetwork root(testutil::smallNet(Sgd(0.1)));
        root.init();
        auto wrapper = testutil::wrapperOnCpu(root)
                           .workers(1)
                           .cluster(cluster)
                           .prefetchBuffer(0)
                           .averagingFrequency(2)
                           .build();
        if (rank == 1) rankOne = &wrapper;
        // Rank 1 asks to stop as it reads its third batch: it deals round 2 while round 1 trains.
        HookedIterator it(data, rank == 1 ? 3 : -1, [&] { rankOne.load()->stopFit(); });
        wrapper.fit(it, 3);
        results[static_cast<size_t>(rank)] = resultOf(root);
      });
      for (const auto& f : failures) REQUIRE(messageOf(f) == "");
      checkSame(results[0], results[1]);
      CHECK(results[0].iterations == 2);  // round 1's vote stopped both ranks
      CHECK(results[0].epochs == 0);
    });
  }

  TEST_CASE("ParallelWrapper on a cluster: an exception on one rank ends fit on every rank") {
    testutil::withinSeconds(120, [] {
      const auto data = testutil::batches(20, 4);
      const auto failures = runRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
        MultiLayerNetwork root(testutil::smallNet(Sgd(0.1)));
        root.init();
        auto wrapper = testutil::wrapperOnCpu(root).workers(1).cluster(cluster).build();
        HookedIterator it(data, rank == 1 ? 4 : -1,
                          [] { throw DataError("rank 1's disk is on fire"); });
        wrapper.fit(it);
      });
      REQUIRE(failures[1]);
      CHECK_THROWS_AS(std::rethrow_exception(failures[1]), DataError);
      CHECK(messageOf(failures[1]) == "rank 1's disk is on fire");
      REQUIRE(failures[0]);
      CHECK_THROWS_AS(std::rethrow_exception(failures[0]), ClusterError);
      CHECK(messageOf(failures[0]).find("rank 1 failed") != std::string::npos);
    });
  }

  TEST_CASE(
      "ParallelWrapper on a cluster: a rank that never comes makes fit fail after the "
      "timeout") {
    testutil::withinSeconds(60, [] {
      const auto failures = runRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
        if (rank == 1) return;  // died before fit
        cluster->setTimeout(std::chrono::milliseconds(300));
        fitFourBatches(std::move(cluster), 1);
      });
      REQUIRE(failures[0]);
      CHECK_THROWS_AS(std::rethrow_exception(failures[0]), ClusterError);
      CHECK(messageOf(failures[0]).find("did not complete within 300 ms") != std::string::npos);
    });
  }

  TEST_CASE(
      "ParallelWrapper on a cluster: ranks with different worker counts are a ConfigError "
      "on every rank") {
    testutil::withinSeconds(60, [] {
      const auto failures = runRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
        fitFourBatches(std::move(cluster), 1 + rank);
      });
      for (const auto& f : failures) {
        REQUIRE(f);
        CHECK_THROWS_AS(std::rethrow_exception(f), ConfigError);
        CHECK(messageOf(f).find("rank 0 has 1 workers") != std::string::npos);
      }
    });
  }

  TEST_CASE(
      "ParallelWrapper on a cluster: checkpoints on rank 0, resumed on every rank, end as "
      "the uninterrupted run, bit for bit") {
    testutil::withinSeconds(120, [] {
      const auto conf = testutil::smallNet(Adam(0.01));
      const auto data = testutil::batches(14, 4, 5, 3);
      const int epochs = 3;
      testutil::TempDir dir;
      auto builder = [&](MultiLayerNetwork& model, std::shared_ptr<Cluster> cluster) {
        return testutil::wrapperOnCpu(model)
            .workers(1)
            .threadsPerWorker(1)
            .averagingFrequency(2)
            .cluster(std::move(cluster))
            .checkpointEvery(Checkpoint::iterations(4), dir.path(), 2);  // rank 0 writes
      };
      struct CrashAt : TrainingListener {
        void iterationDone(const Model&, const IterationInfo& info) override {
          if (info.iteration >= 14) throw std::runtime_error("simulated crash");  // in epoch 1
        }
      };

      std::vector<Result> uninterrupted(2), resumed(2);
      auto failures = runRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
        MultiLayerNetwork root(conf);
        root.init();
        auto wrapper = testutil::wrapperOnCpu(root)
                           .workers(1)
                           .threadsPerWorker(1)
                           .averagingFrequency(2)
                           .cluster(std::move(cluster))
                           .build();
        ShufflingIterator it(data, 11);
        wrapper.fit(it, epochs);
        uninterrupted[static_cast<size_t>(rank)] = resultOf(root);
      });
      for (const auto& f : failures) REQUIRE(messageOf(f) == "");

      failures = runRanks(2, [&](int, std::shared_ptr<Cluster> cluster) {
        MultiLayerNetwork root(conf);
        root.init();
        auto wrapper =
            builder(root, std::move(cluster)).setListeners({std::make_shared<CrashAt>()}).build();
        ShufflingIterator it(data, 11);
        wrapper.fit(it, epochs);
      });
      CHECK(messageOf(failures[0]) == "simulated crash");
      CHECK(messageOf(failures[1]).find("rank 0 failed") != std::string::npos);

      failures = runRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
        // Rank 0 loads its checkpoint; rank 1 has none and starts from a fresh model.
        MultiLayerConfiguration other = conf;
        other.seed += 1;
        MultiLayerNetwork root = rank == 0
                                     ? MultiLayerNetwork::load(*Checkpoints::latest(dir.path()))
                                     : MultiLayerNetwork(other);
        if (rank != 0) root.init();
        ShufflingIterator it(data, 11);
        builder(root, std::move(cluster)).build().resume(it, epochs);
        resumed[static_cast<size_t>(rank)] = resultOf(root);
      });
      for (const auto& f : failures) REQUIRE(messageOf(f) == "");
      for (const Result& r : resumed) checkSame(r, uninterrupted[0]);
      checkSame(uninterrupted[1], uninterrupted[0]);
    });
  }
}
