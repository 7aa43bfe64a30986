// The CPU backend's convolutions against a plain double-precision reference, on both paths it picks
// by input channel count (below 8: im2col + sgemm forward, oneDNN's blocked kernels backward; from
// 8: oneDNN's channels-last kernels): forward with bias, backward data, backward weights and bias,
// with stride, padding and dilation.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <dl4cpp/nn/backend/cpu/CpuBackend.h>

using namespace dl4cpp;

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

Tensor filled(const Shape& shape, int64_t salt) {
  Tensor t(shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data()[i] = static_cast<float>((i * 7919 + salt * 104729) % 201 - 100) / 100.0f;
  return t;
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

void checkClose(const Tensor& actual, const std::vector<double>& expected, const char* what) {
  REQUIRE(actual.numel() == static_cast<int64_t>(expected.size()));
  double worst = 0;
  for (int64_t i = 0; i < actual.numel(); ++i)
    worst = std::max(worst, std::abs(actual.data()[i] - expected[i]) /
                                (1.0 + std::abs(expected[i])));
  INFO(std::string(what) << ": worst relative error " << worst);
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

  std::vector<double> y(yShape.numel()), dx(xShape.numel()), dw(w.numel()), db(c.outChannels);
  for (int64_t i = 0; i < yShape.numel(); ++i) {
    const int64_t o = (i / (outH * outW)) % c.outChannels;
    y[i] = c.bias ? b.data()[o] : 0.0;
    db[o] += dy.data()[i];
  }
  forEachTap(c, g, outH, outW, [&](int64_t xi, int64_t wi, int64_t yi) {
    y[yi] += double{x.data()[xi]} * w.data()[wi];
    dx[xi] += double{dy.data()[yi]} * w.data()[wi];
    dw[wi] += double{dy.data()[yi]} * x.data()[xi];
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
}

}  // namespace

TEST_SUITE("nn/backend/cpu") {
  TEST_CASE("Convolution: few input channels (im2col forward) match the reference") {
    checkAgainstReference({3, 1, 12, 12, 5, 5, 1, 0});  // LeNet's first convolution, smaller
    checkAgainstReference({2, 3, 9, 7, 4, 3, 2, 1});
    checkAgainstReference({5, 2, 8, 10, 3, 3, 1, 2, 2});
    checkAgainstReference({2, 7, 11, 6, 4, 4, 3, 3});   // padding wider than some windows reach
    checkAgainstReference({2, 3, 8, 8, 5, 3, 1, 1, 1, false});  // without bias
  }

  TEST_CASE("Convolution: many input channels (channels-last kernels) match the reference") {
    checkAgainstReference({3, 20, 12, 12, 50, 5, 1, 0});  // LeNet's second convolution
    checkAgainstReference({2, 8, 9, 7, 3, 3, 2, 1});
    checkAgainstReference({2, 17, 6, 6, 19, 2, 1, 1});
    checkAgainstReference({2, 9, 10, 10, 4, 3, 1, 1, 2});
    checkAgainstReference({2, 12, 7, 7, 6, 3, 1, 0, 1, false});  // without bias
  }
}
