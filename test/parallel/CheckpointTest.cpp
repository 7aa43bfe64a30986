#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "TempDir.h"
#include "nn/core/AtomicFile.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;
using testutil::bitIdentical;
using testutil::ShufflingIterator;
using testutil::TempDir;
using testutil::VectorIterator;

namespace {

MultiLayerNetwork initialized(const MultiLayerConfiguration& conf) {
  MultiLayerNetwork m(conf);
  m.init();
  return m;
}

std::vector<std::string> names(const std::vector<std::filesystem::path>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(p.filename().string());
  return out;
}

// Like MnistDataSetIterator with shuffling: the order is permuted at construction and again at
// every reset(), by one generator that continues across epochs. Resuming must replay that.

// Records the root's parameters at every averaging boundary; throws at the first boundary at or
// after iteration `throwAt` (a crash).
struct Recorder : TrainingListener {
  std::vector<std::pair<int64_t, Tensor>> params;
  int64_t throwAt = -1;
  void iterationDone(const Model& model, const IterationInfo& info) override {
    params.emplace_back(info.iteration, model.params().clone());
    if (throwAt >= 0 && info.iteration >= throwAt) throw std::runtime_error("simulated crash");
  }
};

// The root's iteration count at the end of every epoch.
struct EpochEnds : TrainingListener {
  std::vector<int64_t> iterations;
  void iterationDone(const Model&, const IterationInfo&) override {}
  void onEpochEnd(const Model& model, int) override {
    iterations.push_back(model.getIterationCount());
  }
};

}  // namespace

TEST_SUITE("parallel.Checkpoint") {
  TEST_CASE("Checkpoints: names sort by progress, latest and list ignore other files") {
    CHECK(Checkpoints::fileName(120, 2) == "checkpoint-i000000000120-e000002.dl4cpp");
    TempDir dir;
    CHECK_FALSE(Checkpoints::latest(dir.path()).has_value());
    CHECK_FALSE(Checkpoints::latest(dir / "missing").has_value());
    for (const char* name :
         {"checkpoint-i000000000120-e000001.dl4cpp", "checkpoint-i000000000120-e000002.dl4cpp",
          "checkpoint-i000000000009-e000000.dl4cpp",
          "checkpoint-i000000000999-e000003.dl4cpp.tmp-1a2b", "checkpoint-i99-e1.dl4cpp",
          "notes.txt"})
      std::ofstream(dir / name) << "x";
    CHECK(names(Checkpoints::list(dir.path())) ==
          std::vector<std::string>{"checkpoint-i000000000009-e000000.dl4cpp",
                                   "checkpoint-i000000000120-e000001.dl4cpp",
                                   "checkpoint-i000000000120-e000002.dl4cpp"});
    CHECK(Checkpoints::latest(dir.path())->filename() == "checkpoint-i000000000120-e000002.dl4cpp");
    CHECK_THROWS_AS(Checkpoint::iterations(0), ConfigError);
    CHECK_THROWS_AS(Checkpoint::epochs(-1), ConfigError);
  }

  TEST_CASE(
      "ParallelWrapper: iteration checkpoints appear at averaging boundaries, holding the root") {
    TempDir dir;
    MultiLayerNetwork root = initialized(testutil::smallNet(Nesterovs(0.1, 0.9)));
    auto recorder = std::make_shared<Recorder>();
    // 2 workers x k = 2: a round is 4 minibatches and 2 iterations; 12 minibatches = 3
    // rounds/epoch.
    auto wrapper = testutil::wrapperOnCpu(root)
                       .workers(2)
                       .averagingFrequency(2)
                       .prefetchBuffer(0)
                       .checkpointEvery(Checkpoint::iterations(4), dir.path(), 100)
                       .setListeners({recorder})
                       .build();
    VectorIterator it(testutil::batches(12, 4));
    wrapper.fit(it, 2);
    CHECK(names(Checkpoints::list(dir.path())) ==
          std::vector<std::string>{"checkpoint-i000000000004-e000000.dl4cpp",
                                   "checkpoint-i000000000008-e000001.dl4cpp",
                                   "checkpoint-i000000000012-e000001.dl4cpp"});
    for (const auto& [iteration, params] : recorder->params) {
      const auto file = dir / Checkpoints::fileName(iteration, iteration <= 6 ? 0 : 1);
      if (!std::filesystem::exists(file)) continue;
      CAPTURE(iteration);
      MultiLayerNetwork saved = MultiLayerNetwork::load(file);
      CHECK(bitIdentical(saved.params(), params));
      CHECK(saved.getIterationCount() == iteration);
      CHECK(saved.getMinibatchesInEpoch() == (iteration == 4 ? 8 : iteration == 8 ? 4 : 12));
    }
    // The last one holds the final root, updater state included.
    MultiLayerNetwork last = MultiLayerNetwork::load(*Checkpoints::latest(dir.path()));
    CHECK(bitIdentical(last.params(), root.params()));
    CHECK(bitIdentical(last.updaterState(), root.updaterState()));
    CHECK(root.getMinibatchesInEpoch() == 0);
    CHECK(root.getEpochCount() == 2);
  }

  TEST_CASE("ParallelWrapper: epoch checkpoints honour keepLast") {
    TempDir dir;
    MultiLayerNetwork root = initialized(testutil::smallNet(Adam(0.01)));
    auto wrapper = testutil::wrapperOnCpu(root)
                       .workers(2)
                       .averagingFrequency(3)
                       .checkpointEvery(Checkpoint::epochs(2), dir / "nested" / "ckpt", 2)
                       .build();
    VectorIterator it(testutil::batches(6, 4));  // one round (3 iterations) per epoch
    wrapper.fit(it, 7);
    CHECK(names(Checkpoints::list(dir / "nested" / "ckpt")) ==
          std::vector<std::string>{"checkpoint-i000000000012-e000004.dl4cpp",
                                   "checkpoint-i000000000018-e000006.dl4cpp"});
    MultiLayerNetwork saved =
        MultiLayerNetwork::load(*Checkpoints::latest(dir / "nested" / "ckpt"));
    CHECK(saved.getEpochCount() == 6);
    CHECK(saved.getMinibatchesInEpoch() == 0);
    CHECK_THROWS_AS(ParallelWrapper::Builder(root)
                        .checkpointEvery(Checkpoint::epochs(1), dir.path(), 0)
                        .build(),
                    ConfigError);
  }

  TEST_CASE("ParallelWrapper: resuming from the last checkpoint after a crash ends bit-identical") {
    struct Setup {
      int workers;
      TrainingMode mode;
      int frequency;
      UpdaterParams updater;
      int64_t averagingWarmup = 0;
      LearningRateScaling scaling = LearningRateScaling::NONE;
      int64_t scalingWarmup = 0;
    };
    for (const Setup& s :
         {Setup{1, TrainingMode::AVERAGING, 3, Nesterovs(0.1, 0.9)},
          Setup{2, TrainingMode::AVERAGING, 2, Nesterovs(0.1, 0.9)},
          Setup{2, TrainingMode::AVERAGING, 2, Adam(0.01)},
          Setup{2, TrainingMode::SHARED_GRADIENTS, 1, Adam(0.01)},
          // On schedules: the rate changes every iteration, the momentum at epoch 2, after the
          // resume.
          Setup{2, TrainingMode::AVERAGING, 2,
                Nesterovs(CycleSchedule(ScheduleType::ITERATION, 0.02, 0.2, 7, 1, 0.5),
                          MapSchedule(ScheduleType::EPOCH, {{0, 0.5}, {2, 0.9}}))},
          Setup{2, TrainingMode::SHARED_GRADIENTS, 1,
                Adam(CosineWarmupSchedule(0.02, 0.001, 3, 20))},
          // Averaging every iteration for the first 4, then every 2; the rate scaled by 2,
          // ramping up over 20 iterations, past the resume.
          Setup{2, TrainingMode::AVERAGING, 2, Nesterovs(0.05, 0.9), 4, LearningRateScaling::LINEAR,
                20}}) {
      CAPTURE(s.workers);
      CAPTURE(static_cast<int>(s.mode));
      CAPTURE(static_cast<int>(s.updater.kind));
      const auto data = testutil::batches(14, 4, 5, 3);  // uneven: the last round is partial
      const int epochs = 3;
      auto builder = [&](MultiLayerNetwork& model) {
        return testutil::wrapperOnCpu(model)
            .workers(s.workers)
            .averagingFrequency(s.frequency)
            .trainingMode(s.mode)
            .threadsPerWorker(1)
            .prefetchBuffer(3)
            .averagingWarmup(s.averagingWarmup)
            .learningRateScaling(s.scaling, s.scalingWarmup);
      };

      MultiLayerNetwork uninterrupted = initialized(testutil::smallNet(s.updater));
      auto epochEnds = std::make_shared<EpochEnds>();
      {
        ShufflingIterator it(data, 11);
        builder(uninterrupted).setListeners({epochEnds}).build().fit(it, epochs);
      }

      TempDir dir;
      testutil::withinSeconds(60, [&] {
        MultiLayerNetwork crashed = initialized(testutil::smallNet(s.updater));
        auto recorder = std::make_shared<Recorder>();
        // Mid-epoch 1, after at least one checkpoint in that epoch.
        const int64_t perRound = s.mode == TrainingMode::AVERAGING ? s.frequency : 1;
        recorder->throwAt = epochEnds->iterations.at(0) + 3 * perRound;
        auto wrapper = builder(crashed)
                           .checkpointEvery(Checkpoint::iterations(2 * perRound), dir.path(), 2)
                           .setListeners({recorder})
                           .build();
        ShufflingIterator it(data, 11);
        CHECK_THROWS_WITH(wrapper.fit(it, epochs), "simulated crash");
      });

      const auto latest = Checkpoints::latest(dir.path());
      REQUIRE(latest.has_value());
      MultiLayerNetwork resumed = MultiLayerNetwork::load(*latest);
      CHECK(resumed.getEpochCount() == 1);
      CHECK(resumed.getMinibatchesInEpoch() > 0);
      ShufflingIterator fresh(data, 11);
      builder(resumed).build().resume(fresh, epochs);
      CHECK(resumed.getEpochCount() == epochs);
      CHECK(resumed.getIterationCount() == uninterrupted.getIterationCount());
      CHECK(bitIdentical(resumed.params(), uninterrupted.params()));
      CHECK(bitIdentical(resumed.updaterState(), uninterrupted.updaterState()));
    }
  }

  TEST_CASE("ParallelWrapper: resume with too little data or a finished run") {
    MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.1)));
    root.setEpochCount(1);
    root.setMinibatchesInEpoch(20);
    auto wrapper = testutil::wrapperOnCpu(root).workers(2).build();
    VectorIterator it(testutil::batches(6, 4));
    CHECK_THROWS_AS(wrapper.resume(it, 2), DataError);
    root.setEpochCount(2);
    const Tensor before = root.params().clone();
    wrapper.resume(it, 2);  // nothing left to do
    CHECK(bitIdentical(root.params(), before));
  }

  TEST_CASE(
      "ParallelWrapper: a directory holding a newer run's checkpoints is refused before training") {
    TempDir dir;
    // Both runs checkpoint every 4 iterations into `dir`, keeping only the newest file.
    auto wrapperFor = [&](MultiLayerNetwork& model) {
      return testutil::wrapperOnCpu(model)
          .workers(2)
          .averagingFrequency(2)
          .checkpointEvery(Checkpoint::iterations(4), dir.path(), 1)
          .build();
    };
    // An older run that got further: its last checkpoint is at iteration 12.
    {
      MultiLayerNetwork older = initialized(testutil::smallNet(Sgd(0.1)));
      VectorIterator it(testutil::batches(12, 4));
      wrapperFor(older).fit(it, 2);
    }
    const std::vector<std::string> before = names(Checkpoints::list(dir.path()));
    REQUIRE(before == std::vector<std::string>{"checkpoint-i000000000012-e000001.dl4cpp"});

    // A new run with keepLast = 1 would write iteration 4, 8, ..., each sorting before the old file
    // and deleted at once; it is refused instead, before a step is trained.
    MultiLayerNetwork fresh = initialized(testutil::smallNet(Sgd(0.1)));
    const Tensor initial = fresh.params().clone();
    auto wrapper = wrapperFor(fresh);
    VectorIterator it(testutil::batches(12, 4));
    CHECK_THROWS_WITH_AS(
        wrapper.fit(it, 2),
        doctest::Contains("holds 1 checkpoint(s) newer than this model (iteration 0, epoch 0): "
                          "checkpoint-i000000000012-e000001.dl4cpp"),
        ConfigError);
    CHECK(bitIdentical(fresh.params(), initial));
    CHECK(fresh.getIterationCount() == 0);
    // Checkpoints::write keeps the same rule: the file it returns is the newest, and it exists.
    fresh.setIterationCount(4);
    CHECK_THROWS_AS(Checkpoints::write(fresh, dir.path(), 1), ConfigError);
    CHECK(names(Checkpoints::list(dir.path())) == before);
    fresh.setIterationCount(12);
    fresh.setEpochCount(2);
    const auto written = Checkpoints::write(fresh, dir.path(), 1);
    CHECK(std::filesystem::exists(written));
    CHECK(Checkpoints::latest(dir.path()) == written);
  }

  TEST_CASE("ParallelWrapper: a run resumed in its own directory continues the numbering there") {
    TempDir dir;
    const auto data = testutil::batches(12, 4);
    auto builder = [&](MultiLayerNetwork& model) {
      return testutil::wrapperOnCpu(model)
          .workers(2)
          .averagingFrequency(2)
          .prefetchBuffer(0)
          .checkpointEvery(Checkpoint::iterations(2), dir.path(), 2);
    };
    MultiLayerNetwork crashed = initialized(testutil::smallNet(Sgd(0.1)));
    auto recorder = std::make_shared<Recorder>();
    recorder->throwAt = 9;  // epoch 1 is 3 rounds of 2 iterations: crash after iteration 10
    {
      auto wrapper = builder(crashed).setListeners({recorder}).build();
      VectorIterator it(data);
      CHECK_THROWS_WITH(wrapper.fit(it, 3), "simulated crash");
    }
    REQUIRE(names(Checkpoints::list(dir.path())) ==
            std::vector<std::string>{"checkpoint-i000000000008-e000001.dl4cpp",
                                     "checkpoint-i000000000010-e000001.dl4cpp"});

    // Resumed from an older checkpoint than the newest: refused, the newer one named.
    MultiLayerNetwork fromOlder = MultiLayerNetwork::load(Checkpoints::list(dir.path()).front());
    {
      VectorIterator it(data);
      CHECK_THROWS_WITH_AS(builder(fromOlder).build().resume(it, 3),
                           doctest::Contains("checkpoint-i000000000010-e000001.dl4cpp"),
                           ConfigError);
    }
    // Resumed from the newest: runs to the end, every checkpoint it writes is kept as the newest.
    MultiLayerNetwork resumed = MultiLayerNetwork::load(*Checkpoints::latest(dir.path()));
    VectorIterator it(data);
    builder(resumed).build().resume(it, 3);
    CHECK(resumed.getEpochCount() == 3);
    CHECK(names(Checkpoints::list(dir.path())) ==
          std::vector<std::string>{"checkpoint-i000000000016-e000002.dl4cpp",
                                   "checkpoint-i000000000018-e000002.dl4cpp"});
    MultiLayerNetwork last = MultiLayerNetwork::load(*Checkpoints::latest(dir.path()));
    CHECK(bitIdentical(last.params(), resumed.params()));
  }

  TEST_CASE(
      "Checkpoints: a write removes the temporaries of killed saves, not those being written") {
    TempDir dir;
    const std::string checkpoint = Checkpoints::fileName(4, 0);
    const auto killed =
        dir / (checkpoint + ".tmp-0123456789abcdef");                // its writer is gone: no lock
    const auto live = dir / (checkpoint + ".tmp-fedcba9876543210");  // a writer holds it locked
    const auto otherTemp = dir / "notes.txt.tmp-0123456789abcdef";   // not a checkpoint's
    const auto oddName = dir / (checkpoint + ".tmp-0123");           // not writeFileAtomically's
    for (const auto& file : {killed, live, otherTemp, oddName}) std::ofstream(file) << "partial";
    const int liveFd = ::open(live.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(liveFd >= 0);
    REQUIRE(::flock(liveFd, LOCK_EX) == 0);

    MultiLayerNetwork model = initialized(testutil::smallNet(Sgd(0.1)));
    model.setIterationCount(8);
    Checkpoints::write(model, dir.path(), 1);
    CHECK_FALSE(std::filesystem::exists(killed));
    CHECK(std::filesystem::exists(live));
    CHECK(std::filesystem::exists(otherTemp));
    CHECK(std::filesystem::exists(oddName));

    // Once its writer is gone (the lock released), the next write removes it too.
    ::close(liveFd);
    model.setIterationCount(12);
    Checkpoints::write(model, dir.path(), 1);
    CHECK_FALSE(std::filesystem::exists(live));
    CHECK(names(Checkpoints::list(dir.path())) ==
          std::vector<std::string>{Checkpoints::fileName(12, 0)});
  }

  TEST_CASE("Checkpoints: a save in progress is never taken for a stale temporary") {
    // A cleaner runs without pause while a large file is written: the writer's lock keeps its
    // temporary from being removed mid-write (which would make the rename fail).
    TempDir dir;
    const auto target = dir / Checkpoints::fileName(4, 0);
    const std::vector<std::byte> bytes(size_t{64} << 20, std::byte{7});
    std::atomic<bool> done{false};
    std::atomic<int> removed{0};
    std::thread cleaner([&] {
      while (!done)
        removed += static_cast<int>(
            removeStaleTemporaries(dir.path(), [](std::string_view) { return true; }).size());
    });
    for (int i = 0; i < 3; ++i) CHECK_NOTHROW(writeFileAtomically(target, bytes));
    done = true;
    cleaner.join();
    CHECK(std::filesystem::file_size(target) == bytes.size());
    CHECK(removed <=
          3);  // at most a temporary caught before its writer locked it (then re-created)
  }

  TEST_CASE(
      "ParallelWrapper: a checkpoint directory that cannot be written fails fit before training") {
    TempDir dir;
    std::ofstream(dir / "file") << "not a directory";
    testutil::withinSeconds(30, [&] {
      MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.1)));
      auto wrapper = testutil::wrapperOnCpu(root)
                         .workers(2)
                         .prefetchBuffer(2)
                         .checkpointEvery(Checkpoint::iterations(1), dir / "file" / "ckpt", 1)
                         .build();
      VectorIterator it(testutil::batches(10, 4));
      try {
        wrapper.fit(it);
        FAIL("fit did not throw");
      } catch (const OutputPathError& e) {
        CHECK(std::string(e.what()).find("file/ckpt") != std::string::npos);
        // Refused when fit() starts (checkOutputDirectory), before a single step.
        CHECK(root.getIterationCount() == 0);
      }
      // The wrapper stays usable once the cause is gone (here: without checkpoints).
      auto plain = testutil::wrapperOnCpu(root).workers(2).build();
      it.reset();
      plain.fit(it);
    });
  }

  TEST_CASE("ParallelWrapper: with checkpointNormalizer every checkpoint holds the normalizer") {
    TempDir dir;
    MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.1)));
    VectorIterator it(testutil::batches(8, 4));
    auto normalizer = std::make_shared<NormalizerMinMaxScaler>(-1, 1);
    normalizer->fit(it);
    auto wrapper = testutil::wrapperOnCpu(root)
                       .workers(2)
                       .prefetchBuffer(0)
                       .checkpointEvery(Checkpoint::epochs(1), dir.path(), 5)
                       .checkpointNormalizer(normalizer)
                       .build();
    wrapper.fit(it, 2);
    const auto files = Checkpoints::list(dir.path());
    REQUIRE(files.size() == 2);
    Tensor x = testutil::batches(1, 3, 9)[0].features;
    Tensor reference = x.clone();
    normalizer->transformInput(reference, InputType::feedForward(6));
    for (const auto& file : files) {
      CAPTURE(file);
      const auto restored = ModelSerializer::restoreNormalizerFromFile(file);
      REQUIRE(restored);
      Tensor mine = x.clone();
      restored->transformInput(mine, InputType::feedForward(6));
      CHECK(bitIdentical(mine, reference));
    }
    // Checkpoints::write takes one too.
    const auto written = Checkpoints::write(root, dir / "direct", 1, normalizer.get());
    CHECK(ModelSerializer::restoreNormalizerFromFile(written) != nullptr);
    CHECK(ModelSerializer::restoreNormalizerFromFile(Checkpoints::write(root, dir / "none", 1)) ==
          nullptr);
  }

  TEST_CASE(
      "ParallelWrapper: a checkpoint normalizer without checkpoints, unfitted or not fitting "
      "the model is refused by build()") {
    TempDir dir;
    MultiLayerNetwork root = initialized(testutil::smallNet(Sgd(0.1)));
    auto scaler = std::make_shared<ImagePreProcessingScaler>();
    CHECK_THROWS_WITH_AS(testutil::wrapperOnCpu(root).checkpointNormalizer(scaler).build(),
                         "ParallelWrapper: checkpointNormalizer needs checkpointEvery",
                         ConfigError);
    CHECK_THROWS_WITH_AS(testutil::wrapperOnCpu(root)
                             .checkpointEvery(Checkpoint::epochs(1), dir.path())
                             .checkpointNormalizer(std::make_shared<NormalizerStandardize>())
                             .build(),
                         doctest::Contains("used before fit()"), ConfigError);
    VectorIterator wide({DataSet(Tensor(Shape{2, 5}), Tensor())});
    auto fiveColumns = std::make_shared<NormalizerStandardize>();
    fiveColumns->fit(wide);
    CHECK_THROWS_WITH_AS(testutil::wrapperOnCpu(root)
                             .checkpointEvery(Checkpoint::epochs(1), dir.path())
                             .checkpointNormalizer(fiveColumns)
                             .build(),
                         doctest::Contains("ParallelWrapper: the checkpoint normalizer does not "
                                           "apply: NormalizerStandardize was fitted per column on "
                                           "features of 5 values"),
                         ConfigError);
  }
}  // TEST_SUITE
