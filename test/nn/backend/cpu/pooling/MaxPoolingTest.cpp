// The CPU backend's direct MAX pooling (windows without padding) against a plain reference:
// values, first-maximum tie-breaking (inputs full of equal values, as MNIST's background gives),
// gradients routed to the arg-max and summed where windows overlap (2x2/2 by both the vector
// kernels of the avx2 and avx512 levels and the scalar loops), NaN and infinities, odd input
// extents, and the missing-workspace error.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <iterator>
#include <limits>
#include <vector>

#include "../BackendTestUtil.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/pooling/MaxPooling.h"

using namespace dl4cpp;
using testutil::window;

namespace {

// Coarse values so that most windows hold ties.
Tensor coarseInput(const Shape& shape) {
  Tensor x(shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = static_cast<float>((i * 37 + i / 7) % 5);
  return x;
}

// Reference forward and backward: first maximum in window order wins.
void reference(const Tensor& x, const Tensor& dy, const WindowGeometry& g, Tensor& y, Tensor& dx) {
  const int64_t planes = x.dim(0) * x.dim(1), inH = x.dim(2), inW = x.dim(3);
  const int64_t outH = y.dim(2), outW = y.dim(3);
  dx.fill(0);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < outH; ++oh)
      for (int64_t ow = 0; ow < outW; ++ow) {
        float best = std::numeric_limits<float>::lowest();
        int64_t bestAt = -1;
        for (int64_t i = 0; i < g.kernelH; ++i)
          for (int64_t j = 0; j < g.kernelW; ++j) {
            const int64_t at = p * inH * inW + (oh * g.strideH + i) * inW + ow * g.strideW + j;
            if (x.data()[at] > best) {
              best = x.data()[at];
              bestAt = at;
            }
          }
        const int64_t o = p * outH * outW + oh * outW + ow;
        y.data()[o] = best;
        dx.data()[bestAt] += dy.data()[o];
      }
}

void checkAgainstReference(const Shape& inShape, const WindowGeometry& g) {
  cpu::CpuBackend backend;
  backend.bindToCurrentThread(2);
  const Tensor x = coarseInput(inShape);
  const Shape outShape{inShape[0], inShape[1], g.outH(inShape[2]), g.outW(inShape[3])};
  Tensor y(outShape), dy(outShape), dx(inShape), yRef(outShape), dxRef(inShape), workspace;
  for (int64_t i = 0; i < dy.numel(); ++i) dy.data()[i] = 0.25f * static_cast<float>(i % 13) - 1.0f;
  dx.fill(123.0f);  // stale values must be overwritten
  backend.poolingForward(PoolingKind::MAX, x, y, g, true, workspace);
  backend.poolingBackward(PoolingKind::MAX, dy, dx, g, workspace);
  reference(x, dy, g, yRef, dxRef);
  int64_t yDiffer = 0, dxDiffer = 0;
  for (int64_t i = 0; i < y.numel(); ++i) yDiffer += y.data()[i] != yRef.data()[i];
  for (int64_t i = 0; i < dx.numel(); ++i) dxDiffer += dx.data()[i] != dxRef.data()[i];
  CHECK(yDiffer == 0);
  CHECK(dxDiffer == 0);

  // The scalar forward and backward (the backend runs the vector ones at avx2 and avx512): same
  // bits, arg-max bytes included.
  Tensor yScalar(outShape);
  std::vector<uint8_t> argmaxScalar(static_cast<size_t>(y.numel()));
  cpu::maxPoolingForward(x, yScalar, g, argmaxScalar.data(), false);
  CHECK(yScalar.toVector() == yRef.toVector());
  CHECK(std::equal(argmaxScalar.begin(), argmaxScalar.end(),
                   reinterpret_cast<const uint8_t*>(workspace.data())));
  Tensor dxScalar(inShape);
  dxScalar.fill(123.0f);
  cpu::maxPoolingBackward(dy, dxScalar, g, reinterpret_cast<const uint8_t*>(workspace.data()),
                          false);
  CHECK(dxScalar.toVector() == dxRef.toVector());

  Tensor yInference(outShape), none;
  backend.poolingForward(PoolingKind::MAX, x, yInference, g, false, none);
  int64_t inferenceDiffer = 0;
  for (int64_t i = 0; i < y.numel(); ++i) inferenceDiffer += yInference.data()[i] != y.data()[i];
  CHECK(inferenceDiffer == 0);
  CHECK(none.numel() == 0);  // inference records no arg-max
}

}  // namespace

TEST_SUITE("nn/backend/cpu") {
  TEST_CASE("MaxPooling: 2x2/2 equals the reference, ties to the first maximum") {
    checkAgainstReference(Shape{3, 5, 24, 24}, window(2, 2));
  }
  TEST_CASE(
      "MaxPooling: 2x2/2 rows of 8, 4, 17 and 7 outputs (full, half and masked vector steps)") {
    checkAgainstReference(Shape{2, 3, 16, 16}, window(2, 2));
    checkAgainstReference(Shape{2, 3, 8, 8}, window(2, 2));
    checkAgainstReference(Shape{1, 2, 6, 34}, window(2, 2));
    checkAgainstReference(Shape{1, 2, 4, 14}, window(2, 2));
    checkAgainstReference(Shape{1, 2, 5, 35}, window(2, 2));  // and an uncovered last column
  }
  TEST_CASE("MaxPooling: 2x2/2 rows of every width from 1 to 33 outputs") {
    // Every split of a row into full, half and masked vector steps at 8 and 16 lanes.
    for (int64_t outputs = 1; outputs <= 33; ++outputs) {
      CAPTURE(outputs);
      checkAgainstReference(Shape{1, 2, 4, 2 * outputs}, window(2, 2));
    }
  }
  TEST_CASE("MaxPooling: odd extents leave zero gradient on the uncovered row and column") {
    checkAgainstReference(Shape{2, 3, 9, 7}, window(2, 2));
  }
  TEST_CASE("MaxPooling: overlapping 3x3/2 and 2x2/1 windows sum their gradients") {
    checkAgainstReference(Shape{2, 4, 11, 10}, window(3, 2));
    checkAgainstReference(Shape{1, 2, 6, 6}, window(2, 1));
  }
  TEST_CASE(
      "MaxPooling: 2x2/2 vector and scalar forward agree on NaN, infinities and signed zeros") {
    // No value beats the lowest float in a window of NaN, -inf and the lowest float itself: the
    // output is the lowest float, at position 0. A NaN never wins; -0 and +0 tie.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const float lowest = std::numeric_limits<float>::lowest();
    const float specials[] = {nan, -inf, lowest, -0.0f, 0.0f, inf, 1.0f, -1.0f, nan, nan};
    const Shape inShape{1, 3, 6, 38};  // rows of 19 outputs: full and partial vector steps
    Tensor x(inShape);
    for (int64_t i = 0; i < x.numel(); ++i)
      x.data()[i] = specials[(i * 7 + i / 5) % std::size(specials)];
    for (int64_t i = 0; i < 4; ++i) x.data()[(i / 2) * 38 + i % 2] = i == 0 ? nan : -inf;
    const WindowGeometry g = window(2, 2);
    const Shape outShape{1, 3, 3, 19};
    Tensor yVector(outShape), yScalar(outShape);
    std::vector<uint8_t> atVector(static_cast<size_t>(yVector.numel())), atScalar(atVector.size());
    cpu::maxPoolingForward(x, yVector, g, atVector.data());
    cpu::maxPoolingForward(x, yScalar, g, atScalar.data(), false);
    CHECK(yVector.data()[0] == lowest);
    CHECK(atVector[0] == 0);
    int64_t differ = 0;
    for (int64_t i = 0; i < yVector.numel(); ++i)
      differ +=
          std::bit_cast<uint32_t>(yVector.data()[i]) != std::bit_cast<uint32_t>(yScalar.data()[i]);
    CHECK(differ == 0);
    CHECK(atVector == atScalar);
  }
  TEST_CASE("MaxPooling: backward without a training forward's workspace is a BackendError") {
    cpu::CpuBackend backend;
    Tensor dy(Shape{1, 1, 2, 2}), dx(Shape{1, 1, 4, 4}), empty;
    CHECK_THROWS_AS(backend.poolingBackward(PoolingKind::MAX, dy, dx, window(2, 2), empty),
                    BackendError);
  }
}
