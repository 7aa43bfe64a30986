// ParallelWrapper across the ranks of an MPI job, on a slice of real MNIST: every rank builds the
// same iterator (same seed) and the wrapper trains its shard. Each scenario compares what the
// ranks end with (a hash of the parameters, updater and layer state, gathered from every rank)
// and, where the dealing is the same, what one process with as many workers ends with.
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <functional>

#include "Scenarios.h"

namespace dl4cpp::cluster_check {

namespace {
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kBatch = 64;
constexpr int kExamples = 2000;  // 32 minibatches, the last of 16: shards of 16/16 or 11/11/10
constexpr uint64_t kSeed = 7;

MultiLayerConfiguration network() {
  return NeuralNetConfiguration::Builder()
      .seed(kSeed)
      .updater(Adam(1e-3))
      .l2(1e-4)
      .list()
      .layer(DenseLayer::Builder().nIn(784).nOut(64).activation(Activation::RELU).build())
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(10)
                 .activation(Activation::SOFTMAX)
                 .build())
      .build();
}

// MNIST's first kExamples training images, reshuffled every epoch from kSeed; `onRead(n)` is called
// before the n-th batch this rank reads (1-based; skipped batches are not read).
class Mnist final : public DataSetIterator {
 public:
  explicit Mnist(std::function<void(int64_t)> onRead = {})
      : all_(kBatch, kExamples, false, true, true, kSeed), onRead_(std::move(onRead)) {}
  bool hasNext() override { return all_.hasNext(); }
  DataSet next() override {
    if (onRead_) onRead_(++read_);
    return all_.next();
  }
  void skipNext() override { all_.skipNext(); }
  void reset() override { all_.reset(); }
  int batch() const override { return all_.batch(); }
  int64_t inputColumns() const override { return all_.inputColumns(); }
  int totalOutcomes() const override { return all_.totalOutcomes(); }
  int64_t totalExamples() const override { return all_.totalExamples(); }

 private:
  MnistDataSetIterator all_;
  std::function<void(int64_t)> onRead_;
  int64_t read_ = 0;
};

// The same data, running `action` on rank 1 as it reads its batch-th batch.
Mnist onRankOneAt(const parallel::Cluster& c, int64_t batch, std::function<void()> action) {
  return Mnist([&c, batch, action = std::move(action)](int64_t n) {
    if (c.rank() == 1 && n == batch) action();
  });
}

// A residual graph over the same data: dense 784 -> 64, dense 64 -> 64, their sum, softmax 10.
ComputationGraphConfiguration graph() {
  return NeuralNetConfiguration::Builder()
      .seed(kSeed)
      .updater(Adam(1e-3))
      .l2(1e-4)
      .graphBuilder()
      .addInputs("in")
      .setInputTypes(InputType::feedForward(784))
      .addLayer("d1", DenseLayer::Builder().nOut(64).activation(Activation::RELU).build(), "in")
      .addLayer("d2", DenseLayer::Builder().nOut(64).activation(Activation::RELU).build(), "d1")
      .addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "d1", "d2")
      .addLayer("out",
                OutputLayer::Builder(LossFunction::MCXENT)
                    .nOut(10)
                    .activation(Activation::SOFTMAX)
                    .build(),
                "add")
      .setOutputs("out")
      .build();
}

// FNV-1a over the bytes of the model's buffers and counters.
double fingerprint(const Model& m) {
  uint64_t h = 1469598103934665603ull;
  auto add = [&](const void* data, size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  for (const Tensor& t : {m.params(), m.updaterState(), m.layerState()}) {
    const auto values = t.toVector();
    add(values.data(), values.size() * sizeof(float));
  }
  const int64_t counters[] = {m.getIterationCount(), m.getEpochCount()};
  add(counters, sizeof counters);
  return static_cast<double>(h >> 12);  // exact in a double
}

parallel::ParallelWrapper::Builder builderFor(Model& model, int workers) {
  return parallel::ParallelWrapper::Builder(model)
      .devices({Device::cpu()})
      .workers(workers)
      .threadsPerWorker(1)
      .averagingFrequency(3)
      .prefetchBuffer(4);
}

// This rank's model and its wrapper of one worker on MpiCluster::world().
struct RankTraining {
  MultiLayerNetwork model{network()};
  parallel::ParallelWrapper wrapper = build(model);

  static parallel::ParallelWrapper build(MultiLayerNetwork& m) {
    m.init();
    return builderFor(m, 1).cluster(parallel::MpiCluster::world()).build();
  }
};

// Every rank's fingerprint of `model`, checked equal.
void expectSameOnEveryRank(parallel::Cluster& c, Checks& checks, const Model& model) {
  const double mine = fingerprint(model);
  const auto all = c.allGather(std::vector<double>{mine});
  for (size_t r = 0; r < all.size(); ++r)
    checks.expect(all[r] == mine,
                  fmt::format("rank {} ends with the same model as rank {}", r, c.rank()));
}

// The largest difference between two parameter vectors.
float maxDifference(const Tensor& a, const Tensor& b) {
  const auto x = a.toVector(), y = b.toVector();
  float most = 0;
  for (size_t i = 0; i < x.size(); ++i) most = std::max(most, std::abs(x[i] - y[i]));
  return most;
}
}  // namespace

// N ranks x 1 worker, 2 epochs; then rank 0 trains one process with N workers on the same data.
// Two ranks must equal it bit for bit (a sum of two floats does not depend on its order); more
// ranks within 1e-5 (MPI may add three or more in another order than the workers of one process).
int wrapperEqualsOneProcess(parallel::MpiCluster& c) {
  Checks checks(c);
  c.setTimeout(120s);
  RankTraining t;
  MultiLayerNetwork& model = t.model;
  Mnist data;
  const auto start = Clock::now();
  t.wrapper.fit(data, 2);
  say(c, fmt::format("trained 2 epochs in {:.2f} s, score {:.6f}, {} iterations",
                     std::chrono::duration<double>(Clock::now() - start).count(), model.score(),
                     model.getIterationCount()));
  checks.expect(model.getEpochCount() == 2, "2 epochs counted");
  expectSameOnEveryRank(c, checks, model);
  if (c.rank() == 0) {
    MultiLayerNetwork alone(network());
    alone.init();
    Mnist same;
    builderFor(alone, c.size()).build().fit(same, 2);
    const float difference = maxDifference(model.params(), alone.params());
    say(c, fmt::format("against 1 process x {} workers: largest parameter difference {:g}",
                       c.size(), difference));
    checks.expect(model.getIterationCount() == alone.getIterationCount(), "same iterations");
    checks.expect(model.score() == alone.score() || c.size() > 2, "same score");
    if (c.size() == 2)
      checks.expect(fingerprint(model) == fingerprint(alone),
                    "2 ranks x 1 worker equal 1 process x 2 workers bit for bit");
    else
      checks.expect(difference <= 1e-5f, "within 1e-5 of 1 process with as many workers");
  }
  // Rank 1..N-1 wait here while rank 0 trains alone.
  c.allGather(std::vector<double>{0});
  return checks.finish("wrapper-equals-one-process");
}

// The same for a ComputationGraph (a residual one): N ranks x 1 worker, 2 epochs, the same graph
// on every rank, equal to 1 process x N workers (2 ranks: bit for bit).
int wrapperGraphEqualsOneProcess(parallel::MpiCluster& c) {
  Checks checks(c);
  c.setTimeout(120s);
  ComputationGraph model(graph());
  model.init();
  auto wrapper = builderFor(model, 1).cluster(parallel::MpiCluster::world()).build();
  Mnist data;
  const auto start = Clock::now();
  wrapper.fit(data, 2);
  say(c, fmt::format("trained the graph 2 epochs in {:.2f} s, score {:.6f}, {} iterations",
                     std::chrono::duration<double>(Clock::now() - start).count(), model.score(),
                     model.getIterationCount()));
  checks.expect(model.getEpochCount() == 2, "2 epochs counted");
  expectSameOnEveryRank(c, checks, model);
  if (c.rank() == 0) {
    ComputationGraph alone(graph());
    alone.init();
    Mnist same;
    builderFor(alone, c.size()).build().fit(same, 2);
    const float difference = maxDifference(model.params(), alone.params());
    say(c, fmt::format("against 1 process x {} workers: largest parameter difference {:g}",
                       c.size(), difference));
    checks.expect(model.getIterationCount() == alone.getIterationCount(), "same iterations");
    if (c.size() == 2)
      checks.expect(fingerprint(model) == fingerprint(alone),
                    "2 ranks x 1 worker equal 1 process x 2 workers bit for bit");
    else
      checks.expect(difference <= 1e-5f, "within 1e-5 of 1 process with as many workers");
  }
  c.allGather(std::vector<double>{0});
  return checks.finish("wrapper-graph-equals-one-process");
}

// SHARED_GRADIENTS with threshold encoding: 2 ranks x 1 worker exchange their messages over MPI
// (allGatherVarying) and equal 1 process x 2 workers bit for bit, having sent between them what
// its two workers did.
int wrapperCompressedEqualsOneProcess(parallel::MpiCluster& c) {
  Checks checks(c);
  c.setTimeout(120s);
  auto compressed = [](MultiLayerNetwork& m, int workers) {
    return builderFor(m, workers)
        .trainingMode(parallel::TrainingMode::SHARED_GRADIENTS)
        .thresholdAlgorithm(parallel::AdaptiveThresholdAlgorithm(1e-3, 1e-3, 5e-2));
  };
  MultiLayerNetwork model(network());
  model.init();
  auto wrapper = compressed(model, 1).cluster(parallel::MpiCluster::world()).build();
  Mnist data;
  wrapper.fit(data);
  const auto& stats = wrapper.statistics();
  say(c, fmt::format("sent {} bytes in {} rounds, density {:.4f}", stats.sentBytes,
                     stats.sentRounds, stats.density()));
  expectSameOnEveryRank(c, checks, model);
  const auto sent = c.allGather(std::vector<double>{static_cast<double>(stats.sentBytes)});
  if (c.rank() == 0) {
    MultiLayerNetwork alone(network());
    alone.init();
    Mnist same;
    auto aloneWrapper = compressed(alone, c.size()).build();
    aloneWrapper.fit(same);
    double total = 0;
    for (double s : sent) total += s;
    checks.expect(c.size() != 2 || fingerprint(model) == fingerprint(alone),
                  "2 ranks x 1 worker, compressed, equal 1 process x 2 workers bit for bit");
    checks.expect(total == static_cast<double>(aloneWrapper.statistics().sentBytes),
                  "the ranks sent what the workers of one process did");
    checks.expect(stats.density() > 0 && stats.density() < 1, "some, not all, elements sent");
  }
  c.allGather(std::vector<double>{0});
  return checks.finish("wrapper-compressed-equals-one-process");
}

// Rank 1's data fails at its 4th batch: rank 1's fit() throws that DataError, rank 0's a
// ClusterError naming rank 1, both promptly.
int wrapperThrowingRank(parallel::MpiCluster& c) {
  Checks checks(c);
  c.setTimeout(60s);
  RankTraining t;
  Mnist data = onRankOneAt(c, 4, [] { throw DataError("rank 1's disk failed at batch 4"); });
  const auto start = Clock::now();
  try {
    t.wrapper.fit(data);
    checks.expect(false, "fit returned although rank 1 failed");
  } catch (const DataError& e) {
    say(c, fmt::format("DataError: {}", e.what()));
    checks.expect(c.rank() == 1, "only rank 1 gets the DataError");
  } catch (const ClusterError& e) {
    say(c, fmt::format("ClusterError: {}", e.what()));
    checks.expect(c.rank() != 1 && std::strstr(e.what(), "rank 1 failed") != nullptr,
                  "the other ranks get a ClusterError naming rank 1");
  }
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  checks.expect(waited < 30, fmt::format("fit ended within 30 s ({:.2f} s)", waited));
  return checks.finish("wrapper-throwing-rank");
}

// stopFit() on rank 1 while it reads its 5th batch: every rank stops after the same round, with
// the same model, before the epoch ends.
int wrapperStop(parallel::MpiCluster& c) {
  Checks checks(c);
  c.setTimeout(60s);
  RankTraining t;
  MultiLayerNetwork& model = t.model;
  parallel::ParallelWrapper& w = t.wrapper;
  Mnist data = onRankOneAt(c, 5, [&w] { w.stopFit(); });
  w.fit(data, 3);
  say(c, fmt::format("stopped at iteration {}, epoch {}", model.getIterationCount(),
                     model.getEpochCount()));
  checks.expect(model.getEpochCount() == 0 && model.getIterationCount() > 0,
                "stopped within the first epoch");
  expectSameOnEveryRank(c, checks, model);
  return checks.finish("wrapper-stop");
}

// Rank 1 is SIGKILLed while it reads its 6th batch, mid-fit. The launcher ends the job; one that
// lets rank 0 run on leaves it to the 5 s timeout and a ClusterError.
int wrapperKilledRank(parallel::MpiCluster& c) {
  Checks checks(c);
  c.setTimeout(5s);
  RankTraining t;
  Mnist data = onRankOneAt(c, 6, [&c] {
    say(c, "raising SIGKILL mid-fit");
    std::raise(SIGKILL);
  });
  const auto start = Clock::now();
  try {
    t.wrapper.fit(data, 3);
    checks.expect(false, "fit returned although rank 1 was killed");
  } catch (const ClusterError& e) {
    say(c, fmt::format("ClusterError after {:.3f} s: {}",
                       std::chrono::duration<double>(Clock::now() - start).count(), e.what()));
  }
  return checks.finish("wrapper-killed-rank");
}

}  // namespace dl4cpp::cluster_check
