// The CPU backend's convolutions against a plain double-precision reference: the direct forward
// and weight-gradient kernels (avx512 and avx2 levels) for stride-1 convolutions with rows of 8 or
// multiples of 16 outputs (the forward kernel also any multiple of 8), and otherwise both paths it
// picks by input channel count (input and output channels multiples of 16: oneDNN's blocked kernels
// in every pass dl4cpp's Winograd kernels do not run, e.g. the 3x3 weight gradient at avx512; below
// 8 input channels: im2col + sgemm forward, and backward weights by the direct kernel (avx512 and
// avx2) at stride 1 without padding, else by oneDNN's blocked kernels; from 8: oneDNN's
// channels-last kernels), and backward data both as sgemm + col2im (its gather and scatter
// versions, which must agree bit for bit) and, for large column matrices, as oneDNN's kernel:
// forward with bias, backward data, backward weights and bias, with stride, padding and dilation;
// both backward passes in one call give the bits of the two.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "BackendTestUtil.h"
#include "CpuIsaTestUtil.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/direct/DirectConvolution.h"
#include "nn/backend/cpu/direct/DirectWeightGradient.h"
#include "nn/backend/cpu/im2col/Im2colConvolution.h"
#include "nn/backend/cpu/winograd/WinogradConvolution.h"

using namespace dl4cpp;
using testutil::filled;
using testutil::runsAt;
using testutil::setOmpThreads;

namespace {

struct Case {
  int64_t batch, channels, height, width, outChannels, kernel, stride, pad, dilation = 1;
  bool bias = true;
};

WindowGeometry geometryOf(const Case& c) {
  WindowGeometry g;
  g.kernelH = g.kernelW = c.kernel;
  g.strideH = g.strideW = c.stride;
  g.padTop = g.padLeft = g.padBottom = g.padRight = c.pad;
  g.dilationH = g.dilationW = c.dilation;
  return g;
}

// Visits every (input element, weight, output element) triple of the convolution.
template <typename Visit>
void forEachTap(const Case& c, const WindowGeometry& g, int64_t outH, int64_t outW, Visit&& visit) {
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t o = 0; o < c.outChannels; ++o)
      for (int64_t oh = 0; oh < outH; ++oh)
        for (int64_t ow = 0; ow < outW; ++ow)
          for (int64_t ch = 0; ch < c.channels; ++ch)
            for (int64_t kh = 0; kh < c.kernel; ++kh)
              for (int64_t kw = 0; kw < c.kernel; ++kw) {
                const int64_t ih = oh * g.strideH - g.padTop + kh * g.dilationH;
                const int64_t iw = ow * g.strideW - g.padLeft + kw * g.dilationW;
                if (ih < 0 || ih >= c.height || iw < 0 || iw >= c.width) continue;
                const int64_t xi = ((n * c.channels + ch) * c.height + ih) * c.width + iw;
                const int64_t wi = ((o * c.channels + ch) * c.kernel + kh) * c.kernel + kw;
                const int64_t yi = ((n * c.outChannels + o) * outH + oh) * outW + ow;
                visit(xi, wi, yi);
              }
}

// A reference value with the sum of the magnitudes of its terms: float sums of many terms that
// cancel are only accurate relative to that sum, not to the value.
struct Reference {
  std::vector<double> value, magnitude;
  explicit Reference(int64_t n)
      : value(static_cast<size_t>(n)), magnitude(static_cast<size_t>(n)) {}
  void add(int64_t i, double term) {
    value[static_cast<size_t>(i)] += term;
    magnitude[static_cast<size_t>(i)] += std::abs(term);
  }
};

void checkClose(const Tensor& actual, const Reference& expected, const char* what) {
  REQUIRE(actual.numel() == static_cast<int64_t>(expected.value.size()));
  double worst = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const auto at = static_cast<size_t>(i);
    const double error =
        std::abs(actual.data()[i] - expected.value[at]) / (1.0 + expected.magnitude[at]);
    worst = std::isfinite(error) ? std::max(worst, error) : HUGE_VAL;  // NaN fails too
  }
  INFO(std::string(what) << ": worst error relative to the terms' magnitude " << worst);
  CHECK(worst < 1e-5);
}

void checkAgainstReference(const Case& c) {
  INFO("C=" << c.channels << " O=" << c.outChannels << " k=" << c.kernel << " stride=" << c.stride
            << " pad=" << c.pad << " dilation=" << c.dilation << " bias=" << c.bias);
  const WindowGeometry g = geometryOf(c);
  const int64_t outH = g.outH(c.height), outW = g.outW(c.width);
  const Shape xShape{c.batch, c.channels, c.height, c.width};
  const Shape yShape{c.batch, c.outChannels, outH, outW};
  const Shape wShape{c.outChannels, c.channels, c.kernel, c.kernel};
  const Tensor x = filled(xShape, 1), w = filled(wShape, 2), dy = filled(yShape, 4);
  const Tensor b = c.bias ? filled(Shape{c.outChannels}, 3) : Tensor();

  Reference y(yShape.numel()), dx(xShape.numel()), dw(w.numel()), db(c.outChannels);
  for (int64_t i = 0; i < yShape.numel(); ++i) {
    const int64_t o = (i / (outH * outW)) % c.outChannels;
    if (c.bias) y.add(i, b.data()[o]);
    db.add(o, dy.data()[i]);
  }
  forEachTap(c, g, outH, outW, [&](int64_t xi, int64_t wi, int64_t yi) {
    y.add(yi, double{x.data()[xi]} * w.data()[wi]);
    dx.add(xi, double{dy.data()[yi]} * w.data()[wi]);
    dw.add(wi, double{dy.data()[yi]} * x.data()[xi]);
  });

  cpu::CpuBackend backend;
  backend.bindToCurrentThread(2);
  Tensor yOut(yShape), dxOut(xShape), dwOut(w.shape());
  Tensor dbOut = c.bias ? Tensor(b.shape()) : Tensor();
  dxOut.fill(123.0f);  // stale values must be overwritten
  dwOut.fill(123.0f);
  for (int pass = 0; pass < 2; ++pass) {  // the second pass runs the cached primitives
    backend.convolutionForward(x, w, b, yOut, g);
    backend.convolutionBackwardData(dy, w, dxOut, g);
    backend.convolutionBackwardWeights(x, dy, dwOut, dbOut, g);
    checkClose(yOut, y, "forward");
    checkClose(dxOut, dx, "backward data");
    checkClose(dwOut, dw, "backward weights");
    if (c.bias) checkClose(dbOut, db, "backward bias");
  }

  // Both backward passes in one call (ConvolutionOps::convolutionBackward), where the data
  // gradient may read dy as the weight gradient's oneDNN kernel reordered it: the bits of the two
  // calls, for this dy and then for another one of the same shape (nothing of the first is kept).
  const Tensor otherDy = filled(yShape, 5);
  for (const Tensor* gradient : {&dy, &otherDy}) {
    Tensor dxApart(xShape), dwApart(w.shape()), dbApart = c.bias ? Tensor(b.shape()) : Tensor();
    backend.convolutionBackwardWeights(x, *gradient, dwApart, dbApart, g);
    backend.convolutionBackwardData(*gradient, w, dxApart, g);
    Tensor dxBoth(xShape), dwBoth(w.shape()), dbBoth = c.bias ? Tensor(b.shape()) : Tensor();
    backend.convolutionBackward(x, *gradient, w, dxBoth, dwBoth, dbBoth, g);
    CHECK(dxBoth.toVector() == dxApart.toVector());
    CHECK(dwBoth.toVector() == dwApart.toVector());
    if (c.bias) CHECK(dbBoth.toVector() == dbApart.toVector());
  }

  // The direct weight gradient, called directly where it applies (avx2 and avx512), on 1 and 2
  // threads: the same bits either way.
  if (cpu::directWeightGradientFits(g) && runsAt(CpuIsa::Avx2)) {
    std::vector<float> sums(
        static_cast<size_t>(cpu::directWeightGradientScratchFloats(xShape, wShape)));
    Tensor dwDirect[2] = {Tensor(w.shape()), Tensor(w.shape())};
    Tensor dbDirect[2] = {c.bias ? Tensor(b.shape()) : Tensor(),
                          c.bias ? Tensor(b.shape()) : Tensor()};
    for (int threads = 1; threads <= 2; ++threads) {
      setOmpThreads(threads);
      Tensor& dwT = dwDirect[threads - 1];
      dwT.fill(123.0f);
      cpu::directWeightGradient(x, dy, dwT, dbDirect[threads - 1], g, sums.data());
      checkClose(dwT, dw, "backward weights, direct kernel");
      if (c.bias) checkClose(dbDirect[threads - 1], db, "backward bias, direct kernel");
    }
    CHECK(dwDirect[0].toVector() == dwDirect[1].toVector());
    if (c.bias) CHECK(dbDirect[0].toVector() == dbDirect[1].toVector());
  }

  // The direct forward pass and weight gradient for rows of 8 or multiples of 16, called directly
  // where they apply, on 1 and 2 threads: the same bits either way.
  if (cpu::directConvolutionFits(g, outH, outW) && runsAt(CpuIsa::Avx2)) {
    std::vector<float> partials(
        static_cast<size_t>(cpu::directConvolutionWeightGradientScratchFloats(xShape, wShape)));
    Tensor yDirect[2] = {Tensor(yShape), Tensor(yShape)};
    Tensor dwDirect[2] = {Tensor(w.shape()), Tensor(w.shape())};
    Tensor dbDirect[2] = {c.bias ? Tensor(b.shape()) : Tensor(),
                          c.bias ? Tensor(b.shape()) : Tensor()};
    for (int threads = 1; threads <= 2; ++threads) {
      setOmpThreads(threads);
      const auto t = static_cast<size_t>(threads - 1);
      yDirect[t].fill(123.0f);
      dwDirect[t].fill(123.0f);
      cpu::directConvolutionForward(x, w, b, yDirect[t], g);
      cpu::directConvolutionWeightGradient(x, dy, dwDirect[t], dbDirect[t], g, partials.data());
      checkClose(yDirect[t], y, "forward, direct kernel");
      checkClose(dwDirect[t], dw, "backward weights, direct convolution kernel");
      if (c.bias) checkClose(dbDirect[t], db, "backward bias, direct convolution kernel");
    }
    CHECK(yDirect[0].toVector() == yDirect[1].toVector());
    CHECK(dwDirect[0].toVector() == dwDirect[1].toVector());
    if (c.bias) CHECK(dbDirect[0].toVector() == dbDirect[1].toVector());
  }

  // The Winograd kernels, called directly where they apply, on 1 and 2 threads: every pass the
  // same bits either way.
  // Their scratch starts as NaN: no lane may depend on what the kernels did not write.
  if (cpu::winogradConvolutionFits(g) && runsAt(CpuIsa::Avx2)) {
    constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> scratch(
        static_cast<size_t>(std::max(cpu::winogradForwardScratchFloats(xShape, wShape, g, 2),
                                     cpu::winogradBackwardDataScratchFloats(xShape, wShape, g, 2))),
        kNaN);
    std::vector<float> gradientScratch(
        static_cast<size_t>(cpu::winogradBackwardWeightsScratchFloats(xShape, wShape, g, 2)), kNaN);
    Tensor yWinograd[2] = {Tensor(yShape), Tensor(yShape)};
    Tensor dxWinograd[2] = {Tensor(xShape), Tensor(xShape)};
    Tensor dwWinograd[2] = {Tensor(wShape), Tensor(wShape)};
    Tensor dbWinograd[2] = {c.bias ? Tensor(b.shape()) : Tensor(),
                            c.bias ? Tensor(b.shape()) : Tensor()};
    for (int threads = 1; threads <= 2; ++threads) {
      setOmpThreads(threads);
      const auto t = static_cast<size_t>(threads - 1);
      yWinograd[t].fill(123.0f);
      dxWinograd[t].fill(123.0f);
      cpu::winogradConvolutionForward(x, w, b, yWinograd[t], g, scratch.data());
      cpu::winogradConvolutionBackwardData(dy, w, dxWinograd[t], g, scratch.data());
      checkClose(yWinograd[t], y, "forward, Winograd");
      checkClose(dxWinograd[t], dx, "backward data, Winograd");
      dwWinograd[t].fill(123.0f);
      cpu::winogradConvolutionBackwardWeights(x, dy, dwWinograd[t], dbWinograd[t], g,
                                              gradientScratch.data());
      checkClose(dwWinograd[t], dw, "backward weights, Winograd");
      if (c.bias) checkClose(dbWinograd[t], db, "backward bias, Winograd");
    }
    CHECK(yWinograd[0].toVector() == yWinograd[1].toVector());
    CHECK(dxWinograd[0].toVector() == dxWinograd[1].toVector());
    CHECK(dwWinograd[0].toVector() == dwWinograd[1].toVector());
    if (c.bias) CHECK(dbWinograd[0].toVector() == dbWinograd[1].toVector());
  }

  // The im2col weight gradient (below the direct kernel's level), called directly for every shape,
  // on 1 and 2 threads: the same bits either way.
  {
    std::vector<float> sums(
        static_cast<size_t>(cpu::im2colWeightGradientScratchFloats(xShape, wShape, g, 2)));
    Tensor dwIm2col[2] = {Tensor(w.shape()), Tensor(w.shape())};
    Tensor dbIm2col[2] = {c.bias ? Tensor(b.shape()) : Tensor(),
                          c.bias ? Tensor(b.shape()) : Tensor()};
    for (int threads = 1; threads <= 2; ++threads) {
      setOmpThreads(threads);
      const auto t = static_cast<size_t>(threads - 1);
      dwIm2col[t].fill(123.0f);
      cpu::im2colConvolutionBackwardWeights(x, dy, dwIm2col[t], dbIm2col[t], g, sums.data());
      checkClose(dwIm2col[t], dw, "backward weights, im2col");
      if (c.bias) checkClose(dbIm2col[t], db, "backward bias, im2col");
    }
    CHECK(dwIm2col[0].toVector() == dwIm2col[1].toVector());
    if (c.bias) CHECK(dbIm2col[0].toVector() == dbIm2col[1].toVector());
  }

  // Both col2im versions, called directly (the backend picks one, or oneDNN for large matrices).
  std::vector<float> scratch(static_cast<size_t>(cpu::col2imScratchFloats(xShape, wShape, g, 2)));
  Tensor scattered(xShape), gathered(xShape);
  scattered.fill(123.0f);
  gathered.fill(123.0f);
  cpu::im2colConvolutionBackwardData(dy, w, scattered, g, scratch.data(), false);
  checkClose(scattered, dx, "backward data, col2im scatter");
  if (cpu::col2imGatherFits(g) && runsAt(CpuIsa::Avx2)) {
    cpu::im2colConvolutionBackwardData(dy, w, gathered, g, scratch.data(), true);
    checkClose(gathered, dx, "backward data, col2im gather");
    CHECK(gathered.toVector() == scattered.toVector());
  }
}

}  // namespace

TEST_SUITE("nn/backend/cpu") {
  TEST_CASE("Convolution: few input channels (im2col forward) match the reference") {
    checkAgainstReference({3, 1, 12, 12, 5, 5, 1, 0});  // LeNet's first convolution, smaller
    checkAgainstReference({2, 3, 9, 7, 4, 3, 2, 1});
    checkAgainstReference({5, 2, 8, 10, 3, 3, 1, 2, 2});
    checkAgainstReference({2, 7, 11, 6, 4, 4, 3, 3});  // padding wider than some windows reach
    checkAgainstReference({2, 3, 8, 8, 5, 3, 1, 1, 1, false});  // without bias
  }

  TEST_CASE("Convolution: the direct weight gradient's channel blocks, tap runs and row tails") {
    checkAgainstReference({4, 1, 28, 28, 20, 5, 1, 0});  // LeNet's first convolution
    checkAgainstReference({2, 3, 20, 37, 7, 5, 1, 0});   // 5 + 2 channels; rows of 16 + 16 + 1
    checkAgainstReference({2, 2, 9, 23, 11, 7, 1, 0});   // 5 + 2 taps per kernel row; rows of 16
    checkAgainstReference({3, 4, 6, 5, 3, 2, 1, 0, 1, false});  // rows of 4, without bias
    checkAgainstReference({1, 1, 1, 1, 6, 1, 1, 0});            // 1x1 kernel on a 1x1 image
  }

  TEST_CASE("Convolution: the direct kernels' row pairs, runs of 16, channel blocks and tap runs") {
    checkAgainstReference({3, 20, 12, 12, 50, 5, 1, 0});  // LeNet's second convolution: 8x8 outputs
    checkAgainstReference({18, 3, 12, 10, 7, 3, 1, 0});   // 10x8: 4 + 1 vectors; 5 + 2 channels;
                                                          // images in chunks of 16 + 2
    checkAgainstReference({2, 2, 18, 18, 6, 3, 1, 0});    // 16x16: four blocks of 4 vectors
    checkAgainstReference({2, 3, 5, 34, 4, 3, 1, 0});     // 3x32: 4 + 2 vectors, 2 runs per row
    checkAgainstReference({2, 2, 14, 14, 3, 7, 1, 0});    // 7x7 kernel: 5 + 2 taps per row
    checkAgainstReference({2, 9, 8, 8, 11, 1, 1, 0});     // 1x1 kernel
    checkAgainstReference({2, 2, 10, 16, 3, 9, 1, 0});    // rows of 8 from 16-wide input rows:
                                                          // whole cache lines, read in place
    checkAgainstReference({2, 4, 10, 10, 5, 3, 1, 0, 1, false});  // without bias
    checkAgainstReference({2, 4, 11, 10, 5, 3, 1, 0});            // 9x8, odd rows: not direct
  }

  TEST_CASE("Convolution: the direct forward kernel's half rows (rows a multiple of 8 wide)") {
    checkAgainstReference({3, 1, 28, 28, 20, 5, 1, 0});  // LeNet's first: 24-wide rows, 16 + 8
    checkAgainstReference({2, 3, 12, 44, 7, 5, 1, 0});   // 8x40: 16 + 16 + 8, halves across rows
    checkAgainstReference({2, 2, 10, 26, 6, 3, 1, 0, 1, false});  // 8x24, without bias
    checkAgainstReference({2, 2, 7, 28, 5, 5, 1, 0});             // 3x24: 72 outputs, not direct
  }

  TEST_CASE("Convolution: channel counts in whole blocks of 16 (oneDNN's blocked kernels)") {
    // VGG-style 3x3 pad 1, 28x28: Winograd from avx2, but the weight gradient at avx512
    checkAgainstReference({3, 32, 28, 28, 32, 3, 1, 1});
    checkAgainstReference({2, 32, 14, 14, 64, 3, 1, 1});          // 14x14, 32 -> 64
    checkAgainstReference({2, 16, 9, 9, 16, 3, 2, 1, 1, false});  // stride 2, without bias
    checkAgainstReference({2, 16, 12, 12, 32, 5, 1, 0});  // 5x5 Winograd from avx2; 8x8 rows: the
                                                          // direct kernels, called directly
  }

  // Every pass runs F(4x4, 3x3): tiles of 4x4 outputs; forward and backward data in items of
  // about 32 tiles, the weight gradient in items of about 96 (several whole images where those are
  // small). Each case names what it exercises.
  TEST_CASE("Convolution: 3x3 at stride 1 (Winograd F(4x4, 3x3)) matches the reference") {
    checkAgainstReference({5, 16, 28, 28, 32, 3, 1, 1});  // items of 4 + 3 tile rows
    checkAgainstReference({7, 16, 14, 14, 16, 3, 1, 1});  // 4 tiles a row, the last 2 outputs
                                                          // wide; gradient items of 6 + 1 images
    checkAgainstReference({3, 20, 24, 24, 20, 3, 1, 1});  // conv-BN-ReLU network: 6 tiles a row;
                                                          // gradient items of 2 + 1 images
    checkAgainstReference({2, 8, 9, 11, 5, 3, 1, 1});     // 9x11 outputs: the last tiles 1 row
                                                          // and 3 columns; 5 outputs
    checkAgainstReference({2, 13, 7, 40, 25, 3, 1, 0});   // unpadded 5x38: 10 tiles a row
    checkAgainstReference({1, 9, 5, 5, 3, 3, 1, 2});      // padding 2: 7x7 outputs
    checkAgainstReference({2, 10, 70, 9, 7, 3, 1, 1, 1, false});  // 3 tiles a row, items of
                                                                  // 10 + 8 tile rows; no bias
    checkAgainstReference({2, 12, 1, 1, 4, 3, 1, 1});             // a 1x1 image
    checkAgainstReference({3, 6, 13, 13, 9, 3, 1, 1});  // 4 tiles a row, the last 1 output wide
    // 11 input channels, 7 outputs: the weight gradient's last blocks (3 x 4 sums at avx2) take
    // 3 inputs and 1 output.
    checkAgainstReference({2, 11, 9, 9, 7, 3, 1, 1});
  }

  // Every 5x5 pass runs F(4x4, 5x5) with images in the lanes: groups of 16 images at avx512, 8 at
  // avx2; chunks of 2 tiles of a tile row.
  TEST_CASE(
      "Convolution: 5x5 at stride 1 (Winograd F(4x4, 5x5), images in the lanes) matches the "
      "reference") {
    checkAgainstReference({3, 20, 12, 12, 50, 5, 1, 0});  // LeNet's second: 2 tiles a row
    checkAgainstReference({2, 9, 13, 11, 6, 5, 1, 0});    // 9x7 outputs: odd rows and columns
    checkAgainstReference({2, 8, 70, 9, 5, 5, 1, 2});     // padding 2: chunks of 2 + 1 tiles
    checkAgainstReference({1, 10, 6, 5, 3, 5, 1, 4});     // padding 4: 10x9 outputs
    checkAgainstReference({19, 8, 6, 6, 17, 5, 1, 0, 1, false});  // 1 tile an image: groups of
                                                                  // 16 + 3 (8 + 8 + 3); no bias
    checkAgainstReference({2, 12, 1, 1, 4, 5, 1, 2});             // a 1x1 image
  }

  TEST_CASE("Convolution: many input channels (channels-last kernels) match the reference") {
    checkAgainstReference({3, 20, 13, 12, 50, 5, 1, 0});  // LeNet's second, one row more: 9x8
    checkAgainstReference({2, 8, 9, 7, 3, 3, 2, 1});
    checkAgainstReference({2, 17, 6, 6, 19, 2, 1, 1});
    checkAgainstReference({2, 9, 10, 10, 4, 3, 1, 1, 2});
    checkAgainstReference({2, 12, 7, 7, 6, 3, 1, 0, 1, false});  // without bias
  }

  TEST_CASE("Convolution: rows wider than one gather (16 pixels) and large column matrices") {
    checkAgainstReference({2, 3, 9, 37, 4, 5, 1, 2});     // three runs of pixels, the last partial
    checkAgainstReference({1, 9, 6, 40, 3, 3, 1, 1, 3});  // dilation across run boundaries
    checkAgainstReference(
        {1, 16, 90, 90, 4, 3, 1, 1});  // 144 x 8100 column matrix: oneDNN's kernel
  }
}
