// The CUDA kernels' convolution and pooling index arithmetic (WindowIndexing.h), run on the host
// and checked against the CPU backend: the GPU-free half of the CUDA parity tests. With a plain
// reference GEMM in place of cuBLAS, im2col / col2im must reproduce oneDNN's convolution, and the
// pooling formulas its pooling, for every geometry the layers produce.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include "cuda/CudaTestUtil.h"
#include "nn/backend/cuda/WindowIndexing.h"

using namespace dl4cpp;
using cudatest::checkClose;
using cudatest::randomTensor;

namespace {

cuda::ConvShape convShape(const Shape& x, const Shape& y, const WindowGeometry& g) {
  return {x[0],      x[1],      x[2],      x[3],     y[2],      y[3],        g.kernelH,
          g.kernelW, g.strideH, g.strideW, g.padTop, g.padLeft, g.dilationH, g.dilationW};
}

cuda::PoolShape poolShape(const Shape& x, const Shape& y, const WindowGeometry& g) {
  return {x[0] * x[1], x[2],      x[3],      y[2],     y[3],     g.kernelH,
          g.kernelW,   g.strideH, g.strideW, g.padTop, g.padLeft};
}

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("WindowIndexing: im2col and col2im with a reference GEMM reproduce CPU convolution") {
    auto cpu = makeBackend(Device::cpu());
    cpu->bindToCurrentThread(0);
    uint64_t seed = 300;
    for (const WindowGeometry& g : cudatest::convGeometries()) {
      CAPTURE(g.kernelH);
      CAPTURE(g.strideW);
      CAPTURE(g.dilationH);
      const int64_t n = 2, c = 3, h = 11, w = 9, o = 4;
      const Shape xs{n, c, h, w}, ws{o, c, g.kernelH, g.kernelW};
      const Shape ys{n, o, g.outH(h), g.outW(w)};
      const Tensor x = randomTensor(xs, ++seed), wt = randomTensor(ws, ++seed);
      const Tensor dy = randomTensor(ys, ++seed);
      const cuda::ConvShape s = convShape(xs, ys, g);
      const int64_t rows = s.rows(), positions = s.positions();
      REQUIRE(rows == c * g.kernelH * g.kernelW);

      std::vector<float> columns(static_cast<size_t>(n * rows * positions));
      for (size_t i = 0; i < columns.size(); ++i)
        columns[i] = cuda::im2colElement(x.data(), s, static_cast<int64_t>(i));

      // Forward: y[n] (O, P) = W (O, CKK) columns[n] (CKK, P).
      Tensor y(ys);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t oc = 0; oc < o; ++oc)
          for (int64_t p = 0; p < positions; ++p) {
            double sum = 0;
            for (int64_t r = 0; r < rows; ++r)
              sum += double(wt.data()[oc * rows + r]) *
                     columns[static_cast<size_t>((b * rows + r) * positions + p)];
            y.data()[(b * o + oc) * positions + p] = static_cast<float>(sum);
          }
      Tensor yCpu(ys), noBias;
      cpu->convolutionForward(x, wt, noBias, yCpu, g);
      checkClose(yCpu, y, 1e-5, 1e-5);

      // Backward-data: dcol[n] = W^T dy[n], then col2im.
      std::vector<float> dcol(columns.size());
      for (int64_t b = 0; b < n; ++b)
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t p = 0; p < positions; ++p) {
            double sum = 0;
            for (int64_t oc = 0; oc < o; ++oc)
              sum += double(wt.data()[oc * rows + r]) * dy.data()[(b * o + oc) * positions + p];
            dcol[static_cast<size_t>((b * rows + r) * positions + p)] = static_cast<float>(sum);
          }
      Tensor dx(xs), dxCpu(xs);
      for (int64_t i = 0; i < dx.numel(); ++i)
        dx.data()[i] = cuda::col2imElement(dcol.data(), s, i);
      cpu->convolutionBackwardData(dy, wt, dxCpu, g);
      checkClose(dxCpu, dx, 1e-5, 1e-5);

      // Backward-weights: dW = sum_n dy[n] columns[n]^T.
      Tensor dw(ws), dwCpu(ws), dbCpu(Shape{o});
      for (int64_t oc = 0; oc < o; ++oc)
        for (int64_t r = 0; r < rows; ++r) {
          double sum = 0;
          for (int64_t b = 0; b < n; ++b)
            for (int64_t p = 0; p < positions; ++p)
              sum += double(dy.data()[(b * o + oc) * positions + p]) *
                     columns[static_cast<size_t>((b * rows + r) * positions + p)];
          dw.data()[oc * rows + r] = static_cast<float>(sum);
        }
      cpu->convolutionBackwardWeights(x, dy, dwCpu, dbCpu, g);
      checkClose(dwCpu, dw, 1e-4, 1e-5);
    }
  }

  TEST_CASE("WindowIndexing: max and average pooling formulas reproduce CPU pooling") {
    auto cpu = makeBackend(Device::cpu());
    cpu->bindToCurrentThread(0);
    uint64_t seed = 400;
    for (const WindowGeometry& g : cudatest::poolGeometries())
      for (PoolingKind kind : {PoolingKind::MAX, PoolingKind::AVG}) {
        CAPTURE(g.kernelH);
        CAPTURE(static_cast<int>(kind));
        const Shape xs{2, 3, 8, 7}, ys{2, 3, g.outH(8), g.outW(7)};
        const Tensor x = randomTensor(xs, ++seed), dy = randomTensor(ys, ++seed);
        const cuda::PoolShape s = poolShape(xs, ys, g);
        Tensor y(ys);
        std::vector<int> argmax(static_cast<size_t>(y.numel()), -1);
        for (int64_t i = 0; i < y.numel(); ++i)
          y.data()[i] = kind == PoolingKind::MAX
                            ? cuda::maxPoolElement(x.data(), s, i, &argmax[static_cast<size_t>(i)])
                            : cuda::avgPoolElement(x.data(), s, i);
        Tensor yCpu(ys), workspace;
        cpu->poolingForward(kind, x, yCpu, g, true, workspace);
        checkClose(yCpu, y, 1e-6, 1e-6);

        Tensor dx(xs), dxCpu(xs);
        const int* record = kind == PoolingKind::MAX ? argmax.data() : nullptr;
        for (int64_t i = 0; i < dx.numel(); ++i)
          dx.data()[i] = cuda::poolBackwardElement(dy.data(), record, s, i);
        cpu->poolingBackward(kind, dy, dxCpu, g, workspace);
        checkClose(dxCpu, dx, 1e-6, 1e-6);
      }
  }

  TEST_CASE("WindowIndexing: MAX ties go to the first maximum and windows clip at the borders") {
    // A constant image: every window's arg-max is its first in-image element.
    WindowGeometry g;
    g.kernelH = g.kernelW = 3;
    g.strideH = g.strideW = 2;
    g.padTop = g.padLeft = g.padBottom = g.padRight = 1;
    const Shape xs{1, 1, 5, 5}, ys{1, 1, g.outH(5), g.outW(5)};
    REQUIRE(ys[2] == 3);
    const Tensor x = Tensor::fromVector(xs, std::vector<float>(25, 1.0f));
    const cuda::PoolShape s = poolShape(xs, ys, g);
    int where = -2;
    CHECK(cuda::maxPoolElement(x.data(), s, 0, &where) == 1.0f);
    CHECK(where == 0);  // window rows/cols [-1, 2) clipped to [0, 2): first element (0, 0)
    cuda::maxPoolElement(x.data(), s, 4, &where);  // output (1, 1): window starts at (1, 1)
    CHECK(where == 1 * 5 + 1);
    CHECK(cuda::clippedWindow(s, 0, 0).area() == 4);  // corner: 2 x 2 inside the image
    CHECK(cuda::clippedWindow(s, 1, 1).area() == 9);
    CHECK(cuda::clippedWindow(s, 2, 2).area() == 4);  // rows/cols [3, 6) clipped to [3, 5)
    int64_t first = -1, last = -1;
    cuda::coveringRange(0, 3, 2, 1, 3, first, last);  // input 0: windows 0 only
    CHECK(first == 0);
    CHECK(last == 0);
    cuda::coveringRange(3, 3, 2, 1, 3, first, last);  // input 3: windows 1 and 2
    CHECK(first == 1);
    CHECK(last == 2);
  }
}
