// The per-shape GEMM bound of LeNet training: what an epoch would cost if every GEMM-like op ran
// at the speed oneDNN's own sgemm reaches at that op's shape.
//
// Every convolution pass is written as the GEMM of an im2col formulation over the whole batch
// (B = 128, P = outH·outW, CK = C·kH·kW):
//   forward           y[O, B·P]   = W[O, CK] · col[CK, B·P]
//   backward data     dcol[CK, B·P] = Wᵀ[CK, O] · dy[O, B·P]        (then col2im, not counted)
//   backward weights  dW[O, CK]  = dy[O, B·P] · colᵀ[B·P, CK]
// and every inner product as y = x·Wᵀ, dx = dy·W, dW = dyᵀ·x. Each shape is timed with
// dnnl_sgemm (warm, median of --calls calls) at 1 and N threads; the bound of an epoch is
// Σ_ops time(op) · 60000 / 128. The element-wise work (pooling, activations, loss, updater) and
// im2col itself are left out, so the bound is optimistic: no real implementation reaches it.
// The same binary then trains LeNet on MNIST without a profiler and prints measured / bound. That
// ratio comes from --rounds rounds, each timing the bound (every op's fastest formulation again)
// and then the training right after it, so that both see the same state of a noisy machine; the
// table gives the median of the rounds' ratios and their range.
//   bench_gemm_bound [--calls 50] [--train-iterations 200] [--rounds 5] [--json FILE]
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "LenetConfiguration.h"
#include "Median.h"
#include "SampleSupport.h"
#include "nn/backend/DeviceContext.h"

using bench::median;

using namespace dl4cpp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int64_t kBatch = 128;
constexpr double kEpochExamples = 60000;

// One GEMM of row-major C[M, N] = op(A)[M, K] · op(B)[K, N]; transA / transB: 'N' or 'T'.
// images > 0: the per-image formulation instead, `images` GEMMs of that shape, one per image,
// spread over the threads (each GEMM single-threaded); `shared` names the operand all images use
// (A: the weights, in forward and backward data; C: dW, which each thread accumulates privately,
// in backward weights), the others are each image's own slice.
struct GemmOp {
  std::string layer, pass;
  char transA = 'N', transB = 'N';
  int64_t m = 0, n = 0, k = 0;
  int64_t images = 0;
  char shared = 'A';
  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
           static_cast<double>(std::max<int64_t>(images, 1));
  }
  std::string formulation() const { return images > 0 ? "per image" : "whole batch"; }
};

// The GEMMs of one training step of LeNet at batch 128, derived from the network's own layer
// shapes (the first layer computes no input gradient, as MultiLayerNetwork skips it). Each op
// comes with every formulation worth timing; the bound takes the fastest.
std::vector<std::vector<GemmOp>> lenetGemms(const MultiLayerConfiguration& conf) {
  std::vector<std::vector<GemmOp>> ops;
  for (size_t i = 0; i < conf.layers.size(); ++i) {
    const std::string name = fmt::format("{} {}", i, conf.layers[i]->typeName());
    const Shape in = conf.layerInputTypes[i].shape(kBatch),
                out = conf.layerOutputTypes[i].shape(kBatch);
    if (const auto* conv = dynamic_cast<const ConvolutionLayer*>(conf.layers[i].get())) {
      const int64_t o = out[1], p = out[2] * out[3];
      const int64_t ck = in[1] * conv->geometry.kernelH * conv->geometry.kernelW;
      ops.push_back({{name, "forward", 'N', 'N', o, kBatch * p, ck},
                     {name, "forward", 'N', 'N', o, p, ck, kBatch, 'A'}});
      if (i > 0)
        ops.push_back({{name, "backward data", 'T', 'N', ck, kBatch * p, o},
                       {name, "backward data", 'T', 'N', ck, p, o, kBatch, 'A'}});
      ops.push_back({{name, "backward weights", 'N', 'T', o, ck, kBatch * p},
                     {name, "backward weights", 'N', 'T', o, ck, p, kBatch, 'C'}});
    } else if (in.rank() == 2) {  // dense and output layers
      const int64_t nIn = in[1], nOut = out[1];
      ops.push_back({{name, "forward", 'N', 'T', kBatch, nOut, nIn}});
      if (i > 0) ops.push_back({{name, "backward data", 'N', 'N', kBatch, nIn, nOut}});
      ops.push_back({{name, "backward weights", 'T', 'N', nOut, nIn, kBatch}});
    }
  }
  return ops;
}

void sgemm(const GemmOp& op, const float* a, const float* b, float* c, float beta) {
  const int64_t lda = op.transA == 'N' ? op.k : op.m, ldb = op.transB == 'N' ? op.n : op.k;
  const dnnl_status_t s =
      dnnl_sgemm(op.transA, op.transB, op.m, op.n, op.k, 1.0f, a, lda, b, ldb, beta, c, op.n);
  if (s != dnnl_success)
    throw BackendError(fmt::format("dnnl_sgemm failed with status {}", static_cast<int>(s)));
}

// Median seconds of the op (one dnnl_sgemm call, or one per image) on `threads` OpenMP threads.
double timeGemm(const GemmOp& op, int threads, int calls) {
  omp_set_num_threads(threads);
  const int64_t images = std::max<int64_t>(op.images, 1);
  const int64_t aSize = op.m * op.k, bSize = op.k * op.n, cSize = op.m * op.n;
  // Buffers for every image (a shared operand is stored once; C once per thread).
  const int64_t aCount = op.images > 0 && op.shared == 'A' ? 1 : images;
  const int64_t cCount = op.images > 0 && op.shared == 'C' ? threads : images;
  std::vector<float> a(static_cast<size_t>(aSize * aCount)), b(static_cast<size_t>(bSize * images)),
      c(static_cast<size_t>(cSize * cCount));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  auto call = [&] {
    if (op.images == 0) {
      sgemm(op, a.data(), b.data(), c.data(), 0.0f);
      return;
    }
    // Inside the parallel region each dnnl_sgemm runs on its calling thread alone.
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < images; ++i) {
      const float* ai = a.data() + (aCount > 1 ? i * aSize : 0);
      float* ci = c.data() + (op.shared == 'C' ? omp_get_thread_num() : i) * cSize;
      sgemm(op, ai, b.data() + i * bSize, ci, op.shared == 'C' ? 1.0f : 0.0f);
    }
  };
  for (int i = 0; i < 5; ++i) call();  // warm: caches, OpenMP team, JIT kernels
  std::vector<double> times;
  for (int i = 0; i < calls; ++i) {
    const auto t = Clock::now();
    call();
    times.push_back(std::chrono::duration<double>(Clock::now() - t).count());
  }
  return median(times);
}

// Samples per second of plain LeNet training (no profiler) on real MNIST.
double trainingThroughput(int threads, int iterations, MnistDataSetIterator& data) {
  MultiLayerNetwork model(samples::lenetConfiguration(), Device::cpu(), threads);
  model.init();
  auto next = [&] {  // full batches only, like the GEMMs it is compared with
    for (;;) {
      if (!data.hasNext()) data.reset();
      DataSet batch = data.next();
      if (batch.numExamples() == kBatch) return batch;
    }
  };
  for (int i = 0; i < 20; ++i) model.fit(next());
  int64_t examples = 0;
  double seconds = 0;
  for (int i = 0; i < iterations; ++i) {
    const DataSet batch = next();
    const auto t = Clock::now();
    model.fit(batch);
    seconds += std::chrono::duration<double>(Clock::now() - t).count();
    examples += batch.numExamples();
  }
  return static_cast<double>(examples) / seconds;
}

}  // namespace

int main(int argc, char** argv) try {
  const samples::SampleOptions options(
      argc, argv,
      {{"calls", "timed dnnl_sgemm calls per shape (default 50)"},
       {"train-iterations",
        "timed LeNet iterations for the measured "
        "epoch; 0 skips training (default 200)"},
       {"rounds", "rounds of bound + training for the ratio (default 5)"},
       {"json", "also write the results to this JSON file"},
       {"data-dir", "MNIST directory"}});
  const int calls = static_cast<int>(options.getInt("calls", 50));
  const int trainIterations = static_cast<int>(options.getInt("train-iterations", 200));
  const int rounds = static_cast<int>(options.getInt("rounds", 5));
  if (calls < 1 || trainIterations < 0 || rounds < 1)
    throw std::invalid_argument("--calls and --rounds must be >= 1, --train-iterations >= 0");
  const MultiLayerConfiguration conf = samples::lenetConfiguration();
  const std::vector<std::vector<GemmOp>> ops = lenetGemms(conf);
  const int cores = hardwareConcurrency();
  std::vector<int> threadCounts{1};
  if (cores > 1) threadCounts.push_back(cores);

  // seconds[op][formulation][thread count].
  std::vector<std::vector<std::vector<double>>> seconds(ops.size());
  for (size_t i = 0; i < ops.size(); ++i)
    for (const GemmOp& f : ops[i]) {
      seconds[i].emplace_back();
      for (int t : threadCounts) seconds[i].back().push_back(timeGemm(f, t, calls));
    }

  std::cout << fmt::format(
      "LeNet's GEMM-like ops at batch {} as dnnl_sgemm shapes (row-major C[M,N] = "
      "op(A)[M,K]·op(B)[K,N]), median of {} calls; * = the op's fastest formulation, "
      "which the bound uses\n\n",
      kBatch, calls);
  std::string header = fmt::format("{:<20} {:<17} {:<11} {:>2} {:>6} {:>6} {:>6} {:>8}", "layer",
                                   "pass", "formulation", "AB", "M", "N", "K", "MFLOP");
  for (int t : threadCounts)
    header += fmt::format(" {:>9} {:>10}", fmt::format("ms@{}t", t), fmt::format("GF/s@{}t", t));
  std::cout << header << "\n";
  std::string json = fmt::format("{{\n  \"batch\": {}, \"calls\": {}, \"cores\": {}, \"ops\": [\n",
                                 kBatch, calls, cores);
  double flopsPerStep = 0;
  std::vector<std::vector<size_t>> fastest(ops.size());  // [op][thread count]: its formulation
  for (size_t i = 0; i < ops.size(); ++i) {
    const double flops = ops[i].front().flops();
    flopsPerStep += flops;
    std::vector<size_t>& best = fastest[i];
    best.assign(threadCounts.size(), 0);
    for (size_t t = 0; t < threadCounts.size(); ++t)
      for (size_t f = 1; f < ops[i].size(); ++f)
        if (seconds[i][f][t] < seconds[i][best[t]][t]) best[t] = f;
    json += fmt::format(
        "    {{\"layer\": \"{}\", \"pass\": \"{}\", \"mflop\": {:.4f}, \"formulations\": [\n",
        ops[i].front().layer, ops[i].front().pass, flops / 1e6);
    for (size_t f = 0; f < ops[i].size(); ++f) {
      const GemmOp& op = ops[i][f];
      std::string line =
          fmt::format("{:<20} {:<17} {:<11} {}{} {:>6} {:>6} {:>6} {:>8.2f}", op.layer, op.pass,
                      op.formulation(), op.transA, op.transB, op.m, op.n, op.k, flops / 1e6);
      std::string rates;
      for (size_t t = 0; t < threadCounts.size(); ++t) {
        const double sec = seconds[i][f][t];
        line += fmt::format(" {:>9.3f} {:>9.1f}{}", sec * 1e3, flops / sec / 1e9,
                            best[t] == f ? "*" : " ");
        rates +=
            fmt::format("{}\"{}\": {{\"ms\": {:.4f}, \"gflops\": {:.2f}, \"fastest\": {}}}",
                        t ? ", " : "", threadCounts[t], sec * 1e3, flops / sec / 1e9, best[t] == f);
      }
      std::cout << line << "\n";
      json += fmt::format(
          "      {{\"formulation\": \"{}\", \"images\": {}, \"transA\": \"{}\", \"transB\": "
          "\"{}\", "
          "\"m\": {}, \"n\": {}, \"k\": {}, \"byThreads\": {{{}}}}}{}\n",
          op.formulation(), op.images, op.transA, op.transB, op.m, op.n, op.k, rates,
          f + 1 < ops[i].size() ? "," : "");
    }
    json += fmt::format("    ]}}{}\n", i + 1 < ops.size() ? "," : "");
  }
  json += "  ],\n  \"bound\": [\n";
  std::cout << fmt::format(
      "\n{:.3f} MFLOP per sample; an epoch = {} examples = {:.2f} steps of {}\n\n",
      flopsPerStep / kBatch / 1e6, kEpochExamples, kEpochExamples / kBatch, kBatch);
  std::cout << fmt::format("{:>7} {:>14} {:>14} {:>13} {:>14} {:>14} {:>16} {:>13}\n", "threads",
                           "bound step ms", "bound epoch s", "GEMM GFLOP/s", "measured sps",
                           "measured epoch", "measured/bound", "(range)");
  std::unique_ptr<MnistDataSetIterator> data;
  if (trainIterations > 0)
    data = std::make_unique<MnistDataSetIterator>(static_cast<int>(kBatch), 60000, false, true,
                                                  true, 123, options.getString("data-dir", ""));
  for (size_t t = 0; t < threadCounts.size(); ++t) {
    std::vector<double> steps, rates, ratios;
    for (int r = 0; r < rounds; ++r) {
      double step = 0;
      for (size_t i = 0; i < ops.size(); ++i)
        step += timeGemm(ops[i][fastest[i][t]], threadCounts[t], calls);
      const double sps = data ? trainingThroughput(threadCounts[t], trainIterations, *data) : 0;
      steps.push_back(step);
      rates.push_back(sps);
      if (sps > 0) ratios.push_back(static_cast<double>(kBatch) / sps / step);  // measured / bound
    }
    const double step = median(steps), sps = median(rates);
    const double ratio = ratios.empty() ? 0 : median(ratios);
    const auto [low, high] = ratios.empty()
                                 ? std::pair{0.0, 0.0}
                                 : std::pair{*std::min_element(ratios.begin(), ratios.end()),
                                             *std::max_element(ratios.begin(), ratios.end())};
    const double boundEpoch = step * kEpochExamples / kBatch;
    const double measuredEpoch = sps > 0 ? kEpochExamples / sps : 0;
    std::cout << fmt::format(
        "{:>7} {:>14.3f} {:>14.3f} {:>13.1f} {:>14.0f} {:>13.3f} s {:>15.2f}x {:>13}\n",
        threadCounts[t], step * 1e3, boundEpoch, flopsPerStep / step / 1e9, sps, measuredEpoch,
        ratio, fmt::format("{:.2f}-{:.2f}", low, high));
    std::string perRound;
    for (size_t r = 0; r < steps.size(); ++r)
      perRound += fmt::format("{}{{\"boundStepMs\": {:.4f}, \"measuredSamplesPerSecond\": {:.1f}}}",
                              r ? ", " : "", steps[r] * 1e3, rates[r]);
    json += fmt::format(
        "    {{\"threads\": {}, \"boundStepMs\": {:.4f}, \"boundEpochSeconds\": {:.4f}, "
        "\"gemmGflops\": {:.2f}, \"measuredSamplesPerSecond\": {:.1f}, \"measuredEpochSeconds\": "
        "{:.4f}, "
        "\"measuredOverBound\": {:.4f}, \"measuredOverBoundMin\": {:.4f}, "
        "\"measuredOverBoundMax\": {:.4f}, \"rounds\": [{}]}}{}\n",
        threadCounts[t], step * 1e3, boundEpoch, flopsPerStep / step / 1e9, sps, measuredEpoch,
        ratio, low, high, perRound, t + 1 < threadCounts.size() ? "," : "");
  }
  json += fmt::format("  ],\n  \"mflopPerSample\": {:.4f}, \"trainIterations\": {}\n}}\n",
                      flopsPerStep / kBatch / 1e6, trainIterations);
  samples::writeJsonIfRequested(options, json);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_gemm_bound: " << e.what() << "\n";
  return 2;
}
