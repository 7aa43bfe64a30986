// Serving throughput and latency of ParallelInference, after a table of what one forward pass
// costs by batch size and thread count (what batching can gain). C in-process callers, each sending
// 1-example requests (real MNIST test images, one after another) to a LeNet trained for a few
// hundred iterations. For C in {1, 4, 16}: one model shared under a mutex (the naive service),
// then ParallelInference with 1 and 2 workers (threads per worker: cores / workers), SEQUENTIAL and
// BATCHED. Every configuration runs `--repeats` times, interleaved with the others so drift of a
// noisy machine spreads evenly; the table reports medians of requests/s and latency percentiles.
// Every result is also compared with the model's output for that image computed alone.
// Everything runs on the CPU, also where a GPU is visible.
//   bench_parallel_inference [--train-iterations 300] [--seconds 1.5] [--repeats 3] [--images 2000]
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "LenetConfiguration.h"
#include "Median.h"
#include "SampleSupport.h"
#include "nn/backend/DeviceContext.h"

using bench::median;

using namespace dl4cpp;
using namespace dl4cpp::parallel;
using Clock = std::chrono::steady_clock;

namespace {

struct Config {
  int callers = 1;
  int workers = 0;  // 0: one model behind a mutex, no ParallelInference
  InferenceMode mode = InferenceMode::BATCHED;
  std::string name() const {
    if (workers == 0) return "model + mutex";
    return fmt::format("{} worker{}, {}", workers, workers > 1 ? "s" : "",
                       mode == InferenceMode::BATCHED ? "BATCHED" : "SEQUENTIAL");
  }
};

struct Sample {
  double requestsPerSecond = 0, p50 = 0, p99 = 0;  // latencies in ms
  double meanBatch = 1;
  float maxDiff = 0;  // largest |result - output computed alone| over every request
};

double percentile(std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t i =
      std::min(sorted.size() - 1, static_cast<size_t>(q * static_cast<double>(sorted.size())));
  return sorted[i];
}

float maxAbsDiff(const Tensor& a, const Tensor& b) {
  float d = 0;
  for (int64_t i = 0; i < a.numel(); ++i) d = std::max(d, std::abs(a.data()[i] - b.data()[i]));
  return d;
}

// C callers send requests back to back for warm-up + `seconds`; only requests that complete inside
// the measured window count.
Sample measure(const Config& c, const MultiLayerNetwork& trained, const Tensor& images,
               const std::vector<Tensor>& alone, double seconds) {
  const int64_t count = images.dim(0);
  std::optional<ParallelInference> inference;
  std::optional<MultiLayerNetwork> shared;
  std::mutex sharedMutex;
  if (c.workers > 0)
    inference.emplace(ParallelInference::Builder(trained)
                          .devices({Device::cpu()})
                          .workers(c.workers)
                          .inferenceMode(c.mode)
                          .build());
  else
    shared.emplace(trained.clone());  // threads: every core, as a plain model

  std::atomic<bool> measuring{false}, stop{false};
  std::vector<std::vector<double>> latencies(static_cast<size_t>(c.callers));
  std::vector<float> diffs(static_cast<size_t>(c.callers), 0.0f);
  std::vector<std::thread> threads;
  for (int t = 0; t < c.callers; ++t)
    threads.emplace_back([&, t] {
      for (int64_t k = t; !stop; k += c.callers) {
        const int64_t i = k % count;
        const Tensor image = images.rows(i, i + 1);  // a view: no copy
        const auto start = Clock::now();
        Tensor out;
        if (inference) {
          out = inference->output(image);
        } else {
          std::lock_guard lock(sharedMutex);
          out = shared->output(image);
        }
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        if (measuring) latencies[static_cast<size_t>(t)].push_back(ms);
        diffs[static_cast<size_t>(t)] =
            std::max(diffs[static_cast<size_t>(t)], maxAbsDiff(out, alone[static_cast<size_t>(i)]));
      }
    });
  std::this_thread::sleep_for(
      std::chrono::duration<double>(std::min(0.3, seconds / 4)));  // warm-up
  const InferenceStatistics before = inference ? inference->statistics() : InferenceStatistics{};
  measuring = true;
  const auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  measuring = false;
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const InferenceStatistics after = inference ? inference->statistics() : InferenceStatistics{};
  stop = true;
  for (auto& th : threads) th.join();

  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  Sample s;
  s.requestsPerSecond = static_cast<double>(all.size()) / wall;
  s.p50 = percentile(all, 0.50);
  s.p99 = percentile(all, 0.99);
  if (after.batches > before.batches)
    s.meanBatch = static_cast<double>(after.requests - before.requests) /
                  static_cast<double>(after.batches - before.batches);
  s.maxDiff = *std::max_element(diffs.begin(), diffs.end());
  return s;
}

}  // namespace

int main(int argc, char** argv) try {
  const samples::SampleOptions options(
      argc, argv,
      {{"train-iterations", "LeNet training iterations, batch 128 (default 300)"},
       {"seconds", "measured seconds per run (default 1.5)"},
       {"repeats", "runs per configuration (default 3)"},
       {"images", "MNIST test images the callers cycle through (default 2000)"},
       {"data-dir", "MNIST directory"}});
  const int iterations = static_cast<int>(options.getInt("train-iterations", 300));
  const double seconds = options.getDouble("seconds", 1.5);
  const int repeats = static_cast<int>(options.getInt("repeats", 3));
  const int imageCount = static_cast<int>(options.getInt("images", 2000));
  const std::string dir = options.getString("data-dir", "");
  const int cores = hardwareConcurrency();

  MultiLayerNetwork model(samples::lenetConfiguration());
  model.init();
  MnistDataSetIterator train(128, 60000, false, true, true, 123, dir);
  const auto trainStart = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    if (!train.hasNext()) train.reset();
    model.fit(train.next());
  }
  const double trainSeconds = std::chrono::duration<double>(Clock::now() - trainStart).count();
  MnistDataSetIterator test(1000, 10000, false, false, false, 123, dir);
  const double accuracy = model.evaluate(test).accuracy();

  MnistDataSetIterator images(imageCount, imageCount, false, false, false, 123, dir);
  const Tensor features = images.next().features;
  std::vector<Tensor> alone;  // each image's output computed alone: what every result must equal
  for (int64_t i = 0; i < features.dim(0); ++i)
    alone.push_back(model.output(features.rows(i, i + 1)));

  // What one forward pass costs by batch size: batching pays only as far as the cost per example
  // falls with the batch.
  std::cout << fmt::format(
      "forward pass of the trained LeNet, median of 200 passes\n\n"
      "| threads | batch | µs per pass | µs per example |\n|---|---|---|---|\n");
  for (int threads : {1, cores})
    for (int64_t batch : {1, 4, 8, 16, 32}) {
      MultiLayerNetwork replica(model.getConfiguration(), Device::cpu(), threads);
      replica.init();
      replica.setParams(model.params());
      const Tensor input = features.rows(0, batch);
      for (int i = 0; i < 10; ++i) replica.output(input);
      std::vector<double> micros;
      for (int i = 0; i < 200; ++i) {
        const auto start = Clock::now();
        replica.output(input);
        micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      }
      const double m = median(micros);
      std::cout << fmt::format("| {} | {} | {:.0f} | {:.0f} |\n", threads, batch, m,
                               m / static_cast<double>(batch));
    }
  std::cout << "\n";
  // What warm-up (one pass per batch size 1..batchLimit on each worker) adds to build().
  for (bool warm : {false, true}) {
    std::vector<double> ms;
    for (int i = 0; i < 3; ++i) {
      const auto start = Clock::now();
      ParallelInference inference = ParallelInference::Builder(model)
                                        .devices({Device::cpu()})
                                        .workers(2)
                                        .warmUp(warm)
                                        .build();
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    std::cout << fmt::format(
        "ParallelInference::build(), 2 workers, batchLimit 32, warmUp({}): {:.0f} ms "
        "(median of 3)\n",
        warm, median(ms));
  }
  std::cout << "\n";

  std::vector<Config> configs;
  for (int callers : {1, 4, 16}) {
    configs.push_back({callers, 0});
    for (int workers : {1, 2})
      for (InferenceMode mode : {InferenceMode::SEQUENTIAL, InferenceMode::BATCHED})
        configs.push_back({callers, workers, mode});
  }
  std::vector<std::vector<Sample>> results(configs.size());
  for (int r = 0; r < repeats; ++r)
    for (size_t i = 0; i < configs.size(); ++i)
      results[i].push_back(measure(configs[i], model, features, alone, seconds));

  std::cout << fmt::format(
      "LeNet trained {} iterations ({:.1f} s), test accuracy {:.2f}%; {} MNIST test "
      "images, 1 per request; {} cores; {:.1f} s per run, median of {} runs\n\n",
      iterations, trainSeconds, 100 * accuracy, features.dim(0), cores, seconds, repeats);
  std::cout << "| callers | setup | threads/worker | requests/s | p50 ms | p99 ms | requests/batch "
               "| max diff vs alone |\n"
               "|---|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    auto med = [&](double Sample::*field) {
      std::vector<double> v;
      for (const Sample& s : results[i]) v.push_back(s.*field);
      return median(v);
    };
    float diff = 0;
    for (const Sample& s : results[i]) diff = std::max(diff, s.maxDiff);
    std::cout << fmt::format(
        "| {} | {} | {} | {:.0f} | {:.3f} | {:.3f} | {:.2f} | {:.1e} |\n", c.callers, c.name(),
        c.workers == 0 ? cores : std::max(1, cores / c.workers), med(&Sample::requestsPerSecond),
        med(&Sample::p50), med(&Sample::p99), med(&Sample::meanBatch), diff);
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_parallel_inference: " << e.what() << "\n";
  return 2;
}
