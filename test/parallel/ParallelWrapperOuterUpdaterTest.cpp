// ParallelWrapper's outer updater (RoundCombine.h): the averaged change of the workers taken as a
// gradient by an updater of its own, against a hand computation, in one process and across ranks,
// and through a checkpoint and resume.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "TempDir.h"
#include "nn/core/AtomicFile.h"
#include "parallel/ClusterTestUtil.h"
#include "parallel/ParallelTestUtil.h"
#include "parallel/RoundCombine.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;
using testutil::bitIdentical;
using testutil::messageOf;
using testutil::ShufflingIterator;
using testutil::TempDir;
using testutil::VectorIterator;

namespace {

MultiLayerNetwork initialized(const MultiLayerConfiguration& conf, int threads = 0) {
  MultiLayerNetwork m(conf, Device::cpu(), threads);
  m.init();
  return m;
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

std::vector<double> toDouble(const Tensor& t) {
  const auto v = t.toVector();
  return {v.begin(), v.end()};
}

// A replica of the wrapper's kind (one thread) starting from `params`, trained on `batches`.
std::vector<double> trainedFrom(const MultiLayerConfiguration& conf,
                                const std::vector<double>& params,
                                const std::vector<DataSet>& batches) {
  MultiLayerNetwork m = initialized(conf, 1);
  std::vector<float> p(params.begin(), params.end());
  m.setParams(Tensor::fromVector(Shape{static_cast<int64_t>(p.size())}, p));
  for (const DataSet& b : batches) m.fit(b);
  return toDouble(m.params());
}

// Throws at the first round ending at or after iteration `throwAt` (a crash).
struct CrashAt : TrainingListener {
  int64_t throwAt = -1;
  void iterationDone(const Model&, const IterationInfo& info) override {
    if (throwAt >= 0 && info.iteration >= throwAt) throw std::runtime_error("simulated crash");
  }
};

double maxAbsDifference(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(double(a[i]) - double(b[i])));
  return d;
}

}  // namespace

TEST_SUITE("parallel") {
  TEST_CASE("ParallelWrapper outerUpdater: Nesterovs on the averaged change, by hand") {
    // Two workers, SGD inside, two rounds of two local iterations; worker 0 is dealt minibatches
    // 0 and 2 of a round, worker 1 minibatches 1 and 3, all of 4 examples (equal weights).
    const auto conf = testutil::smallNet(Sgd(0.1));
    const auto data = testutil::batches(8, 4, 21);
    const double lr = 0.7, mu = 0.9;

    MultiLayerNetwork root = initialized(conf);
    const std::vector<double> theta0 = toDouble(root.params());
    testutil::withinSeconds(30, [&] {
      auto wrapper = testutil::wrapperOnCpu(root)
                         .workers(2)
                         .threadsPerWorker(1)
                         .averagingFrequency(2)
                         .outerUpdater(Nesterovs(lr, mu))
                         .build();
      VectorIterator it(data);
      wrapper.fit(it);
    });

    // The outer step, in double: delta = global - mean; v' = mu v - lr delta;
    // global += (1 + mu) v' - mu v.
    const size_t n = theta0.size();
    std::vector<double> theta = theta0, velocity(n, 0.0);
    for (int round = 0; round < 2; ++round) {
      const auto a = trainedFrom(
          conf, theta,
          {data[static_cast<size_t>(4 * round)], data[static_cast<size_t>(4 * round + 2)]});
      const auto b = trainedFrom(
          conf, theta,
          {data[static_cast<size_t>(4 * round + 1)], data[static_cast<size_t>(4 * round + 3)]});
      for (size_t i = 0; i < n; ++i) {
        const double mean = 0.5 * a[i] + 0.5 * b[i];
        const double delta = theta[i] - mean;
        const double v = mu * velocity[i] - lr * delta;
        theta[i] += (1 + mu) * v - mu * velocity[i];
        velocity[i] = v;
      }
    }
    const auto actual = root.params().toVector();
    double worst = 0;
    for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(actual[i] - theta[i]));
    CHECK(worst < 2e-5);

    // The outer step made a difference a loose comparison would notice: plain averaging ends
    // elsewhere.
    MultiLayerNetwork plain = initialized(conf);
    {
      auto wrapper = testutil::wrapperOnCpu(plain)
                         .workers(2)
                         .threadsPerWorker(1)
                         .averagingFrequency(2)
                         .build();
      VectorIterator it(data);
      wrapper.fit(it);
    }
    CHECK(maxAbsDifference(plain.params().toVector(), actual) > 1e-3);
    CHECK(root.getIterationCount() == plain.getIterationCount());
  }

  TEST_CASE("ParallelWrapper outerUpdater: Sgd(1.0) is plain averaging up to rounding") {
    const auto data = testutil::batches(13, 4, 7, 3);
    auto run = [&](bool outer) {
      MultiLayerNetwork root = initialized(testutil::smallNet(Nesterovs(0.1, 0.9)));
      auto builder =
          testutil::wrapperOnCpu(root).workers(3).threadsPerWorker(1).averagingFrequency(2);
      if (outer) builder.outerUpdater(Sgd(1.0));
      auto wrapper = builder.build();
      VectorIterator it(data);
      wrapper.fit(it, 2);
      return std::make_pair(root.params().toVector(), root.updaterState().toVector());
    };
    const auto [plainParams, plainState] = run(false);
    const auto [outerParams, outerState] = run(true);
    CHECK(maxAbsDifference(plainParams, outerParams) < 1e-5);
    // Inner updater state is averaged as before (the parameters it trained from differ by
    // rounding after the first round).
    CHECK(maxAbsDifference(plainState, outerState) < 1e-5);
  }

  TEST_CASE("ParallelWrapper outerUpdater: bit-reproducible, with layer state, any worker count") {
    for (int workers : {1, 2, 3}) {
      CAPTURE(workers);
      const auto data = testutil::batches(11, 5, 9, 2);
      auto run = [&] {
        MultiLayerNetwork root = initialized(batchNormNet());
        auto wrapper = testutil::wrapperOnCpu(root)
                           .workers(workers)
                           .threadsPerWorker(1)
                           .averagingFrequency(3)
                           .outerUpdater(Adam(0.5))
                           .build();
        VectorIterator it(data);
        wrapper.fit(it, 2);
        return std::make_tuple(root.params().clone(), root.updaterState().clone(),
                               root.layerState().clone());
      };
      const auto [p1, s1, l1] = run();
      const auto [p2, s2, l2] = run();
      CHECK(bitIdentical(p1, p2));
      CHECK(bitIdentical(s1, s2));
      CHECK(bitIdentical(l1, l2));
      // Running statistics are combined as with plain averaging: they moved from their start.
      const auto initial = initialized(batchNormNet()).layerState().toVector();
      CHECK(maxAbsDifference(l1.toVector(), initial) > 1e-4);
      for (float v : p1.toVector()) REQUIRE(std::isfinite(v));
    }
  }

  TEST_CASE("ParallelWrapper outerUpdater: two ranks equal one process of two workers") {
    const auto data = testutil::batches(10, 4, 13, 2);
    auto configure = [](ParallelWrapper::Builder& b) -> ParallelWrapper::Builder& {
      return b.averagingFrequency(2).outerUpdater(Nesterovs(0.7, 0.9));
    };
    MultiLayerNetwork alone = initialized(batchNormNet());
    {
      auto builder = testutil::wrapperOnCpu(alone).workers(2).threadsPerWorker(1);
      auto wrapper = configure(builder).build();
      VectorIterator it(data);
      wrapper.fit(it, 2);
    }
    std::vector<std::vector<float>> params(2), layerStates(2);
    testutil::withinSeconds(60, [&] {
      const auto failures = testutil::runRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
        MultiLayerConfiguration own = batchNormNet();
        own.seed += static_cast<uint64_t>(rank);
        MultiLayerNetwork root = initialized(own);
        auto builder =
            testutil::wrapperOnCpu(root).workers(1).threadsPerWorker(1).cluster(std::move(cluster));
        auto wrapper = configure(builder).build();
        VectorIterator it(data);
        wrapper.fit(it, 2);
        params[static_cast<size_t>(rank)] = root.params().toVector();
        layerStates[static_cast<size_t>(rank)] = root.layerState().toVector();
      });
      for (const auto& f : failures) REQUIRE(messageOf(f) == "");
    });
    CHECK(params[0] == alone.params().toVector());
    CHECK(params[1] == params[0]);
    CHECK(layerStates[0] == alone.layerState().toVector());
    CHECK(layerStates[1] == layerStates[0]);
  }

  TEST_CASE("ParallelWrapper outerUpdater: resuming from a checkpoint ends bit-identical") {
    const auto data = testutil::batches(14, 4, 5, 3);
    const int epochs = 3;
    const auto conf = testutil::smallNet(Nesterovs(0.1, 0.9));
    auto builder = [](MultiLayerNetwork& model) {
      return testutil::wrapperOnCpu(model)
          .workers(2)
          .averagingFrequency(2)
          .threadsPerWorker(1)
          .prefetchBuffer(3)
          .outerUpdater(Nesterovs(0.7, 0.9));
    };
    MultiLayerNetwork uninterrupted = initialized(conf);
    {
      ShufflingIterator it(data, 11);
      builder(uninterrupted).build().fit(it, epochs);
    }

    TempDir dir;
    testutil::withinSeconds(60, [&] {
      MultiLayerNetwork crashed = initialized(conf);
      auto crash = std::make_shared<CrashAt>();
      crash->throwAt = 12;  // mid-epoch 1 (7 rounds of 2 iterations per epoch)
      auto wrapper = builder(crashed)
                         .checkpointEvery(Checkpoint::iterations(4), dir.path(), 2)
                         .setListeners({crash})
                         .build();
      ShufflingIterator it(data, 11);
      CHECK_THROWS_WITH(wrapper.fit(it, epochs), "simulated crash");
    });
    const auto latest = Checkpoints::latest(dir.path());
    REQUIRE(latest.has_value());
    CHECK(std::filesystem::exists(Checkpoints::outerStateFile(*latest)));
    // keepLast deletes the companions with their checkpoints.
    int companions = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      companions += e.path().extension() == ".outer";
    CHECK(companions == 2);

    SUBCASE("restoreOuterUpdaterState, then resume") {
      MultiLayerNetwork resumed = MultiLayerNetwork::load(*latest);
      CHECK(resumed.getEpochCount() == 1);
      CHECK(resumed.getMinibatchesInEpoch() > 0);
      auto wrapper = builder(resumed).build();
      wrapper.restoreOuterUpdaterState(*latest);
      ShufflingIterator fresh(data, 11);
      wrapper.resume(fresh, epochs);
      CHECK(resumed.getIterationCount() == uninterrupted.getIterationCount());
      CHECK(bitIdentical(resumed.params(), uninterrupted.params()));
      CHECK(bitIdentical(resumed.updaterState(), uninterrupted.updaterState()));
    }
    SUBCASE("resume in the checkpoint directory finds the state itself") {
      MultiLayerNetwork resumed = MultiLayerNetwork::load(*latest);
      ShufflingIterator fresh(data, 11);
      builder(resumed)
          .checkpointEvery(Checkpoint::iterations(4), dir.path(), 2)
          .build()
          .resume(fresh, epochs);
      CHECK(bitIdentical(resumed.params(), uninterrupted.params()));
    }
    SUBCASE("without the state the run ends elsewhere") {
      MultiLayerNetwork resumed = MultiLayerNetwork::load(*latest);
      ShufflingIterator fresh(data, 11);
      builder(resumed).build().resume(fresh, epochs);
      CHECK_FALSE(bitIdentical(resumed.params(), uninterrupted.params()));
    }
  }

  TEST_CASE("ParallelWrapper outerUpdater: a resumed cluster takes rank 0's outer state") {
    const auto data = testutil::batches(12, 4, 17, 0);
    const auto conf = testutil::smallNet(Sgd(0.1));
    auto configure = [](ParallelWrapper::Builder& b) -> ParallelWrapper::Builder& {
      return b.workers(1).threadsPerWorker(1).averagingFrequency(2).outerUpdater(
          Nesterovs(0.7, 0.9));
    };
    std::vector<float> uninterrupted;
    TempDir dir;
    testutil::withinSeconds(90, [&] {
      auto failures = testutil::runRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
        MultiLayerNetwork root = initialized(conf);
        auto builder = testutil::wrapperOnCpu(root).cluster(std::move(cluster));
        auto wrapper = configure(builder).build();
        VectorIterator it(data);
        wrapper.fit(it, 2);
        if (rank == 0) uninterrupted = root.params().toVector();
      });
      for (const auto& f : failures) REQUIRE(messageOf(f) == "");
      // Epoch checkpoints on rank 0; the run is cut after the first epoch.
      failures = testutil::runRanks(2, [&](int, std::shared_ptr<Cluster> cluster) {
        MultiLayerNetwork root = initialized(conf);
        auto builder = testutil::wrapperOnCpu(root)
                           .cluster(std::move(cluster))
                           .checkpointEvery(Checkpoint::epochs(1), dir.path(), 3);
        auto wrapper = configure(builder).build();
        VectorIterator it(data);
        wrapper.fit(it, 1);
      });
      for (const auto& f : failures) REQUIRE(messageOf(f) == "");
      const auto latest = Checkpoints::latest(dir.path());
      REQUIRE(latest.has_value());
      std::vector<std::vector<float>> resumed(2);
      failures = testutil::runRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
        // Rank 1 starts from a fresh model and no outer state: it takes rank 0's.
        MultiLayerNetwork root = rank == 0 ? MultiLayerNetwork::load(*latest) : initialized(conf);
        auto builder = testutil::wrapperOnCpu(root).cluster(std::move(cluster));
        auto wrapper = configure(builder).build();
        if (rank == 0) wrapper.restoreOuterUpdaterState(*latest);
        VectorIterator it(data);
        wrapper.resume(it, 2);
        resumed[static_cast<size_t>(rank)] = root.params().toVector();
      });
      for (const auto& f : failures) REQUIRE(messageOf(f) == "");
      CHECK(resumed[0] == uninterrupted);
      CHECK(resumed[1] == uninterrupted);
    });
  }

  TEST_CASE("ParallelWrapper outerUpdater: configuration and state-file errors") {
    MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.1)));
    CHECK_THROWS_AS(testutil::wrapperOnCpu(root)
                        .trainingMode(TrainingMode::SHARED_GRADIENTS)
                        .outerUpdater(Nesterovs(0.7, 0.9))
                        .build(),
                    ConfigError);
    TempDir dir;
    const auto checkpoint = dir.path() / Checkpoints::fileName(0, 0);
    {
      auto plain = testutil::wrapperOnCpu(root).workers(1).build();
      CHECK_THROWS_AS(plain.restoreOuterUpdaterState(checkpoint), ConfigError);
    }
    auto wrapper = testutil::wrapperOnCpu(root).workers(1).outerUpdater(Adam(0.1)).build();
    CHECK_THROWS_AS(wrapper.restoreOuterUpdaterState(checkpoint), DataNotFoundError);

    OuterUpdaterCombine adam(Adam(0.1), root.numParams(), 0, 1);
    auto bytes = adam.saveState();
    OuterUpdaterCombine nesterovs(Nesterovs(0.7, 0.9), root.numParams(), 0, 1);
    CHECK_THROWS_AS(nesterovs.loadState(bytes, "test"), DataMismatchError);
    CHECK_NOTHROW(adam.loadState(bytes, "test"));
    bytes[bytes.size() / 2] ^= std::byte{1};
    CHECK_THROWS_AS(adam.loadState(bytes, "test"), ChecksumError);
    bytes.resize(bytes.size() - 3);
    CHECK_THROWS_AS(adam.loadState(bytes, "test"), DataFormatError);
    bytes[0] = std::byte{'X'};
    CHECK_THROWS_AS(adam.loadState(bytes, "test"), DataFormatError);
  }

  TEST_CASE("OuterUpdaterCombine: state and step count survive saveState/loadState") {
    OuterUpdaterCombine a(Nesterovs(0.7, 0.9), 5, 1, 1);
    Tensor root = Tensor::fromVector(Shape{5}, {1, 2, 3, 4, 5});
    Tensor replica(Shape{5});
    std::vector<Tensor> every{replica, root};
    // The mean the workers reached: each trainable parameter moved by -1.
    Tensor mean = a.meanDestinations(every).front();
    for (int i = 0; i < 5; ++i) mean.data()[i] = static_cast<float>(i);
    a.finish(root, {replica}, 0);
    // delta = 1, v = -0.7, p += 1.9 * -0.7 = -1.33; the frozen first parameter stays.
    CHECK(root.toVector()[0] == 1.0f);
    CHECK(root.toVector()[1] == doctest::Approx(2 - 1.33).epsilon(1e-6));
    CHECK(replica.toVector() == root.toVector());
    CHECK(a.steps() == 1);
    OuterUpdaterCombine b(Nesterovs(0.7, 0.9), 5, 1, 1);
    b.loadState(a.saveState(), "test");
    CHECK(b.steps() == 1);
    CHECK(b.state().toVector() == a.state().toVector());
    CHECK(b.state().toVector()[0] == doctest::Approx(-0.7));
  }
}
