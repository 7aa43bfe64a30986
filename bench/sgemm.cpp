// dl4cpp's sgemm (nn/backend/cpu/gemm/Sgemm.h) against oneDNN's dnnl_sgemm on the GEMMs of a LeNet
// training step at batch 128: the per-image convolution GEMMs as the convolutions run them (128
// calls, one per image, on one thread), and the dense layers' whole-batch GEMMs on 1 and 2
// threads, those of a 1024 x 1024 dense layer at batch 256 too. The two are timed alternately, call
// for call, so that both see the same state of a noisy machine; each cell is the median of --calls
// timings. `diff` is the largest difference between the two results relative to the largest
// magnitude, a check that both computed the same.
//   bench_sgemm [--calls 200]
#include "nn/backend/cpu/gemm/Sgemm.h"

#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "Median.h"
#include "SampleSupport.h"
#include "nn/backend/DeviceContext.h"

using bench::median;

using namespace dl4cpp;
using Clock = std::chrono::steady_clock;

namespace {

// Row-major C[M, N] = op(A)[M, K] · op(B)[K, N] + beta · C; images > 0: that many calls, one per
// image, each with its own B and C (A, the weights, shared), as the convolutions make them.
struct Gemm {
  std::string what;
  char transA, transB;
  int64_t m, n, k;
  float beta;
  int64_t images = 0;
  int64_t lda() const { return transA == 'N' ? k : m; }
  int64_t ldb() const { return transB == 'N' ? n : k; }
  double flops() const {
    return 2.0 * double(m) * double(n) * double(k) * double(std::max<int64_t>(images, 1));
  }
};

struct Operands {
  std::vector<float> a, b, c, scratch;
  Operands(const Gemm& g, int threads) {
    const int64_t calls = std::max<int64_t>(g.images, 1);
    a.resize(static_cast<size_t>(g.m * g.k));
    b.resize(static_cast<size_t>(g.k * g.n * calls));
    c.resize(static_cast<size_t>(g.m * g.n * calls));
    scratch.resize(
        static_cast<size_t>(cpu::sgemmScratchFloats(g.transA, g.transB, g.m, g.n, g.k, threads)));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
  }
};

void runOurs(const Gemm& g, Operands& o) {
  for (int64_t i = 0; i < std::max<int64_t>(g.images, 1); ++i)
    cpu::sgemm(g.transA, g.transB, g.m, g.n, g.k, o.a.data(), g.lda(), o.b.data() + i * g.k * g.n,
               g.ldb(), g.beta, o.c.data() + i * g.m * g.n, g.n, o.scratch.data());
}

void runDnnl(const Gemm& g, Operands& o) {
  for (int64_t i = 0; i < std::max<int64_t>(g.images, 1); ++i)
    if (dnnl_sgemm(g.transA, g.transB, g.m, g.n, g.k, 1.0f, o.a.data(), g.lda(),
                   o.b.data() + i * g.k * g.n, g.ldb(), g.beta, o.c.data() + i * g.m * g.n,
                   g.n) != dnnl_success)
      throw BackendError("dnnl_sgemm failed");
}

// max |ours - dnnl| / max |dnnl| over one call of each from C = 0.
double difference(const Gemm& g, int threads) {
  Operands ours(g, threads), theirs(g, threads);
  runOurs(g, ours);
  runDnnl(g, theirs);
  double worst = 0, scale = 0;
  for (size_t i = 0; i < ours.c.size(); ++i) {
    worst = std::max(worst, double(std::abs(ours.c[i] - theirs.c[i])));
    scale = std::max(scale, double(std::abs(theirs.c[i])));
  }
  return worst / scale;
}

template <typename Run>
double secondsOf(Run&& run) {
  const auto t = Clock::now();
  run();
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void compare(const Gemm& g, int threads, int calls) {
  omp_set_num_threads(threads);
  Operands o(g, threads);
  for (int i = 0; i < 10; ++i) runOurs(g, o), runDnnl(g, o);  // warm: caches, threads, JIT kernels
  std::vector<double> ours, dnnl;
  for (int i = 0; i < calls; ++i) {  // alternate which goes first
    if (i % 2) ours.push_back(secondsOf([&] { runOurs(g, o); }));
    dnnl.push_back(secondsOf([&] { runDnnl(g, o); }));
    if (i % 2 == 0) ours.push_back(secondsOf([&] { runOurs(g, o); }));
  }
  const double mine = median(ours), theirs = median(dnnl);
  std::cout << fmt::format(
      "{:<34} {}{} {:>4} {:>4} {:>4} {:>2} {:>7} {:>9.3f} {:>9.3f} {:>9.1f} {:>9.1f} {:>6.2f} "
      "{:>9.1e}\n",
      g.what, g.transA, g.transB, g.m, g.n, g.k, threads,
      g.images ? fmt::format("{}x", g.images) : "1", mine * 1e3, theirs * 1e3,
      g.flops() / mine / 1e9, g.flops() / theirs / 1e9, theirs / mine, difference(g, threads));
}

}  // namespace

int main(int argc, char** argv) try {
  const samples::SampleOptions options(argc, argv,
                                       {{"calls", "timed calls of each per shape (default 200)"}});
  const int calls = static_cast<int>(options.getInt("calls", 200));
  if (calls < 1) throw std::invalid_argument("--calls must be >= 1");
  const std::vector<Gemm> perImage{
      {"conv 1->20 forward (im2col)", 'N', 'N', 20, 576, 26, 0.0f, 128},
      {"conv 20->50 backward data (col2im)", 'T', 'N', 500, 64, 50, 0.0f, 128}};
  const std::vector<Gemm> dense{
      {"dense 800->500 forward", 'N', 'T', 128, 500, 800, 1.0f},
      {"dense 800->500 backward data", 'N', 'N', 128, 800, 500, 0.0f},
      {"dense 800->500 backward weights", 'T', 'N', 500, 800, 128, 0.0f},
      {"output 500->10 forward", 'N', 'T', 128, 10, 500, 1.0f},
      {"output 500->10 backward data", 'N', 'N', 128, 500, 10, 0.0f},
      {"output 500->10 backward weights", 'T', 'N', 10, 500, 128, 0.0f},
      // A wider MLP layer: rows of 4 KiB, the stride that aliases in L1.
      {"dense 1024->1024 forward", 'N', 'T', 256, 1024, 1024, 1.0f},
      {"dense 1024->1024 backward data", 'N', 'N', 256, 1024, 1024, 0.0f},
      {"dense 1024->1024 backward weights", 'T', 'N', 1024, 1024, 256, 0.0f}};
  std::cout << fmt::format(
      "Row-major C[M,N] = op(A)·op(B) (+ C), median of {} calls; ratio = dnnl ms / ours ms "
      "(> 1: ours faster)\n\n",
      calls);
  std::cout << fmt::format(
      "{:<34} {:>2} {:>4} {:>4} {:>4} {:>2} {:>7} {:>9} {:>9} {:>9} {:>9} {:>6} {:>9}\n", "GEMM",
      "AB", "M", "N", "K", "t", "calls", "ours ms", "dnnl ms", "ours GF/s", "dnnl GF/s", "ratio",
      "diff");
  for (const Gemm& g : perImage) compare(g, 1, calls);
  const int cores = hardwareConcurrency();
  for (const Gemm& g : dense)
    for (int threads = 1; threads <= std::min(cores, 2); ++threads) compare(g, threads, calls);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_sgemm: " << e.what() << "\n";
  return 2;
}
