// Every CPU convolution algorithm of the tables in nn/backend/cpu/ConvolutionChoice.h against
// oneDNN's, on the convolutions of the networks the benchmarks train (LeNet and the VGG-style
// network, batch 128): for each pass and shape, each algorithm that takes the shape at the
// process's ISA level (DL4CPP_MAX_CPU_ISA caps it) is forced through DL4CPP_CPU_ALGORITHM's setting
// and timed. The algorithms are timed in turn, call for call, so that all see the same state of a
// noisy machine; each cell is the median of --calls timings. `chosen` marks the table's own choice;
// `vs onednn` is oneDNN's time over the algorithm's (above 1: the algorithm is faster). This is
// the evidence docs/performance.md keeps for each hand-written kernel.
//   bench_cpu_algorithms [--calls 30] [--threads 2]
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "Median.h"
#include "nn/backend/DeviceContext.h"
#include "nn/backend/cpu/ConvolutionChoice.h"
#include "nn/backend/cpu/CpuAlgorithm.h"

using bench::median;

using namespace dl4cpp;
using Clock = std::chrono::steady_clock;

namespace {

struct Shape4 {
  const char* what;
  Shape x, w;
  int64_t kernel, pad;
};

WindowGeometry geometry(int64_t k, int64_t pad) {
  WindowGeometry g;
  g.kernelH = g.kernelW = k;
  g.padTop = g.padLeft = g.padBottom = g.padRight = pad;
  return g;
}

Tensor values(const Shape& shape, uint32_t seed) {
  Tensor t(shape);
  uint32_t s = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data()[i] = static_cast<float>(static_cast<int32_t>(s >> 8) % 2001 - 1000) / 1000.0f;
  }
  return t;
}

// Times each algorithm of `table` that takes the call (fits(args) at or above its level), running
// `call` with it forced; prints one row per algorithm.
template <typename Table, typename Fits, typename Call>
void timeTable(const char* op, const char* shape, const Table& table, std::string_view chosen,
               Fits&& fits, Call&& call, int calls) {
  std::vector<std::string_view> names;
  for (const auto& a : table)
    if (a.minIsa <= cpuIsa() && fits(a)) names.push_back(a.name);
  std::vector<std::vector<double>> ms(names.size());
  for (int round = -1; round < calls; ++round)  // round -1 warms up (primitive creation, scratch)
    for (size_t i = 0; i < names.size(); ++i) {
      cpu::setCpuAlgorithmSetting(std::string(op) + "=" + std::string(names[i]));
      const auto start = Clock::now();
      call();
      const double elapsed =
          std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (round >= 0) ms[i].push_back(elapsed);
    }
  cpu::setCpuAlgorithmSetting("");
  double onednn = 0;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == "onednn") onednn = median(ms[i]);
  for (size_t i = 0; i < names.size(); ++i) {
    const double t = median(ms[i]);
    std::cout << fmt::format("| {} | {} | {} | {:.3f} | {:.2f} | {} |\n", op, shape, names[i], t,
                             onednn / t, names[i] == chosen ? "chosen" : "");
  }
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 30, threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--calls")
      calls = std::stoi(argv[i + 1]);
    else if (flag == "--threads")
      threads = std::stoi(argv[i + 1]);
    else {
      std::cerr << "usage: bench_cpu_algorithms [--calls 30] [--threads 2]\n";
      return 2;
    }
  }
  // The convolutions of LeNet (samples/LenetConfiguration.h), of the VGG-style network
  // (samples/VggConfiguration.h) and the stride-1 ones of the residual network
  // (samples/ResidualConfiguration.h) at batch 128, as the samples train them.
  const std::vector<Shape4> shapes = {
      {"LeNet conv1: 1x28x28 -> 20, 5x5", Shape{128, 1, 28, 28}, Shape{20, 1, 5, 5}, 5, 0},
      {"LeNet conv2: 20x12x12 -> 50, 5x5", Shape{128, 20, 12, 12}, Shape{50, 20, 5, 5}, 5, 0},
      {"VGG conv1: 1x28x28 -> 32, 3x3 pad 1", Shape{128, 1, 28, 28}, Shape{32, 1, 3, 3}, 3, 1},
      {"VGG conv2: 32x28x28 -> 32, 3x3 pad 1", Shape{128, 32, 28, 28}, Shape{32, 32, 3, 3}, 3, 1},
      {"VGG conv3: 32x14x14 -> 64, 3x3 pad 1", Shape{128, 32, 14, 14}, Shape{64, 32, 3, 3}, 3, 1},
      {"VGG conv4: 64x14x14 -> 64, 3x3 pad 1", Shape{128, 64, 14, 14}, Shape{64, 64, 3, 3}, 3, 1},
      {"Residual res1: 16x28x28 -> 16, 3x3 pad 1", Shape{128, 16, 28, 28}, Shape{16, 16, 3, 3}, 3,
       1},
      {"Residual res2: 32x14x14 -> 32, 3x3 pad 1", Shape{128, 32, 14, 14}, Shape{32, 32, 3, 3}, 3,
       1},
      {"Residual res3: 64x7x7 -> 64, 3x3 pad 1", Shape{128, 64, 7, 7}, Shape{64, 64, 3, 3}, 3, 1},
  };
  DeviceContext ctx(Device::cpu(), threads);
  ctx.bindToCurrentThread();
  Backend& ops = ctx.backend();
  std::cout << fmt::format("CPU ISA level: {}, {} threads, median of {} calls\n\n",
                           cpuIsaName(cpuIsa()), threads, calls);
  std::cout << "| op | shape | algorithm | ms | vs onednn | |\n|---|---|---|---|---|---|\n";
  for (const Shape4& s : shapes) {
    const WindowGeometry g = geometry(s.kernel, s.pad);
    const Shape yShape{s.x[0], s.w[0], g.outH(s.x[2]), g.outW(s.x[3])};
    const Tensor x = values(s.x, 1), w = values(s.w, 2), b = values(Shape{s.w[0]}, 3);
    const Tensor dy = values(yShape, 4);
    Tensor y(yShape), dx(s.x), dw(s.w), db(Shape{s.w[0]});
    timeTable(
        "conv_forward", s.what, cpu::kConvolutionForwardAlgorithms,
        cpu::selectConvolutionForward(s.w, g, yShape[2], yShape[3]).name,
        [&](const auto& a) { return a.fits(s.w, g, yShape[2], yShape[3]); },
        [&] { ops.convolutionForward(x, w, b, y, g); }, calls);
    timeTable(
        "conv_backward_data", s.what, cpu::kConvolutionBackwardDataAlgorithms,
        cpu::selectConvolutionBackwardData(s.x, s.w, g).name,
        [&](const auto& a) { return a.fits(s.x, s.w, g); },
        [&] { ops.convolutionBackwardData(dy, w, dx, g); }, calls);
    timeTable(
        "conv_backward_weights", s.what, cpu::kConvolutionWeightGradientAlgorithms,
        cpu::selectConvolutionWeightGradient(s.w, g, yShape[2], yShape[3]).name,
        [&](const auto& a) { return a.fits(s.w, g, yShape[2], yShape[3]); },
        [&] { ops.convolutionBackwardWeights(x, dy, dw, db, g); }, calls);
  }
  return 0;
}
