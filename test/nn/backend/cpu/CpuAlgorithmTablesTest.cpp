// The CPU backend's algorithm tables (nn/backend/cpu/ConvolutionChoice.h, PoolingChoice.h): every
// algorithm that the process's ISA level and a shape allow, forced through DL4CPP_CPU_ALGORITHM's
// setting, against oneDNN's answer on the same call; forcing one a shape or the level rules out is
// a CpuAlgorithmError. Batch normalisation's two orders (CpuBatchNorm.h), against each other. The
// suite runs at every ISA level (scripts/test.sh), so each level's algorithms are checked there.
//
// Tolerances. Every algorithm but Winograd sums the same K products (K = C·kH·kW forward, O·kH·kW
// backward data, N·outH·outW weight gradient, plus the bias) in float in some order, so each result
// is within γ_K S of the exact sum, where S is the sum of the terms' magnitudes and γ_K = K u /
// (1 - K u), u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 3.1); oneDNN's
// answer likewise, hence 2 γ_K S between the two. S is computed here in double.
//
// Winograd F(m, r) computes each output from transformed tiles: y = Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A,
// summed over channels, with n = m + r - 1 points. Evaluated in float, the error is at most γ_k
// times the same expression on the magnitudes (|A|, |G|, |B|, |g|, |d|), k being the longest chain
// of roundings: the input and weight transforms (a 1-D transform sums at most n terms, so 2n
// roundings with its constant products, 4n in 2-D; the two transforms' relative errors add in the
// product: 8n), the product, the sum over the channels, and the output transform (4n), plus the
// bias: k = 12 n + 2 + channels. With |g| <= mw and
// |d| <= mx that expression is at most κ_i κ_j · channels · mw · mx for output (i, j) of its tile,
// κ_i = Σ_p |Aᵀ|_ip (Σ_q |G|_pq) (Σ_q |Bᵀ|_pq), which winogradGain computes from the kernels'
// points (WinogradConvolution.cpp, WinogradImageLanes.cpp) by the Toom-Cook construction (a
// diagonal rescaling of G against B, which the kernels may use, leaves κ unchanged). The backward
// passes have the same form with the roles of the matrices exchanged: data gradient at 3x3 is the
// forward pass over dy (O channels), at 5x5 its adjoint (each dx pixel in up to 4 tiles), the
// weight gradient a sum over every image's tiles. The bound is a worst case, far above the errors
// seen: it rejects a transform coefficient wrong by a few percent, not one wrong in its last
// digits.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nn/backend/DeviceContext.h"
#include "nn/backend/cpu/ConvolutionChoice.h"
#include "nn/backend/cpu/CpuAlgorithm.h"
#include "nn/backend/cpu/CpuBatchNorm.h"
#include "nn/backend/cpu/PoolingChoice.h"

using namespace dl4cpp;

namespace {

constexpr double kUnitRoundoff = 0x1p-24;

double summationGamma(double k) { return k * kUnitRoundoff / (1.0 - k * kUnitRoundoff); }

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

// Values in [-1, 1], a different sequence for each seed.
Tensor values(Shape shape, uint32_t seed) {
  Tensor t(shape);
  uint32_t s = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data()[i] = static_cast<float>(static_cast<int32_t>(s >> 8) % 2001 - 1000) / 1000.0f;
  }
  return t;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"LeNet's first: 1 channel, 5x5", Shape{4, 1, 28, 28}, Shape{20, 1, 5, 5}, geometry(5, 1, 0)},
      {"LeNet's second: 20 channels, 5x5", Shape{4, 20, 12, 12}, Shape{50, 20, 5, 5},
       geometry(5, 1, 0)},
      {"VGG-like: 16 channels, 3x3 padded", Shape{2, 16, 10, 10}, Shape{16, 16, 3, 3},
       geometry(3, 1, 1)},
      {"8 channels, 3x3, stride 1, 16-wide rows", Shape{2, 8, 18, 18}, Shape{8, 8, 3, 3},
       geometry(3, 1, 0)},
      {"3 channels, 3x3, stride 2, padded", Shape{2, 3, 11, 11}, Shape{6, 3, 3, 3},
       geometry(3, 2, 1)},
      {"12 channels, 1x1", Shape{2, 12, 7, 7}, Shape{10, 12, 1, 1}, geometry(1, 1, 0)},
      {"32 channels, 3x3 padded, 8x8 (blocked channels)", Shape{2, 32, 8, 8}, Shape{32, 32, 3, 3},
       geometry(3, 1, 1)},
      {"2 channels, 5x5 padded 2", Shape{3, 2, 9, 9}, Shape{4, 2, 5, 5}, geometry(5, 1, 2)},
  };
  return all;
}

// The exact results of the three passes in double, with S (the sum of each result's terms'
// magnitudes) and K (its number of terms).
struct Exact {
  std::vector<double> value, magnitude;
  double terms = 0;
  explicit Exact(int64_t n) : value(static_cast<size_t>(n)), magnitude(static_cast<size_t>(n)) {}
  void add(int64_t i, double term) {
    value[static_cast<size_t>(i)] += term;
    magnitude[static_cast<size_t>(i)] += std::fabs(term);
  }
};

struct Passes {
  Exact y, dx, dw, db;
};

Passes exactPasses(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& dy,
                   const WindowGeometry& g) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  const int64_t o = w.dim(0), oh = dy.dim(2), ow = dy.dim(3);
  Passes p{Exact(dy.numel()), Exact(x.numel()), Exact(w.numel()), Exact(o)};
  p.y.terms = double(c * g.kernelH * g.kernelW + 1);
  p.dx.terms = double(o * g.kernelH * g.kernelW);
  p.dw.terms = p.db.terms = double(n * oh * ow);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t f = 0; f < o; ++f)
      for (int64_t r = 0; r < oh; ++r)
        for (int64_t q = 0; q < ow; ++q) {
          const int64_t yi = ((i * o + f) * oh + r) * ow + q;
          p.y.add(yi, b.data()[f]);
          p.db.add(f, dy.data()[yi]);
          for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t u = 0; u < g.kernelH; ++u)
              for (int64_t v = 0; v < g.kernelW; ++v) {
                const int64_t row = r * g.strideH - g.padTop + u * g.dilationH,
                              col = q * g.strideW - g.padLeft + v * g.dilationW;
                if (row < 0 || row >= h || col < 0 || col >= wd) continue;
                const int64_t xi = ((i * c + ch) * h + row) * wd + col;
                const int64_t wi = ((f * c + ch) * g.kernelH + u) * g.kernelW + v;
                p.y.add(yi, double(x.data()[xi]) * w.data()[wi]);
                p.dx.add(xi, double(dy.data()[yi]) * w.data()[wi]);
                p.dw.add(wi, double(dy.data()[yi]) * x.data()[xi]);
              }
        }
  return p;
}

double maxMagnitude(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(double(t.data()[i])));
  return m;
}

// κ of the header comment for F(4, r) on the kernels' points, for each pass: forward (Aᵀ, G, Bᵀ),
// the 5x5 data gradient (the adjoint: Bᵀ's columns, G, Aᵀ) and the weight gradient (G's columns,
// Bᵀ, Aᵀ).
struct WinogradGain {
  double forward, adjoint, weights;
  int64_t points;  // n
};
WinogradGain winogradGain(int64_t r) {
  constexpr int64_t m = 4;
  const std::vector<double> finite = r == 3 ? std::vector<double>{0, 1, -1, 2, -2}
                                            : std::vector<double>{0, 1, -1, 2, -2, 0.5, -0.5};
  const int64_t n = m + r - 1;
  REQUIRE(static_cast<int64_t>(finite.size()) == n - 1);
  // at[i][p] = Aᵀ, g[p][k] = G, bt[p][q] = Bᵀ; the last point is ∞.
  std::vector<std::vector<double>> at(m, std::vector<double>(n)), g(n, std::vector<double>(r)),
      bt(n, std::vector<double>(n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p + 1 < n; ++p) at[i][p] = std::pow(finite[p], double(i));
    at[i][n - 1] = i == m - 1 ? 1 : 0;
  }
  // Coefficients of the product of (t - root) over `roots`, lowest power first.
  const auto polynomial = [](const std::vector<double>& roots) {
    std::vector<double> coef{1};
    for (double root : roots) {
      coef.insert(coef.begin(), 0.0);
      for (size_t k = 0; k + 1 < coef.size(); ++k) coef[k] -= root * coef[k + 1];
    }
    return coef;
  };
  for (int64_t p = 0; p + 1 < n; ++p) {
    double norm = 1;
    std::vector<double> others;
    for (int64_t l = 0; l + 1 < n; ++l)
      if (l != p) {
        norm *= finite[p] - finite[l];
        others.push_back(finite[l]);
      }
    for (int64_t k = 0; k < r; ++k) g[p][k] = std::pow(finite[p], double(k)) / norm;
    const std::vector<double> coef = polynomial(others);
    for (size_t q = 0; q < coef.size(); ++q) bt[p][q] = coef[q];
  }
  g[n - 1][r - 1] = 1;
  const std::vector<double> all = polynomial(finite);
  for (size_t q = 0; q < all.size(); ++q) bt[n - 1][q] = all[q];

  std::vector<double> gRow(n), bRow(n), aCol(n);
  for (int64_t p = 0; p < n; ++p) {
    for (int64_t k = 0; k < r; ++k) gRow[p] += std::fabs(g[p][k]);
    for (int64_t q = 0; q < n; ++q) bRow[p] += std::fabs(bt[p][q]);
    for (int64_t i = 0; i < m; ++i) aCol[p] += std::fabs(at[i][p]);
  }
  WinogradGain gain{0, 0, 0, n};
  for (int64_t i = 0; i < m; ++i) {
    double s = 0;
    for (int64_t p = 0; p < n; ++p) s += std::fabs(at[i][p]) * gRow[p] * bRow[p];
    gain.forward = std::max(gain.forward, s);
  }
  for (int64_t q = 0; q < n; ++q) {
    double s = 0;
    for (int64_t p = 0; p < n; ++p) s += std::fabs(bt[p][q]) * gRow[p] * aCol[p];
    gain.adjoint = std::max(gain.adjoint, s);
  }
  for (int64_t k = 0; k < r; ++k) {
    double s = 0;
    for (int64_t p = 0; p < n; ++p) s += std::fabs(g[p][k]) * bRow[p] * aCol[p];
    gain.weights = std::max(gain.weights, s);
  }
  return gain;
}

// Checks that `actual` is within `bound(i)` of oneDNN's `reference`, element by element.
template <typename Bound>
void checkWithin(const Tensor& actual, const Tensor& reference, Bound&& bound) {
  REQUIRE(actual.numel() == reference.numel());
  int64_t outside = 0;
  double worst = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double error = std::fabs(double(actual.data()[i]) - double(reference.data()[i]));
    const double ratio = error / bound(i);
    worst = std::isfinite(ratio) ? std::max(worst, ratio) : HUGE_VAL;  // NaN fails too
    outside += !(error <= bound(i));
  }
  INFO("worst error / bound: " << worst);
  CHECK(outside == 0);
}

// The bound 2 γ_K S of the header comment, for element i of `e`.
auto summationBound(const Exact& e) {
  return [&e](int64_t i) {
    return 2.0 * summationGamma(e.terms) * e.magnitude[static_cast<size_t>(i)];
  };
}

// Sets the process's setting for one op, restoring none when the test ends.
struct ForcedAlgorithm {
  ForcedAlgorithm(const std::string& op, std::string_view name) {
    cpu::setCpuAlgorithmSetting(op + "=" + std::string(name));
  }
  ~ForcedAlgorithm() { cpu::setCpuAlgorithmSetting(""); }
};

bool isAllowed(CpuIsa minIsa) { return minIsa <= cpuIsa(); }

}  // namespace

TEST_SUITE("CpuAlgorithmTables") {
  TEST_CASE("every convolution algorithm matches oneDNN on the shapes it takes, at this level") {
    DeviceContext ctx;
    Backend& ops = ctx.backend();
    const WinogradGain gain3 = winogradGain(3), gain5 = winogradGain(5);
    for (const Case& c : cases()) {
      CAPTURE(std::string(c.what));
      const Tensor x = values(c.x, 1), w = values(c.w, 2), b = values(Shape{c.w[0]}, 3);
      const Shape yShape{c.x[0], c.w[0], c.g.outH(c.x[2]), c.g.outW(c.x[3])};
      const Tensor dy = values(yShape, 4);
      const int64_t n = c.x[0], channels = c.x[1], outChannels = c.w[0];
      const int64_t outH = yShape[2], outW = yShape[3];
      const Passes exact = exactPasses(x, w, b, dy, c.g);
      const double mx = maxMagnitude(x), mw = maxMagnitude(w), mdy = maxMagnitude(dy);

      Tensor yRef(yShape), dxRef(c.x), dwRef(c.w), dbRef(b.shape());
      {
        ForcedAlgorithm forward("conv_forward", "onednn");
        ops.convolutionForward(x, w, b, yRef, c.g);
      }
      {
        ForcedAlgorithm data("conv_backward_data", "onednn");
        ops.convolutionBackwardData(dy, w, dxRef, c.g);
      }
      {
        ForcedAlgorithm weights("conv_backward_weights", "onednn");
        ops.convolutionBackwardWeights(x, dy, dwRef, dbRef, c.g);
      }
      // oneDNN against the exact sums, so that a wrong reference cannot hide a wrong algorithm.
      const auto exactWithin = [](const Tensor& t, const Exact& e) {
        int64_t outside = 0;
        for (int64_t i = 0; i < t.numel(); ++i)
          outside += !(std::fabs(t.data()[i] - e.value[static_cast<size_t>(i)]) <=
                       summationGamma(e.terms) * e.magnitude[static_cast<size_t>(i)]);
        return outside;
      };
      CHECK(exactWithin(yRef, exact.y) == 0);
      CHECK(exactWithin(dxRef, exact.dx) == 0);
      CHECK(exactWithin(dwRef, exact.dw) == 0);
      CHECK(exactWithin(dbRef, exact.db) == 0);

      const auto winograd = [&](int64_t k) { return k == 3 ? gain3 : gain5; };
      int ran = 0;
      for (const cpu::ConvolutionForwardAlgorithm& a : cpu::kConvolutionForwardAlgorithms) {
        CAPTURE(std::string("conv_forward=") + std::string(a.name));
        ForcedAlgorithm force("conv_forward", a.name);
        Tensor y(yShape);
        if (!isAllowed(a.minIsa) || !a.fits(c.w, c.g, outH, outW)) {
          CHECK_THROWS_AS(ops.convolutionForward(x, w, b, y, c.g), cpu::CpuAlgorithmError);
          continue;
        }
        ops.convolutionForward(x, w, b, y, c.g);
        ++ran;
        if (a.kernel != cpu::ForwardKernel::WINOGRAD) {
          checkWithin(y, yRef, summationBound(exact.y));
          continue;
        }
        const WinogradGain wg = winograd(c.g.kernelH);
        const double bound = summationGamma(double(12 * wg.points + 2 + channels)) * wg.forward *
                             wg.forward * double(channels) * mx * mw;
        checkWithin(y, yRef, [&](int64_t i) {
          return bound + summationGamma(exact.y.terms) * exact.y.magnitude[static_cast<size_t>(i)];
        });
      }
      for (const cpu::ConvolutionBackwardDataAlgorithm& a :
           cpu::kConvolutionBackwardDataAlgorithms) {
        CAPTURE(std::string("conv_backward_data=") + std::string(a.name));
        ForcedAlgorithm force("conv_backward_data", a.name);
        Tensor dx(c.x);
        dx.fill(123.0f);  // stale values must be overwritten
        if (!isAllowed(a.minIsa) || !a.fits(c.x, c.w, c.g)) {
          CHECK_THROWS_AS(ops.convolutionBackwardData(dy, w, dx, c.g), cpu::CpuAlgorithmError);
          continue;
        }
        ops.convolutionBackwardData(dy, w, dx, c.g);
        ++ran;
        if (a.kernel != cpu::BackwardDataKernel::WINOGRAD) {
          checkWithin(dx, dxRef, summationBound(exact.dx));
          continue;
        }
        const WinogradGain wg = winograd(c.g.kernelH);
        // 3x3: the forward pass over dy; 5x5: the adjoint, each pixel in up to 4 tiles.
        const double gains =
            c.g.kernelH == 3 ? wg.forward * wg.forward : 4 * wg.adjoint * wg.adjoint;
        const double bound = summationGamma(double(12 * wg.points + 4 + outChannels)) * gains *
                             double(outChannels) * mdy * mw;
        checkWithin(dx, dxRef, [&](int64_t i) {
          return bound +
                 summationGamma(exact.dx.terms) * exact.dx.magnitude[static_cast<size_t>(i)];
        });
      }
      for (const cpu::ConvolutionWeightGradientAlgorithm& a :
           cpu::kConvolutionWeightGradientAlgorithms) {
        CAPTURE(std::string("conv_backward_weights=") + std::string(a.name));
        ForcedAlgorithm force("conv_backward_weights", a.name);
        Tensor dw(c.w), db(b.shape());
        dw.fill(123.0f);
        db.fill(123.0f);
        if (!isAllowed(a.minIsa) || !a.fits(c.w, c.g, outH, outW)) {
          CHECK_THROWS_AS(ops.convolutionBackwardWeights(x, dy, dw, db, c.g),
                          cpu::CpuAlgorithmError);
          continue;
        }
        ops.convolutionBackwardWeights(x, dy, dw, db, c.g);
        ++ran;
        checkWithin(db, dbRef, summationBound(exact.db));
        if (a.kernel != cpu::WeightGradientKernel::WINOGRAD) {
          checkWithin(dw, dwRef, summationBound(exact.dw));
          continue;
        }
        const WinogradGain wg = winograd(c.g.kernelH);
        const int64_t tiles = n * ((outH + 3) / 4) * ((outW + 3) / 4);
        const double bound = summationGamma(double(12 * wg.points + 2 + tiles)) * wg.weights *
                             wg.weights * double(tiles) * mx * mdy;
        checkWithin(dw, dwRef, [&](int64_t i) {
          return bound +
                 summationGamma(exact.dw.terms) * exact.dw.magnitude[static_cast<size_t>(i)];
        });
      }
      CHECK(ran >= 3);
      // Unforced, the first entry that runs and does not yield is chosen.
      const auto chosen = [](const auto& table, auto... args) {
        for (const auto& a : table) {
          if (!isAllowed(a.minIsa) || !a.fits(args...)) continue;
          if (a.yield.from && cpuIsa() >= *a.yield.from &&
              (a.yield.on == nullptr || a.yield.on(args...)))
            continue;
          return a.name;
        }
        return std::string_view();
      };
      CHECK(cpu::selectConvolutionForward(c.w, c.g, outH, outW).name ==
            chosen(cpu::kConvolutionForwardAlgorithms, c.w, c.g, outH, outW));
      CHECK(cpu::selectConvolutionBackwardData(c.x, c.w, c.g).name ==
            chosen(cpu::kConvolutionBackwardDataAlgorithms, c.x, c.w, c.g));
      CHECK(cpu::selectConvolutionWeightGradient(c.w, c.g, outH, outW).name ==
            chosen(cpu::kConvolutionWeightGradientAlgorithms, c.w, c.g, outH, outW));
    }
  }

  TEST_CASE("every pooling algorithm matches oneDNN on the shapes it takes, at this level") {
    struct PoolCase {
      const char* what;
      PoolingKind kind;
      Shape x;
      WindowGeometry g;
    };
    const std::vector<PoolCase> poolCases = {
        {"MAX 2x2/2 (LeNet)", PoolingKind::MAX, Shape{3, 5, 24, 24}, geometry(2, 2, 0)},
        {"MAX 3x3/2", PoolingKind::MAX, Shape{2, 4, 11, 11}, geometry(3, 2, 0)},
        {"MAX 3x3/1 padded", PoolingKind::MAX, Shape{2, 4, 9, 9}, geometry(3, 1, 1)},
        {"AVG 2x2/2", PoolingKind::AVG, Shape{2, 4, 8, 8}, geometry(2, 2, 0)},
    };
    DeviceContext ctx;
    Backend& ops = ctx.backend();
    for (const PoolCase& c : poolCases) {
      CAPTURE(std::string(c.what));
      const Tensor x = values(c.x, 5);
      const Shape yShape{c.x[0], c.x[1], c.g.outH(c.x[2]), c.g.outW(c.x[3])};
      const Tensor dy = values(yShape, 6);
      Tensor yRef(yShape), dxRef(c.x), workspaceRef;
      {
        ForcedAlgorithm force("pooling", "onednn");
        ops.poolingForward(c.kind, x, yRef, c.g, true, workspaceRef);
        ops.poolingBackward(c.kind, dy, dxRef, c.g, workspaceRef);
      }
      int ran = 0;
      for (const cpu::PoolingAlgorithm& a : cpu::kPoolingAlgorithms) {
        CAPTURE(std::string(a.name));
        ForcedAlgorithm force("pooling", a.name);
        Tensor y(yShape), dx(c.x), workspace;
        dx.fill(123.0f);
        if (!isAllowed(a.minIsa) || !a.fits(c.kind, c.g)) {
          CHECK_THROWS_AS(ops.poolingForward(c.kind, x, y, c.g, true, workspace),
                          cpu::CpuAlgorithmError);
          continue;
        }
        ops.poolingForward(c.kind, x, y, c.g, true, workspace);
        ops.poolingBackward(c.kind, dy, dx, c.g, workspace);
        ++ran;
        // MAX picks an input and adds dy at its arg-max: the same bits as oneDNN (the first
        // maximum in window order wins ties) where windows do not overlap. AVG is oneDNN's alone.
        CHECK(y.toVector() == yRef.toVector());
        if (c.g.strideH >= c.g.kernelH && c.g.strideW >= c.g.kernelW) {
          CHECK(dx.toVector() == dxRef.toVector());
          continue;
        }
        // Overlapping windows: a pixel is the arg-max of up to K windows, whose gradients each
        // algorithm adds in its own order: within 2 γ_K K max|dy| of each other.
        const double k = double(((c.g.kernelH + c.g.strideH - 1) / c.g.strideH) *
                                ((c.g.kernelW + c.g.strideW - 1) / c.g.strideW));
        const double bound = 2 * summationGamma(k) * k * maxMagnitude(dy);
        checkWithin(dx, dxRef, [&](int64_t) { return bound; });
      }
      CHECK(ran >= 1);
    }
  }

  TEST_CASE("both batch normalisation orders give the same bits, at this level") {
    // Each reduces every channel's row results in the same sequence: any difference is a bug.
    struct Outputs {
      std::vector<float> y, mean, variance, inference, dx, dgamma, dbeta, dgammaAlone;
    };
    const auto run = [](std::string_view order, const Shape& shape, ActivationKind activation) {
      ForcedAlgorithm force("batch_norm", order);
      DeviceContext ctx;
      Backend& ops = ctx.backend();
      const int64_t channels = shape[1];
      const Tensor x = values(shape, 7), dy = values(shape, 8);
      const Tensor gamma = values(Shape{channels}, 9), beta = values(Shape{channels}, 10);
      Tensor y(shape), mean(Shape{channels}), variance(Shape{channels}), inference(shape);
      Tensor dx(shape), dgamma(Shape{channels}), dbeta(Shape{channels});
      ops.batchNormForwardTraining(x, gamma, beta, 1e-5f, activation, y, mean, variance);
      ops.batchNormForwardInference(x, gamma, beta, mean, variance, 1e-5f, activation, inference);
      const Tensor yIfRelu = activation == ActivationKind::RELU ? y : Tensor();
      ops.batchNormBackward(x, yIfRelu, dy, gamma, beta, mean, variance, 1e-5f, activation, dx,
                            dgamma, dbeta);
      Tensor noDx, dgammaAlone(Shape{channels}), dbetaAlone(Shape{channels});
      ops.batchNormBackward(x, yIfRelu, dy, gamma, beta, mean, variance, 1e-5f, activation, noDx,
                            dgammaAlone, dbetaAlone);
      return Outputs{y.toVector(),  mean.toVector(),   variance.toVector(), inference.toVector(),
                     dx.toVector(), dgamma.toVector(), dbeta.toVector(),    dgammaAlone.toVector()};
    };
    CHECK(cpu::selectBatchNormOrder(7 * 7) == cpu::BatchNormOrder::EXAMPLE_ROWS);
    CHECK(cpu::selectBatchNormOrder(16 * 16) == cpu::BatchNormOrder::CHANNEL_ROWS);
    // Rows of 49 values (a 7x7 map, chosen in example order), of 289 (17x17, channel order) and
    // of 1 (feature rows).
    for (const Shape& shape : {Shape{6, 5, 7, 7}, Shape{3, 4, 17, 17}, Shape{9, 6}}) {
      for (ActivationKind activation : {ActivationKind::IDENTITY, ActivationKind::RELU}) {
        CAPTURE(shape.toString());
        CAPTURE(activation == ActivationKind::RELU);
        const Outputs a = run("example_rows", shape, activation);
        const Outputs b = run("channel_rows", shape, activation);
        CHECK(a.y == b.y);
        CHECK(a.mean == b.mean);
        CHECK(a.variance == b.variance);
        CHECK(a.inference == b.inference);
        CHECK(a.dx == b.dx);
        CHECK(a.dgamma == b.dgamma);
        CHECK(a.dbeta == b.dbeta);
        CHECK(a.dgammaAlone == b.dgamma);
      }
    }
  }

  TEST_CASE("F(4x4, 3x3) leaves outputs of fewer than 8 tiles to oneDNN, in every pass") {
    const Shape w{64, 64, 3, 3};
    const WindowGeometry g = geometry(3, 1, 1);
    // 7x7: 2x2 tiles of 4x4; 14x14: 4x4 tiles.
    CHECK(cpu::selectConvolutionForward(w, g, 7, 7).name == "onednn");
    CHECK(cpu::selectConvolutionBackwardData(Shape{2, 64, 7, 7}, w, g).name == "onednn");
    CHECK(cpu::selectConvolutionWeightGradient(w, g, 7, 7).name == "onednn");
    if (cpuIsa() >= CpuIsa::Avx2) {
      CHECK(cpu::selectConvolutionForward(w, g, 14, 14).name == "winograd_3x3");
      CHECK(cpu::selectConvolutionBackwardData(Shape{2, 64, 14, 14}, w, g).name == "winograd_3x3");
    }
    DeviceContext ctx;
    const Tensor x = values(Shape{2, 64, 7, 7}, 1), weights = values(w, 2);
    Tensor y(Shape{2, 64, 7, 7});
    ForcedAlgorithm force("conv_forward", "winograd_3x3");
    CHECK_THROWS_AS(ctx.backend().convolutionForward(x, weights, Tensor(), y, g),
                    cpu::CpuAlgorithmError);
  }

  TEST_CASE("F(4x4, 3x3) leaves one block of 16 channels in and out to oneDNN at avx512") {
    const WindowGeometry g = geometry(3, 1, 1);
    const Shape sixteen{16, 16, 3, 3}, wider{32, 16, 3, 3};
    const std::string_view expected = cpuIsa() >= CpuIsa::Avx512 ? "onednn"
                                      : cpuIsa() >= CpuIsa::Avx2 ? "winograd_3x3"
                                                                 : "onednn";
    CHECK(cpu::selectConvolutionForward(sixteen, g, 28, 28).name == expected);
    CHECK(cpu::selectConvolutionBackwardData(Shape{2, 16, 28, 28}, sixteen, g).name == expected);
    if (cpuIsa() >= CpuIsa::Avx2) {
      CHECK(cpu::selectConvolutionForward(wider, g, 28, 28).name == "winograd_3x3");
      CHECK(cpu::selectConvolutionBackwardData(Shape{2, 16, 28, 28}, wider, g).name ==
            "winograd_3x3");
    }
  }

  TEST_CASE("a data gradient never reads a reorder of dy that an earlier call left behind") {
    // A weight gradient on oneDNN alone (no data gradient after it) reorders dy into the scratch
    // arena. The same tensor then holds another dy, and both gradients run through
    // convolutionBackward with the weight gradient on dl4cpp's Winograd kernel (from avx2), which
    // leaves no reorder and uses the arena: the data gradient, on oneDNN with dy in the same
    // layout, must reorder the new dy itself.
    if (cpuIsa() < CpuIsa::Avx2) return;
    const WindowGeometry g = geometry(3, 1, 1);
    const Tensor x = values(Shape{2, 16, 12, 12}, 11), w = values(Shape{16, 16, 3, 3}, 12);
    Tensor dy = values(Shape{2, 16, 12, 12}, 13);
    DeviceContext ctx;
    Backend& ops = ctx.backend();
    Tensor dw(w.shape()), db, dx(x.shape()), dxApart(x.shape());
    {
      ForcedAlgorithm weightsOnOneDnn("conv_backward_weights", "onednn");
      ops.convolutionBackwardWeights(x, dy, dw, db, g);
    }
    dy.copyFrom(values(dy.shape(), 14));
    cpu::setCpuAlgorithmSetting("conv_backward_weights=winograd_3x3,conv_backward_data=onednn");
    ops.convolutionBackward(x, dy, w, dx, dw, db, g);
    ops.convolutionBackwardData(dy, w, dxApart, g);
    cpu::setCpuAlgorithmSetting("");
    CHECK(dx.toVector() == dxApart.toVector());
  }

  TEST_CASE("the setting's spelling is checked") {
    CHECK(cpu::parseCpuAlgorithmSetting("").empty());
    const auto both = cpu::parseCpuAlgorithmSetting(" conv_forward = im2col ,pooling=onednn");
    CHECK(both.at("conv_forward") == "im2col");
    CHECK(both.at("pooling") == "onednn");
    CHECK_THROWS_AS(cpu::parseCpuAlgorithmSetting("conv_forward"), ConfigError);
    CHECK_THROWS_AS(cpu::parseCpuAlgorithmSetting("pool=onednn"), ConfigError);
    DeviceContext ctx;
    const Tensor x = values(Shape{1, 1, 6, 6}, 1), w = values(Shape{2, 1, 3, 3}, 2);
    Tensor y(Shape{1, 2, 4, 4});
    ForcedAlgorithm force("conv_forward", "no_such_algorithm");
    CHECK_THROWS_AS(ctx.backend().convolutionForward(x, w, Tensor(), y, geometry(3, 1, 0)),
                    ConfigError);
  }
}
