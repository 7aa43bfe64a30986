// Where a training step goes (LeNet on MNIST, or with --network batchnorm the conv-BN-ReLU network
// and with --network vgg the VGG-style network, on Fashion-MNIST): per layer and phase, on real
// data (batch 128), for a single model at 1 and N threads, with a LayerProfiler attached. Each row
// gives ms per iteration, its share of the whole step (data included), and the achieved GFLOP/s of
// the GEMM-like ops (FLOPs counted analytically: conv = 2·N·O·outH·outW·C·kH·kW for each of its
// three passes, dense = 2·N·nIn·nOut). Rows below the table:
//   data            the iterator's next() (MNIST is in memory: batch assembly only);
//   outside ops     fit()'s own bookkeeping between backend calls (step wall minus every op);
//   unprofiled step the same iterations without a profiler, to show what profiling costs.
// A ParallelWrapper run (N workers x 1 thread, averaging every round) adds the coordinator's
// view: averaging, barrier and data-wait shares of its wall time.
// Every configuration runs --repeats times, interleaved, and each cell reports the median.
// With --feature-extractor K, every network has layers 0 to K frozen (TransferLearning's
// setFeatureExtractor(K)): the table then shows the backward and update work they skip.
//   bench_lenet_breakdown [--warmup 100] [--iterations 300] [--repeats 3] [--json FILE]
//                         [--feature-extractor K]
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "BatchNormConfiguration.h"
#include "LenetConfiguration.h"
#include "Median.h"
#include "SampleSupport.h"
#include "VggConfiguration.h"
#include "nn/backend/DeviceContext.h"

using bench::median;

using namespace dl4cpp;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// One (layer, phase) row of one measurement.
struct Cell {
  double msPerIteration = 0;
  double gflopPerIteration = 0;
};

struct Measurement {
  std::map<std::pair<int, int>, Cell> cells;  // (layer, phase) -> cell; layer -1: the network
  double stepMs = 0;                          // wall of next() + fit(), per iteration, profiled
  double dataMs = 0;                          // next() alone
  double outsideOpsMs = 0;                    // fit() wall minus every recorded op
  double unprofiledStepMs = 0;
};

// Draws the next full batch of 128, starting the epoch again when the iterator runs dry (the
// epoch's last, partial batch is skipped so that every timed step does the same work).
DataSet nextBatch(MnistDataSetIterator& data) {
  for (;;) {
    if (!data.hasNext()) data.reset();
    DataSet batch = data.next();
    if (batch.numExamples() == 128) return batch;
  }
}

// `conf` initialised on `threads` threads, with layers 0 to frozenTill frozen (none when < 0).
MultiLayerNetwork network(const MultiLayerConfiguration& conf, int threads, int frozenTill) {
  MultiLayerNetwork model(conf, Device::cpu(), threads);
  model.init();
  if (frozenTill < 0) return model;
  return TransferLearning::Builder(model).setFeatureExtractor(frozenTill).build();
}

Measurement measure(const MultiLayerConfiguration& conf, int threads, int frozenTill, int warmup,
                    int iterations, MnistDataSetIterator& data) {
  Measurement m;
  MultiLayerNetwork model = network(conf, threads, frozenTill);
  auto profiler = std::make_shared<LayerProfiler>();
  model.setProfiler(profiler);
  for (int i = 0; i < warmup; ++i) model.fit(nextBatch(data));
  profiler->reset();

  double data_s = 0, fit_s = 0;
  for (int i = 0; i < iterations; ++i) {
    const auto t0 = Clock::now();
    const DataSet batch = nextBatch(data);
    data_s += seconds(t0);
    const auto t1 = Clock::now();
    model.fit(batch);
    fit_s += seconds(t1);
  }
  const double perIteration = 1e3 / iterations;
  for (int layer = LayerProfiler::kNetwork; layer < profiler->numLayers(); ++layer)
    for (int phase = 0; phase < kProfilePhaseCount; ++phase) {
      const PhaseTotals t = profiler->totals(layer, static_cast<ProfilePhase>(phase));
      if (t.calls == 0) continue;
      m.cells[{layer, phase}] = {t.seconds * perIteration, t.flops / iterations / 1e9};
    }
  m.dataMs = data_s * perIteration;
  m.outsideOpsMs = (fit_s - profiler->totalSeconds()) * perIteration;
  m.stepMs = (data_s + fit_s) * perIteration;

  model.setProfiler(nullptr);
  const auto t = Clock::now();
  for (int i = 0; i < iterations; ++i) model.fit(nextBatch(data));
  m.unprofiledStepMs = seconds(t) * perIteration;
  return m;
}

struct ParallelMeasurement {
  double samplesPerSecond = 0, averaging = 0, barrier = 0, dataWait = 0;
};

ParallelMeasurement measureParallel(const MultiLayerConfiguration& conf, int frozenTill,
                                    int workers, int iterations, MnistDataSetIterator& data) {
  MultiLayerNetwork model = network(conf, 1, frozenTill);
  auto wrapper = parallel::ParallelWrapper::Builder(model)
                     .workers(workers)
                     .threadsPerWorker(1)
                     .averagingFrequency(1)
                     .prefetchBuffer(24)
                     .build();
  std::vector<DataSet> warm, timed;
  for (int i = 0; i < 4 * workers; ++i) warm.push_back(nextBatch(data));
  for (int i = 0; i < iterations; ++i) timed.push_back(nextBatch(data));
  ListDataSetIterator warmIt(warm, 128), timedIt(timed, 128);
  wrapper.fit(warmIt);
  const auto before = wrapper.statistics();
  const auto t = Clock::now();
  wrapper.fit(timedIt);
  const double wall = seconds(t);
  const auto& after = wrapper.statistics();
  ParallelMeasurement p;
  p.samplesPerSecond = static_cast<double>(after.examples - before.examples) / wall;
  const double roundWall = after.total.wall - before.total.wall;
  p.averaging = (after.total.averaging - before.total.averaging) / roundWall;
  p.barrier = (after.total.barrierWait - before.total.barrierWait) / roundWall;
  // Clamped: a prefetch that never stalls leaves only clock jitter, which can read as -0.00%.
  p.dataWait = std::max(0.0, (after.total.dataWait - before.total.dataWait) / roundWall);
  return p;
}

std::string layerLabel(const MultiLayerConfiguration& conf, int layer) {
  if (layer == LayerProfiler::kNetwork) return "network";
  return fmt::format("{} {}", layer, conf.layers[static_cast<size_t>(layer)]->typeName());
}

}  // namespace

int main(int argc, char** argv) try {
  const samples::SampleOptions options(
      argc, argv,
      {{"warmup", "untimed iterations first (default 100)"},
       {"iterations", "timed iterations per measurement (default 300)"},
       {"repeats", "measurements per configuration (default 3)"},
       {"json", "also write the results to this JSON file"},
       {"network",
        "lenet (samples/LenetConfiguration.h, on MNIST) | batchnorm "
        "(samples/BatchNormConfiguration.h) | vgg (samples/VggConfiguration.h), both on "
        "Fashion-MNIST (default lenet)"},
       {"data-dir", "MNIST (or Fashion-MNIST) directory"},
       {"feature-extractor", "freeze layers 0 to K (default: none frozen)"}});
  const int warmup = static_cast<int>(options.getInt("warmup", 100));
  const int iterations = static_cast<int>(options.getInt("iterations", 300));
  const int repeats = static_cast<int>(options.getInt("repeats", 3));
  if (iterations < 1 || repeats < 1 || warmup < 0)
    throw std::invalid_argument("--iterations and --repeats must be >= 1, --warmup >= 0");
  const std::string network = options.getString("network", "lenet");
  if (network != "lenet" && network != "batchnorm" && network != "vgg")
    throw std::invalid_argument("--network must be lenet, batchnorm or vgg, not " + network);
  const bool lenet = network == "lenet";
  const int frozenTill = static_cast<int>(options.getInt("feature-extractor", -1));
  const std::string modelName =
      std::string(lenet                    ? "LeNet (samples/LenetConfiguration.h)"
                  : network == "batchnorm" ? "conv-BN-ReLU x3 (samples/BatchNormConfiguration.h)"
                                           : "VGG-style (samples/VggConfiguration.h)") +
      (frozenTill >= 0 ? fmt::format(", layers 0 to {} frozen", frozenTill) : "");
  MnistDataSetIterator data(
      128, 60000, false, true, true, 123,
      options.getString("data-dir", lenet ? "" : MnistDataSetIterator::fashionMnistDirectory()));
  const MultiLayerConfiguration conf = lenet                    ? samples::lenetConfiguration()
                                       : network == "batchnorm" ? samples::batchNormConfiguration()
                                                                : samples::vggConfiguration();
  const int cores = hardwareConcurrency();
  std::vector<int> threadCounts{1};
  if (cores > 1) threadCounts.push_back(cores);

  std::vector<std::vector<Measurement>> runs(threadCounts.size());
  std::vector<ParallelMeasurement> parallelRuns;
  for (int r = 0; r < repeats; ++r) {
    for (size_t t = 0; t < threadCounts.size(); ++t)
      runs[t].push_back(measure(conf, threadCounts[t], frozenTill, warmup, iterations, data));
    if (cores > 1)
      parallelRuns.push_back(measureParallel(conf, frozenTill, cores, iterations, data));
  }

  std::string json = fmt::format(
      "{{\n  \"model\": \"{}\", \"batch\": 128, "
      "\"warmup\": {}, \"iterations\": {}, \"repeats\": {}, \"cores\": {},\n"
      "  \"singleModel\": [\n",
      modelName, warmup, iterations, repeats, cores);
  for (size_t t = 0; t < threadCounts.size(); ++t) {
    const std::vector<Measurement>& ms = runs[t];
    auto med = [&](auto get) {
      std::vector<double> v;
      for (const Measurement& m : ms) v.push_back(get(m));
      return median(v);
    };
    const double step = med([](const Measurement& m) { return m.stepMs; });
    const double unprofiled = med([](const Measurement& m) { return m.unprofiledStepMs; });
    std::cout << fmt::format(
        "\n{}, batch 128, {} thread(s): {} timed iterations after {} "
        "warm-up, median of {} runs\n",
        modelName, threadCounts[t], iterations, warmup, repeats);
    std::cout << fmt::format("{:<22} {:<20} {:>9} {:>7} {:>9}\n", "layer", "phase", "ms/iter",
                             "share", "GFLOP/s");
    json += fmt::format(
        "    {{\"threads\": {}, \"stepMs\": {:.4f}, \"unprofiledStepMs\": {:.4f}, "
        "\"samplesPerSecond\": {:.1f}, \"unprofiledSamplesPerSecond\": {:.1f}, \"rows\": [\n",
        threadCounts[t], step, unprofiled, 128e3 / step, 128e3 / unprofiled);
    std::vector<std::string> rows;
    auto addRow = [&](const std::string& layer, const std::string& phase, double ms, double gflop) {
      const std::string rate = gflop > 0 ? fmt::format("{:.1f}", gflop / (ms * 1e-3)) : "-";
      std::cout << fmt::format("{:<22} {:<20} {:>9.3f} {:>6.1f}% {:>9}\n", layer, phase, ms,
                               100 * ms / step, rate);
      rows.push_back(
          fmt::format("      {{\"layer\": \"{}\", \"phase\": \"{}\", \"msPerIteration\": {:.4f}, "
                      "\"share\": {:.5f}, \"gflopPerIteration\": {:.6f}, \"gflops\": {}}}",
                      layer, phase, ms, ms / step, gflop,
                      gflop > 0 ? fmt::format("{:.2f}", gflop / (ms * 1e-3)) : "null"));
    };
    // Layers in execution order; within a layer, ProfilePhase order.
    double totalGflop = 0, gemmMs = 0;
    for (int layer = 0; layer <= static_cast<int>(conf.layers.size()); ++layer) {
      const int id = layer < static_cast<int>(conf.layers.size()) ? layer : LayerProfiler::kNetwork;
      for (int phase = 0; phase < kProfilePhaseCount; ++phase) {
        if (!ms.front().cells.count({id, phase})) continue;
        const double cellMs = med([&](const Measurement& m) {
          return m.cells.at({id, phase}).msPerIteration;
        });
        const double gflop = ms.front().cells.at({id, phase}).gflopPerIteration;
        totalGflop += gflop;
        if (gflop > 0) gemmMs += cellMs;
        addRow(layerLabel(conf, id),
               std::string(profilePhaseName(static_cast<ProfilePhase>(phase))), cellMs, gflop);
      }
    }
    addRow("network", "data (iterator next)", med([](const Measurement& m) { return m.dataMs; }),
           0);
    addRow("network", "outside ops", med([](const Measurement& m) { return m.outsideOpsMs; }), 0);
    std::cout << fmt::format("{:<43} {:>9.3f} {:>6.1f}% {:>9.1f}   ({:.0f} samples/s)\n",
                             "step (profiled)", step, 100.0, totalGflop / (step * 1e-3),
                             128e3 / step);
    std::cout << fmt::format("{:<43} {:>9.3f} {:>7} {:>9.1f}   ({:.0f} samples/s)\n",
                             "step (unprofiled)", unprofiled, "", totalGflop / (unprofiled * 1e-3),
                             128e3 / unprofiled);
    std::cout << fmt::format(
        "GEMM-like ops: {:.3f} ms/iter ({:.1f}% of the step) at {:.1f} GFLOP/s; "
        "{:.2f} MFLOP per sample\n",
        gemmMs, 100 * gemmMs / step, totalGflop / (gemmMs * 1e-3), totalGflop * 1e3 / 128);
    for (size_t i = 0; i < rows.size(); ++i) json += rows[i] + (i + 1 < rows.size() ? ",\n" : "\n");
    json += fmt::format("    ], \"gemmLikeMs\": {:.4f}, \"mflopPerSample\": {:.4f}}}{}\n", gemmMs,
                        totalGflop * 1e3 / 128, t + 1 < threadCounts.size() ? "," : "");
  }
  json += "  ]";
  if (!parallelRuns.empty()) {
    auto med = [&](double ParallelMeasurement::*field) {
      std::vector<double> v;
      for (const ParallelMeasurement& p : parallelRuns) v.push_back(p.*field);
      return median(v);
    };
    const double sps = med(&ParallelMeasurement::samplesPerSecond);
    std::cout << fmt::format(
        "\nParallelWrapper, {} workers x 1 thread, 128 per worker, averaging every "
        "round ({} batches, median of {} runs)\n",
        cores, iterations, repeats);
    std::cout << fmt::format(
        "  {:.0f} samples/s; of the coordinator's wall time: averaging {:.2f}%, "
        "barrier wait {:.2f}%, data wait {:.2f}%\n",
        sps, 100 * med(&ParallelMeasurement::averaging), 100 * med(&ParallelMeasurement::barrier),
        100 * med(&ParallelMeasurement::dataWait));
    json += fmt::format(
        ",\n  \"parallelWrapper\": {{\"workers\": {}, \"threadsPerWorker\": 1, "
        "\"averagingFrequency\": 1, "
        "\"samplesPerSecond\": {:.1f}, \"averagingShare\": {:.5f}, \"barrierShare\": {:.5f}, "
        "\"dataWaitShare\": {:.5f}}}",
        cores, sps, med(&ParallelMeasurement::averaging), med(&ParallelMeasurement::barrier),
        med(&ParallelMeasurement::dataWait));
  }
  json += "\n}\n";
  samples::writeJsonIfRequested(options, json);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_lenet_breakdown: " << e.what() << "\n";
  return 2;
}
