// Throughput of training on real data: a single model at 1 and N threads, and ParallelWrapper for
// workers x averagingFrequency x trainingMode, each worker on one thread, with two minibatch
// policies: the network's batch B per worker (DL4J's: the global batch grows with the workers)
// and a global batch of B split across the workers (the same training as one model at B).
// --network picks what trains: lenet (LeNet on MNIST, B = 128, the default), resnet (the residual
// ComputationGraph of samples/ResidualConfiguration.h on Fashion-MNIST, B = 128) or charlstm (the
// character LSTM of samples/CharLstmConfiguration.h on fortunes-min's literature, sequences of 64,
// B = 16; a run is as many passes over the text as make about --examples sequences).
// Every configuration runs `--repeats` times, interleaved with the others so drift of a noisy
// machine spreads evenly; the table reports medians. --json FILE writes the same as JSON.
// --device cuda runs the single model and every worker on GPU 0 (workers share it; the pinning
// rows, which bind CPU cores, are left out).
//   bench_parallel_lenet [--network lenet] [--examples 7680] [--repeats 3] [--json results.json]
//                        [--device cpu|cuda]
// The "vs 1x1" column divides by the single model on one thread, batch 128; "vs 1 worker" by the
// 1-worker ParallelWrapper with the same mode, k and batch per worker (the scaling of the wrapper
// itself). "independent models" trains N single 1-thread models at the same time, each on its own
// thread with its own iterator and nothing shared: the most N cores give this workload with no
// averaging, barrier or data pipeline at all (caches, memory bandwidth and the host's other
// tenants are shared all the same). "vs independent" divides a wrapper with N workers by it.
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "CharLstmConfiguration.h"
#include "LenetConfiguration.h"
#include "Median.h"
#include "ResidualConfiguration.h"
#include "SampleSupport.h"
#include "nn/backend/DeviceContext.h"

using bench::median;

using namespace dl4cpp;
using namespace dl4cpp::parallel;

namespace {

struct Config {
  std::string name;
  int workers = 0;  // 0: a single model without ParallelWrapper
  int threads = 1;  // per worker (or of the single model)
  int frequency = 1;
  TrainingMode mode = TrainingMode::AVERAGING;
  int batch = 128;           // per worker
  bool pin = false;          // ParallelWrapper::Builder::bindToCores
  bool independent = false;  // `workers` separate single models, no ParallelWrapper
};

struct Sample {
  double samplesPerSecond = 0;
  double averaging = 0, barrier = 0, dataWait = 0;  // shares of wall time
};

using Clock = std::chrono::steady_clock;

// What trains: the network and its data.
struct Workload {
  std::string title;  // for the table's heading
  int batch = 128;    // the single model's minibatch
  std::function<std::unique_ptr<Model>(Device, int threads)> model;
  // Minibatches of `batch` over the share `part` of `parts` (each independent model's own
  // iterator, with its own seed).
  std::function<std::unique_ptr<DataSetIterator>(int batch, int part, int parts)> data;
};

// `passes` passes over `source`, of which this iterator yields the minibatches i with
// i % parts == part: each of `parts` independent models gets its share, and together they see
// what one iterator with parts = 1 yields.
class PassesIterator : public DataSetIterator {
 public:
  PassesIterator(std::unique_ptr<DataSetIterator> source, int passes, int part, int parts)
      : source_(std::move(source)), passes_(passes), part_(part), parts_(parts) {
    PassesIterator::reset();
  }
  bool hasNext() override { return ready_; }
  DataSet next() override {
    DataSet batch = std::move(next_);
    advance();
    return batch;
  }
  void reset() override {
    source_->reset();
    pass_ = 0;
    index_ = 0;
    advance();
  }
  int batch() const override { return source_->batch(); }
  int64_t inputColumns() const override { return source_->inputColumns(); }
  int totalOutcomes() const override { return source_->totalOutcomes(); }
  int64_t totalExamples() const override {
    return parts_ == 1 ? passes_ * source_->totalExamples() : -1;
  }

 private:
  // Moves to the next minibatch of this share, across passes.
  void advance() {
    ready_ = false;
    while (pass_ < passes_) {
      if (!source_->hasNext()) {
        if (++pass_ < passes_) source_->reset();
        continue;
      }
      const bool mine = index_++ % parts_ == part_;
      if (!mine) {
        source_->skipNext();
        continue;
      }
      next_ = source_->next();
      ready_ = true;
      return;
    }
  }

  std::unique_ptr<DataSetIterator> source_;
  int passes_, part_, parts_;
  int pass_ = 0;
  int64_t index_ = 0;
  bool ready_ = false;
  DataSet next_;
};

Workload workload(const std::string& network, int examples, const std::string& dir) {
  auto mnist = [examples](const std::string& directory) {
    return
        [examples, directory](int batch, int part, int parts) -> std::unique_ptr<DataSetIterator> {
          return std::make_unique<MnistDataSetIterator>(batch, examples / parts, false, true, true,
                                                        123 + part, directory);
        };
  };
  if (network == "lenet")
    return {"LeNet on MNIST", 128,
            [](Device device, int threads) -> std::unique_ptr<Model> {
              auto m = std::make_unique<MultiLayerNetwork>(samples::lenetConfiguration(), device,
                                                           threads);
              m->init();
              return m;
            },
            mnist(dir)};
  if (network == "resnet")
    return {"the residual network on Fashion-MNIST", 128,
            [](Device device, int threads) -> std::unique_ptr<Model> {
              auto m = std::make_unique<ComputationGraph>(
                  samples::residualConfiguration(123, InputType::convolutionalFlat(28, 28, 1)),
                  device, threads);
              m->init();
              return m;
            },
            mnist(dir.empty() ? "/usr/share/datasets/fashion-mnist" : dir)};
  if (network == "charlstm") {
    const std::string text =
        (dir.empty() ? std::string("/usr/share/games/fortunes") : dir) + "/literature";
    CharacterIterator::Options options;
    options.validCharacters = CharacterIterator::getDefaultCharacterSet();
    options.commentChars = "%";
    const CharacterIterator probe(text, 1, 64, options);
    const int64_t characters = probe.totalOutcomes();
    // As many passes over the text as make about `examples` sequences.
    const int passes = std::max<int>(1, static_cast<int>(examples / probe.totalExamples()));
    return {"the character LSTM on fortunes-min", 16,
            [characters](Device device, int threads) -> std::unique_ptr<Model> {
              auto m = std::make_unique<MultiLayerNetwork>(
                  samples::charLstmConfiguration(characters, 1, 128, 12345), device, threads);
              m->init();
              return m;
            },
            [text, options, passes](int batch, int part,
                                    int parts) -> std::unique_ptr<DataSetIterator> {
              return std::make_unique<PassesIterator>(
                  std::make_unique<CharacterIterator>(text, batch, 64, options), passes, part,
                  parts);
            }};
  }
  throw ConfigError("--network must be lenet, resnet or charlstm, got '" + network + "'");
}

// c.workers single models trained at once on their own threads, each on its own iterator over
// `examples` / c.workers examples; iterators are built and models warmed up before the clock
// starts.
Sample measureIndependent(const Config& c, const Workload& w, Device device) {
  std::vector<std::unique_ptr<DataSetIterator>> data;
  std::vector<std::unique_ptr<Model>> models;
  for (int m = 0; m < c.workers; ++m) {
    data.push_back(w.data(c.batch, m, c.workers));
    models.push_back(w.model(device, c.threads));
  }
  std::atomic<int> ready{0};
  std::vector<Clock::time_point> finished(static_cast<size_t>(c.workers));
  std::vector<int64_t> trained(static_cast<size_t>(c.workers), 0);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(c.workers));
  Clock::time_point start;
  std::vector<std::thread> threads;
  for (int m = 0; m < c.workers; ++m)
    threads.emplace_back([&, m] {
      try {
        DataSetIterator& train = *data[static_cast<size_t>(m)];
        Model& model = *models[static_cast<size_t>(m)];
        for (int i = 0; i < 4 && train.hasNext(); ++i) model.fit(train.next());  // warm-up
        train.reset();
        // Start together: the last thread to arrive starts the clock.
        if (ready.fetch_add(1) + 1 == c.workers) start = Clock::now();
        while (ready.load() < c.workers) std::this_thread::yield();
        while (train.hasNext()) {
          const DataSet batch = train.next();
          trained[static_cast<size_t>(m)] += batch.numExamples();
          model.fit(batch);
        }
        finished[static_cast<size_t>(m)] = Clock::now();
      } catch (...) {
        errors[static_cast<size_t>(m)] = std::current_exception();
        ready = c.workers;  // never leave the others waiting
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  int64_t total = 0;
  for (int64_t n : trained) total += n;
  Sample s;
  s.samplesPerSecond =
      static_cast<double>(total) /
      std::chrono::duration<double>(*std::max_element(finished.begin(), finished.end()) - start)
          .count();
  return s;
}

Sample measure(const Config& c, const Workload& w, Device device, DataSetIterator& train) {
  // The single model trains on `device`; a wrapper's root stays on the CPU, its workers on
  // `device`.
  const std::unique_ptr<Model> root = w.model(c.workers == 0 ? device : Device::cpu(), c.threads);
  Model& model = *root;
  Sample s;
  train.reset();
  if (c.workers == 0) {
    for (int i = 0; i < 4 && train.hasNext(); ++i) model.fit(train.next());  // warm-up: primitives
    train.reset();
    const auto start = Clock::now();
    int64_t examples = 0;
    while (train.hasNext()) {
      const DataSet batch = train.next();
      examples += batch.numExamples();
      model.fit(batch);
    }
    s.samplesPerSecond =
        static_cast<double>(examples) / std::chrono::duration<double>(Clock::now() - start).count();
    return s;
  }
  auto wrapper = ParallelWrapper::Builder(model)
                     .workers(c.workers)
                     .threadsPerWorker(c.threads)
                     .averagingFrequency(c.frequency)
                     .trainingMode(c.mode)
                     .prefetchBuffer(24)
                     .bindToCores(c.pin)
                     .devices({device})
                     .build();
  std::vector<DataSet> warmup;
  for (int i = 0; i < 2 * c.workers && train.hasNext(); ++i) warmup.push_back(train.next());
  ListDataSetIterator warm(warmup, c.batch);
  wrapper.fit(warm);
  train.reset();
  const auto start = Clock::now();
  wrapper.fit(train);
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const ParallelStatistics& st = wrapper.statistics();
  s.samplesPerSecond = static_cast<double>(st.examples) / wall;
  s.averaging = st.averagingShare();
  s.barrier = st.barrierWaitShare();
  s.dataWait = st.dataWaitShare();
  return s;
}

}  // namespace

int main(int argc, char** argv) try {
  const samples::SampleOptions options(
      argc, argv,
      {{"network", "lenet | resnet | charlstm (default lenet)"},
       {"examples", "training examples per measurement (default 7680)"},
       {"repeats", "measurements per configuration (default 3)"},
       {"json", "also write the results to this JSON file"},
       {"data-dir", "MNIST directory"},
       {"device", "cpu | cuda: where the models train (default cpu)"}});
  const int examples = static_cast<int>(options.getInt("examples", 7680));
  const int repeats = static_cast<int>(options.getInt("repeats", 3));
  const std::string dir = options.getString("data-dir", "");
  const Device device = samples::devicesFromOption(options.getString("device", "cpu")).front();
  const Workload work = workload(options.getString("network", "lenet"), examples, dir);
  const int fullBatch = work.batch, halfBatch = work.batch / 2;
  const std::unique_ptr<DataSetIterator> trainFull = work.data(fullBatch, 0, 1);
  const std::unique_ptr<DataSetIterator> trainHalf = work.data(halfBatch, 0, 1);
  const int cores = hardwareConcurrency();

  std::vector<Config> configs{{"single model", 0, 1, 1, TrainingMode::AVERAGING, fullBatch}};
  if (cores > 1 && device.isCpu())
    configs.push_back({"single model", 0, cores, 1, TrainingMode::AVERAGING, fullBatch});
  if (cores > 1)
    configs.push_back(
        {"independent models", 2, 1, 1, TrainingMode::AVERAGING, fullBatch, false, true});
  for (TrainingMode mode : {TrainingMode::AVERAGING, TrainingMode::SHARED_GRADIENTS})
    for (int workers : {1, 2})
      for (int frequency : {1, 3, 10}) {
        if (mode == TrainingMode::SHARED_GRADIENTS && frequency != 1) continue;  // k is moot
        configs.push_back({mode == TrainingMode::AVERAGING ? "averaging" : "shared gradients",
                           workers, 1, frequency, mode, fullBatch});
      }
  // The same global batch as the single model: 2 workers x B/2.
  for (int frequency : {1, 3, 10})
    configs.push_back({"averaging", 2, 1, frequency, TrainingMode::AVERAGING, halfBatch});
  configs.push_back({"shared gradients", 2, 1, 1, TrainingMode::SHARED_GRADIENTS, halfBatch});
  // What binding workers to cores buys.
  for (int batch : {fullBatch, halfBatch})
    if (device.isCpu())
      configs.push_back({"averaging, pinned", 2, 1, 3, TrainingMode::AVERAGING, batch, true});

  std::vector<std::vector<Sample>> results(configs.size());
  for (int r = 0; r < repeats; ++r)
    for (size_t i = 0; i < configs.size(); ++i)
      results[i].push_back(configs[i].independent
                               ? measureIndependent(configs[i], work, device)
                               : measure(configs[i], work, device,
                                         configs[i].batch == halfBatch ? *trainHalf : *trainFull));

  auto med = [&](size_t i, double Sample::*field) {
    std::vector<double> v;
    for (const Sample& s : results[i]) v.push_back(s.*field);
    return median(v);
  };
  const double base = med(0, &Sample::samplesPerSecond);
  // The 1-worker run this configuration's scaling is measured against, if there is one.
  auto oneWorkerRatio = [&](size_t i) -> std::optional<double> {
    const Config& c = configs[i];
    if (c.workers < 2 || c.independent) return std::nullopt;
    for (size_t j = 0; j < configs.size(); ++j) {
      const Config& o = configs[j];
      if (o.workers == 1 && !o.independent && o.mode == c.mode && o.frequency == c.frequency &&
          o.batch == c.batch)
        return med(i, &Sample::samplesPerSecond) / med(j, &Sample::samplesPerSecond);
    }
    return std::nullopt;
  };
  // A wrapper against as many independent models as it has workers, same batch per model.
  auto independentRatio = [&](size_t i) -> std::optional<double> {
    const Config& c = configs[i];
    if (c.workers < 2 || c.independent) return std::nullopt;
    for (size_t j = 0; j < configs.size(); ++j) {
      const Config& o = configs[j];
      if (o.independent && o.workers == c.workers && o.batch == c.batch)
        return med(i, &Sample::samplesPerSecond) / med(j, &Sample::samplesPerSecond);
    }
    return std::nullopt;
  };
  std::cout << fmt::format("{} on {}, {} examples per run, median of {} runs, {} cores\n\n",
                           work.title, device.toString(), trainFull->totalExamples(), repeats,
                           cores);
  std::cout << fmt::format(
      "{:<20} {:>7} {:>8} {:>6} {:>4} {:>10} {:>9} {:>12} {:>15} {:>10} {:>9} {:>10}\n", "mode",
      "workers", "threads", "batch", "k", "samples/s", "vs 1x1", "vs 1 worker", "vs independent",
      "averaging", "barrier", "data wait");
  std::string json = "[\n";
  for (size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    const double sps = med(i, &Sample::samplesPerSecond);
    const std::string k = c.workers == 0 || c.independent ? "-" : std::to_string(c.frequency);
    const std::optional<double> scaling = oneWorkerRatio(i), ofIndependent = independentRatio(i);
    auto ratio = [](const std::optional<double>& r) {
      return r ? fmt::format("{:.2f}x", *r) : std::string("-");
    };
    auto jsonRatio = [](const std::optional<double>& r) {
      return r ? fmt::format("{:.3f}", *r) : std::string("null");
    };
    std::cout << fmt::format(
        "{:<20} {:>7} {:>8} {:>6} {:>4} {:>10.0f} {:>8.2f}x {:>12} {:>15} {:>9.2f}% {:>8.2f}% "
        "{:>9.2f}%\n",
        c.name, c.workers == 0 ? "-" : std::to_string(c.workers), c.threads, c.batch, k, sps,
        sps / base, ratio(scaling), ratio(ofIndependent), 100 * med(i, &Sample::averaging),
        100 * med(i, &Sample::barrier), 100 * med(i, &Sample::dataWait));
    json += fmt::format(
        R"(  {{"device": "{}", "mode": "{}", "workers": {}, "threadsPerWorker": {}, "batchPerWorker": {}, "averagingFrequency": {}, )"
        R"("samplesPerSecond": {:.1f}, "ratioToSingle1Thread": {:.3f}, "ratioToOneWorker": {}, "ratioToIndependent": {}, )"
        R"("averagingShare": {:.5f}, "barrierShare": {:.5f}, "dataWaitShare": {:.5f}, "runs": {}}}{})",
        device.toString(), c.name, c.workers, c.threads, c.batch, c.frequency, sps, sps / base,
        jsonRatio(scaling), jsonRatio(ofIndependent), med(i, &Sample::averaging),
        med(i, &Sample::barrier), med(i, &Sample::dataWait), repeats,
        i + 1 < configs.size() ? ",\n" : "\n");
  }
  json += "]\n";
  samples::writeJsonIfRequested(options, json);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_parallel_lenet: " << e.what() << "\n";
  return 2;
}
