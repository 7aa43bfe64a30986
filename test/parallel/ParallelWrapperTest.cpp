#include <dirent.h>
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <thread>

#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;
using testutil::VectorIterator;

namespace {

MultiLayerNetwork initialized(const MultiLayerConfiguration& conf) {
  MultiLayerNetwork m(conf);
  m.init();
  return m;
}

// Minibatch j of the result is minibatches group*j ... group*j + group-1 of `data` concatenated.
std::vector<DataSet> concatenated(const std::vector<DataSet>& data, size_t group) {
  std::vector<DataSet> out;
  for (size_t i = 0; i < data.size(); i += group)
    out.push_back(DataSet::merge(
        std::vector<DataSet>(data.begin() + static_cast<long>(i),
                             data.begin() + static_cast<long>(std::min(i + group, data.size())))));
  return out;
}

int threadCount() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

long residentKiB() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE) / 1024;
}

class ThrowingIterator : public VectorIterator {
 public:
  ThrowingIterator(std::vector<DataSet> data, int64_t failAt)
      : VectorIterator(std::move(data)), failAt_(failAt) {}
  DataSet next() override {
    if (served() + 1 == failAt_)
      throw DataError("ThrowingIterator: disk on fire at batch " + std::to_string(failAt_));
    return VectorIterator::next();
  }

 private:
  int64_t failAt_;
};

class SlowIterator : public VectorIterator {
 public:
  using VectorIterator::VectorIterator;
  DataSet next() override {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return VectorIterator::next();
  }
};

struct RecordingListener : TrainingListener {
  std::vector<int64_t> iterations;
  std::vector<double> scores;
  std::vector<std::thread::id> threads;
  int64_t examples = 0;
  int throwAt = -1;
  void iterationDone(const Model&, const IterationInfo& info) override {
    iterations.push_back(info.iteration);
    scores.push_back(info.score);
    threads.push_back(std::this_thread::get_id());
    examples += info.examples;
    if (static_cast<int>(iterations.size()) == throwAt) throw std::runtime_error("listener failed");
  }
};

}  // namespace

TEST_SUITE("parallel") {
  TEST_CASE("ParallelWrapper: 1 worker gives exactly the parameters of plain fit") {
    const auto conf = testutil::smallNet(Nesterovs(0.1, 0.9), 1e-3);
    const auto data = testutil::batches(10, 8);
    MultiLayerNetwork plain = initialized(conf);
    VectorIterator plainData(data);
    plain.fit(plainData);

    MultiLayerNetwork root = initialized(conf);
    auto wrapper =
        testutil::wrapperOnCpu(root).workers(1).averagingFrequency(3).prefetchBuffer(4).build();
    VectorIterator wrapped(data);
    wrapper.fit(wrapped);
    CHECK(root.params().toVector() == plain.params().toVector());
    CHECK(root.updaterState().toVector() == plain.updaterState().toVector());
    CHECK(root.getIterationCount() == 10);
    CHECK(root.getEpochCount() == 1);
  }

  TEST_CASE("ParallelWrapper: a root re-initialised after build() still receives the result") {
    const auto conf = testutil::smallNet(Nesterovs(0.1, 0.9));
    const auto data = testutil::batches(6, 8);
    MultiLayerNetwork plain = initialized(conf);
    VectorIterator plainData(data);
    plain.fit(plainData);

    MultiLayerNetwork root = initialized(conf);
    auto wrapper = testutil::wrapperOnCpu(root).workers(1).averagingFrequency(2).build();
    root.init();  // new flat buffers
    VectorIterator wrapped(data);
    wrapper.fit(wrapped);
    CHECK(root.params().toVector() == plain.params().toVector());
    CHECK(root.updaterState().toVector() == plain.updaterState().toVector());
  }

  TEST_CASE(
      "ParallelWrapper: 2 workers, averaging every iteration, SGD = one model on concatenated "
      "minibatches") {
    const auto conf = testutil::smallNet(Sgd(0.1), 1e-3);
    const auto data = testutil::batches(8, 4);
    MultiLayerNetwork single = initialized(conf);
    VectorIterator big(concatenated(data, 2));
    single.fit(big);

    MultiLayerNetwork root = initialized(conf);
    auto wrapper = testutil::wrapperOnCpu(root).workers(2).averagingFrequency(1).build();
    VectorIterator small(data);
    wrapper.fit(small);
    CHECK(root.params().allClose(single.params(), 1e-5f));
    CHECK(root.getIterationCount() == 4);
  }

  TEST_CASE(
      "ParallelWrapper: SHARED_GRADIENTS with Nesterovs = one model on concatenated minibatches") {
    const auto conf = testutil::smallNet(Nesterovs(0.05, 0.9), 1e-3);
    const auto data = testutil::batches(9, 4, 5, 3);  // the last round holds 4 + 3 examples
    MultiLayerNetwork single = initialized(conf);
    VectorIterator big(concatenated(data, 3));
    single.fit(big);

    MultiLayerNetwork root = initialized(conf);
    auto wrapper = testutil::wrapperOnCpu(root)
                       .workers(3)
                       .trainingMode(TrainingMode::SHARED_GRADIENTS)
                       .averagingFrequency(5)
                       .build();
    VectorIterator small(data);
    wrapper.fit(small);
    CHECK(root.params().allClose(single.params(), 1e-5f));
    CHECK(root.updaterState().allClose(single.updaterState(), 1e-5f));
    CHECK(root.score() == doctest::Approx(single.score()).epsilon(1e-4));
  }

  TEST_CASE(
      "ParallelWrapper: SHARED_GRADIENTS normalises the shared gradient: AMSGrad, l1, weight decay "
      "and ClipL2PerLayer = one model on concatenated minibatches") {
    auto conf = [](GradientNormalization mode) {
      return testutil::smallNet(NeuralNetConfiguration::Builder()
                                    .seed(12)
                                    .updater(AMSGrad(0.01))
                                    .l1(1e-3)
                                    .weightDecay(1e-2)
                                    .gradientNormalization(mode)
                                    .gradientNormalizationThreshold(0.05));
    };
    const auto data = testutil::batches(6, 4, 21, 3);
    MultiLayerNetwork single = initialized(conf(GradientNormalization::ClipL2PerLayer));
    VectorIterator big(concatenated(data, 2));
    single.fit(big);
    MultiLayerNetwork unclipped = initialized(conf(GradientNormalization::None));
    VectorIterator bigAgain(concatenated(data, 2));
    unclipped.fit(bigAgain);
    REQUIRE_FALSE(unclipped.params().allClose(single.params(), 1e-3f));  // the clip did act

    MultiLayerNetwork root = initialized(conf(GradientNormalization::ClipL2PerLayer));
    auto wrapper = testutil::wrapperOnCpu(root)
                       .workers(2)
                       .trainingMode(TrainingMode::SHARED_GRADIENTS)
                       .build();
    VectorIterator small(data);
    wrapper.fit(small);
    CHECK(root.params().allClose(single.params(), 1e-5f));
    CHECK(root.updaterState().allClose(single.updaterState(), 1e-5f));
    CHECK(root.score() == doctest::Approx(single.score()).epsilon(1e-4));
  }

  TEST_CASE("ParallelWrapper: averaged AMSGrad state keeps vHat >= v and never lowers vHat") {
    // The weighted mean of the workers' states: each worker's vHat >= its v, and >= the vHat all
    // started the round from, so the means keep both properties.
    const auto conf = testutil::smallNet(AMSGrad(0.05));
    MultiLayerNetwork root = initialized(conf);
    struct StateRecorder : TrainingListener {
      std::vector<std::vector<float>> states;
      void iterationDone(const Model& m, const IterationInfo&) override {
        states.push_back(m.updaterState().toVector());
      }
    };
    auto recorder = std::make_shared<StateRecorder>();
    auto wrapper = testutil::wrapperOnCpu(root)
                       .workers(2)
                       .averagingFrequency(2)
                       .setListeners({recorder})
                       .build();
    VectorIterator it(testutil::batches(12, 4, 8));
    wrapper.fit(it);
    REQUIRE(recorder->states.size() == 3);
    // smallNet's segments: W (10x6), b (10), W (3x10), b (3); AMSGrad's state is [m|v|vHat] each.
    std::vector<float> previousHat;
    for (const std::vector<float>& state : recorder->states) {
      std::vector<float> vHats;
      size_t offset = 0;
      for (size_t n : {60, 10, 30, 3}) {
        for (size_t i = 0; i < n; ++i) {
          const float v = state[offset + n + i], vHat = state[offset + 2 * n + i];
          REQUIRE(vHat >= v);
          vHats.push_back(vHat);
        }
        offset += 3 * n;
      }
      REQUIRE(offset == state.size());
      for (size_t i = 0; i < previousHat.size(); ++i) REQUIRE(vHats[i] >= previousHat[i]);
      previousHat = vHats;
    }
  }

  TEST_CASE("ParallelWrapper: averaging weighs unequal minibatches by their examples") {
    const auto conf = testutil::smallNet(Sgd(0.2));
    const auto data = testutil::batches(2, 2, 9, 6);  // worker 0 gets 2 examples, worker 1 gets 6
    MultiLayerNetwork a = initialized(conf), b = initialized(conf);
    a.fit(data[0]);
    b.fit(data[1]);
    // Expected: (2 * a + 6 * b) / 8, element by element.
    std::vector<float> expected(static_cast<size_t>(a.numParams()));
    for (size_t i = 0; i < expected.size(); ++i)
      expected[i] = 0.25f * a.params().data()[i] + 0.75f * b.params().data()[i];

    MultiLayerNetwork root = initialized(conf);
    auto wrapper =
        testutil::wrapperOnCpu(root).workers(2).averagingFrequency(1).prefetchBuffer(0).build();
    VectorIterator it(data);
    wrapper.fit(it);
    CHECK(root.params().allClose(Tensor::fromVector({a.numParams()}, expected), 1e-6f));
    // The reported score is the example-weighted mean of the workers' scores too.
    CHECK(root.score() == doctest::Approx(0.25 * a.score() + 0.75 * b.score()).epsilon(1e-6));
  }

  TEST_CASE("ParallelWrapper: a round count that does not divide the data trains every minibatch") {
    const auto conf = testutil::smallNet(Sgd(0.1));
    MultiLayerNetwork root = initialized(conf);
    auto listener = std::make_shared<RecordingListener>();
    auto wrapper = testutil::wrapperOnCpu(root)
                       .workers(2)
                       .averagingFrequency(3)
                       .prefetchBuffer(3)
                       .setListeners({listener})
                       .build();
    VectorIterator it(testutil::batches(7, 8, 4, 5));  // 7 minibatches: rounds of 6 and 1
    wrapper.fit(it);
    CHECK(it.served() == 7);
    CHECK(wrapper.statistics().examples == 6 * 8 + 5);
    CHECK(listener->examples == 6 * 8 + 5);
    CHECK(wrapper.statistics().rounds == 2);
    CHECK(listener->iterations == std::vector<int64_t>{3, 4});
    CHECK(root.getIterationCount() == 4);
  }

  TEST_CASE("ParallelWrapper: listeners run on the thread that called fit, with averaged scores") {
    MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.1)));
    auto listener = std::make_shared<RecordingListener>();
    auto wrapper = testutil::wrapperOnCpu(root).workers(2).averagingFrequency(2).build();
    wrapper.setListeners({listener});
    VectorIterator it(testutil::batches(8, 4));
    wrapper.fit(it);
    REQUIRE(listener->threads.size() == 2);
    for (auto id : listener->threads) CHECK(id == std::this_thread::get_id());
    for (double s : listener->scores) CHECK(std::isfinite(s));
    CHECK(root.score() == listener->scores.back());
  }

  TEST_CASE(
      "ParallelWrapper: a throwing iterator ends fit with its exception, with or without "
      "prefetch") {
    for (int prefetch : {0, 4}) {
      INFO("prefetch " << prefetch);
      testutil::withinSeconds(30, [&] {
        MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.1)));
        auto wrapper = testutil::wrapperOnCpu(root)
                           .workers(2)
                           .averagingFrequency(2)
                           .prefetchBuffer(prefetch)
                           .build();
        ThrowingIterator it(testutil::batches(12, 4), 6);
        CHECK_THROWS_WITH_AS(wrapper.fit(it), "ThrowingIterator: disk on fire at batch 6",
                             DataError);
        // The wrapper survives: the next fit works.
        VectorIterator good(testutil::batches(4, 4));
        wrapper.fit(good);
        CHECK(std::isfinite(root.score()));
      });
    }
  }

  TEST_CASE("ParallelWrapper: fitting on an iterator without any data is a DataError") {
    MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.1)));
    const Tensor before = root.params().clone();
    auto wrapper = testutil::wrapperOnCpu(root).workers(2).build();
    VectorIterator empty({});
    CHECK_THROWS_WITH_AS(wrapper.fit(empty),
                         doctest::Contains("ParallelWrapper::fit: the iterator has no data"),
                         DataError);
    CHECK_THROWS_AS(wrapper.fit(empty, 2), DataError);
    CHECK(root.getEpochCount() == 0);
    CHECK(root.params().toVector() == before.toVector());
    // The wrapper stays usable.
    VectorIterator data(testutil::batches(4, 4));
    wrapper.fit(data);
    CHECK(root.getEpochCount() == 1);
  }

  TEST_CASE("ParallelWrapper: a throwing listener and a failing worker each make fit throw") {
    testutil::withinSeconds(30, [] {
      MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.1)));
      auto listener = std::make_shared<RecordingListener>();
      listener->throwAt = 2;
      auto wrapper = testutil::wrapperOnCpu(root).workers(2).setListeners({listener}).build();
      VectorIterator it(testutil::batches(10, 4));
      CHECK_THROWS_WITH_AS(wrapper.fit(it), "listener failed", std::runtime_error);
    });
    testutil::withinSeconds(30, [] {
      MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.1)));
      auto wrapper = testutil::wrapperOnCpu(root).workers(2).prefetchBuffer(2).build();
      auto data = testutil::batches(10, 4);
      data[5].features.data()[3] = std::nanf("");  // worker 1 trips on it in round 3
      VectorIterator it(data);
      CHECK_THROWS_AS(wrapper.fit(it), NumericalError);
    });
  }

  TEST_CASE("ParallelWrapper: stopFit from another thread ends training at a round boundary") {
    testutil::withinSeconds(30, [] {
      MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.1)));
      auto wrapper =
          testutil::wrapperOnCpu(root).workers(2).averagingFrequency(2).prefetchBuffer(4).build();
      SlowIterator it(testutil::batches(400, 4));  // 5 ms per minibatch: 2 s in all
      std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        wrapper.stopFit();
      });
      wrapper.fit(it);
      stopper.join();
      CHECK(it.served() < 400);
      CHECK(root.getEpochCount() == 0);  // the epoch did not complete
      // A consistent averaged model: usable and finite.
      const Tensor out = root.output(testutil::batches(1, 4).front().features);
      for (float v : out.toVector()) CHECK(std::isfinite(v));
    });
  }

  TEST_CASE("ParallelWrapper: repeated fit() grows neither the thread count nor memory") {
    MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.05)));
    auto wrapper =
        testutil::wrapperOnCpu(root).workers(2).averagingFrequency(2).prefetchBuffer(4).build();
    VectorIterator it(testutil::batches(20, 16));
    wrapper.fit(it);
    wrapper.fit(it);
    const int threads = threadCount();
    const long rss = residentKiB();
    for (int i = 0; i < 20; ++i) wrapper.fit(it);
    CHECK(threadCount() == threads);
#ifndef __SANITIZE_ADDRESS__
    CHECK(residentKiB() - rss < 2048);
#else
    // Not under ASan: its use-after-return detection gives every thread rings of fake stack frames
    // that are touched a slot further on each call, so dl4cpp's instrumented GEMM kernels (large
    // frames, many calls) grow the resident size until the rings wrap (12 MB here; 0 with
    // detect_stack_use_after_return=0). The plain build checks the memory.
    MESSAGE("resident growth not checked under AddressSanitizer: " << residentKiB() - rss
                                                                   << " KiB");
#endif
    CHECK(root.getEpochCount() == 22);
  }

  TEST_CASE("ParallelWrapper: two runs with the same seed are bit-identical") {
    auto run = [] {
      MultiLayerNetwork root = initialized(testutil::smallNet(Nesterovs(0.05, 0.9), 1e-4));
      auto wrapper =
          testutil::wrapperOnCpu(root).workers(2).averagingFrequency(3).prefetchBuffer(4).build();
      VectorIterator it(testutil::batches(17, 8));
      wrapper.fit(it, 2);
      return root.params().toVector();
    };
    CHECK(run() == run());
  }

  TEST_CASE("ParallelWrapper::Builder: invalid settings are ConfigErrors naming the value") {
    MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.1)));
    CHECK_THROWS_WITH_AS(ParallelWrapper::Builder(root).averagingFrequency(0).build(),
                         doctest::Contains("averagingFrequency must be >= 1, got 0"), ConfigError);
    CHECK_THROWS_AS(ParallelWrapper::Builder(root).workers(-1).build(), ConfigError);
    CHECK_THROWS_AS(ParallelWrapper::Builder(root).prefetchBuffer(-2).build(), ConfigError);
    MultiLayerNetwork uninitialized(testutil::smallNet(Sgd(0.1)));
    CHECK_THROWS_WITH_AS(ParallelWrapper::Builder(uninitialized).build(),
                         doctest::Contains("init()"), ConfigError);
    CHECK_THROWS_WITH_AS(ParallelWrapper::Builder(root).devices({Device::cuda(99)}).build(),
                         doctest::Contains("device cuda:99 is not visible"), ConfigError);
    auto wrapper = ParallelWrapper::Builder(root).build();
    CHECK(wrapper.devices() == defaultDevices());  // every visible GPU, else the CPU
    CHECK(wrapper.workers() == static_cast<int>(defaultDevices().size()));  // one per device
    CHECK(wrapper.threadsPerWorker() == hardwareConcurrency());
    wrapper.close();
    VectorIterator it(testutil::batches(2, 4));
    CHECK_THROWS_AS(wrapper.fit(it), ConfigError);
  }
}
