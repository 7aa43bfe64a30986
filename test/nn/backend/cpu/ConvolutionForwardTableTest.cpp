// The convolution-forward algorithm table (nn/backend/cpu/ConvolutionChoice.h): every algorithm
// that the process's ISA level and a shape allow, forced through DL4CPP_CPU_ALGORITHM's setting,
// against oneDNN's answer on the same call; forcing one a shape or the level rules out is a
// CpuAlgorithmError. The suite runs at every ISA level (scripts/test.sh), so each level's
// algorithms are checked there.
//
// Tolerances: every algorithm sums the same C * kH * kW products in float in some order, so each
// output differs from the exact sum by at most K u S, where K is the number of terms, u = 2^-24
// and S the sum of the terms' magnitudes (|x| conv |w| + |b|, computed here in double); oneDNN's
// answer likewise, hence 2 K u S between the two. Winograd's transforms add the input and weight
// transforms' rounding, bounded by a constant times the same S; 64 covers F(4x4, 3x3) and
// F(4x4, 5x5), whose transform matrices have entries up to 8 in magnitude.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "nn/backend/cpu/ConvolutionChoice.h"
#include "nn/backend/cpu/CpuAlgorithm.h"
#include "nn/tensor/DeviceContext.h"

using namespace dl4cpp;

namespace {

struct Case {
  const char* what;
  Shape x, w;
  WindowGeometry g;
};

WindowGeometry geometry(int64_t k, int64_t stride, int64_t pad) {
  WindowGeometry g;
  g.kernelH = g.kernelW = k;
  g.strideH = g.strideW = stride;
  g.padTop = g.padLeft = g.padBottom = g.padRight = pad;
  return g;
}

Tensor values(Shape shape, uint32_t seed) {
  Tensor t(shape);
  uint32_t s = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data()[i] = static_cast<float>(static_cast<int32_t>(s >> 8) % 2001 - 1000) / 1000.0f;
  }
  return t;
}

// S of the header comment, per output: sum over the window of |x| |w|, plus |b|.
std::vector<double> magnitudes(const Tensor& x, const Tensor& w, const Tensor& b, const Shape& y,
                               const WindowGeometry& g) {
  std::vector<double> s(static_cast<size_t>(y.numel()));
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  const int64_t o = w.dim(0), oh = y[2], ow = y[3];
  size_t at = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t f = 0; f < o; ++f)
      for (int64_t r = 0; r < oh; ++r)
        for (int64_t q = 0; q < ow; ++q, ++at) {
          double sum = std::fabs(double(b.data()[f]));
          for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t u = 0; u < g.kernelH; ++u)
              for (int64_t v = 0; v < g.kernelW; ++v) {
                const int64_t row = r * g.strideH - g.padTop + u,
                              col = q * g.strideW - g.padLeft + v;
                if (row < 0 || row >= h || col < 0 || col >= wd) continue;
                sum += std::fabs(double(x.data()[((i * c + ch) * h + row) * wd + col])) *
                       std::fabs(double(w.data()[((f * c + ch) * g.kernelH + u) * g.kernelW + v]));
              }
          s[at] = sum;
        }
  return s;
}

// Restores the process's setting (the environment's, normally none) when a test ends.
struct ForcedAlgorithm {
  explicit ForcedAlgorithm(const std::string& name) {
    cpu::setCpuAlgorithmSetting("conv_forward=" + name);
  }
  ~ForcedAlgorithm() { cpu::setCpuAlgorithmSetting(""); }
};

}  // namespace

TEST_SUITE("ConvolutionForwardTable") {
  TEST_CASE("every algorithm matches oneDNN on the shapes it takes, at this ISA level") {
    const std::vector<Case> cases = {
        {"LeNet's first: 1 channel, 5x5", Shape{4, 1, 28, 28}, Shape{20, 1, 5, 5},
         geometry(5, 1, 0)},
        {"LeNet's second: 20 channels, 5x5", Shape{4, 20, 12, 12}, Shape{50, 20, 5, 5},
         geometry(5, 1, 0)},
        {"VGG-like: 16 channels, 3x3 padded", Shape{2, 16, 10, 10}, Shape{16, 16, 3, 3},
         geometry(3, 1, 1)},
        {"8 channels, 3x3, stride 1, 16-wide rows", Shape{2, 8, 18, 18}, Shape{8, 8, 3, 3},
         geometry(3, 1, 0)},
        {"3 channels, 3x3, stride 2, padded", Shape{2, 3, 11, 11}, Shape{6, 3, 3, 3},
         geometry(3, 2, 1)},
        {"12 channels, 1x1", Shape{2, 12, 7, 7}, Shape{10, 12, 1, 1}, geometry(1, 1, 0)},
    };
    DeviceContext ctx;
    Backend& ops = ctx.backend();
    for (const Case& c : cases) {
      CAPTURE(c.what);
      const Tensor x = values(c.x, 1), w = values(c.w, 2), b = values(Shape{c.w[0]}, 3);
      const Shape yShape{c.x[0], c.w[0], c.g.outH(c.x[2]), c.g.outW(c.x[3])};
      Tensor reference(yShape);
      {
        ForcedAlgorithm force("onednn");
        ops.convolutionForward(x, w, b, reference, c.g);
      }
      const std::vector<double> s = magnitudes(x, w, b, yShape, c.g);
      const double terms = static_cast<double>(c.w[1] * c.w[2] * c.w[3]);
      int ran = 0;
      for (const cpu::ConvolutionForwardAlgorithm& a : cpu::kConvolutionForwardAlgorithms) {
        CAPTURE(std::string(a.name));
        const bool runs = a.minIsa <= cpuIsa() && a.fits(c.w, c.g, yShape[2], yShape[3]);
        ForcedAlgorithm force(std::string(a.name));
        Tensor y(yShape);
        if (!runs) {
          CHECK_THROWS_AS(ops.convolutionForward(x, w, b, y, c.g), cpu::CpuAlgorithmError);
          continue;
        }
        ops.convolutionForward(x, w, b, y, c.g);
        ++ran;
        const double factor = a.kernel == cpu::ForwardKernel::WINOGRAD ? 64.0 : 2.0;
        int64_t outside = 0;
        for (int64_t i = 0; i < y.numel(); ++i) {
          const double bound = factor * terms * std::ldexp(1.0, -24) * s[static_cast<size_t>(i)];
          outside += std::fabs(double(y.data()[i]) - double(reference.data()[i])) > bound;
        }
        CHECK(outside == 0);
      }
      CHECK(ran >= 1);
      // Unforced, the first algorithm that runs is chosen.
      for (const cpu::ConvolutionForwardAlgorithm& a : cpu::kConvolutionForwardAlgorithms)
        if (a.minIsa <= cpuIsa() && a.fits(c.w, c.g, yShape[2], yShape[3])) {
          CHECK(cpu::selectConvolutionForward(c.w, c.g, yShape[2], yShape[3]).name == a.name);
          break;
        }
    }
  }

  TEST_CASE("the setting's spelling is checked") {
    CHECK(cpu::parseCpuAlgorithmSetting("").empty());
    CHECK(cpu::parseCpuAlgorithmSetting(" conv_forward = im2col ").at("conv_forward") == "im2col");
    CHECK_THROWS_AS(cpu::parseCpuAlgorithmSetting("conv_forward"), ConfigError);
    CHECK_THROWS_AS(cpu::parseCpuAlgorithmSetting("pool=onednn"), ConfigError);
    DeviceContext ctx;
    const Tensor x = values(Shape{1, 1, 6, 6}, 1), w = values(Shape{2, 1, 3, 3}, 2);
    Tensor y(Shape{1, 2, 4, 4});
    ForcedAlgorithm force("no_such_algorithm");
    CHECK_THROWS_AS(ctx.backend().convolutionForward(x, w, Tensor(), y, geometry(3, 1, 0)),
                    ConfigError);
  }
}
