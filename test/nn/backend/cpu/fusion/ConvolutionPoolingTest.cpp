// The CPU backend's fused convolution + activation + MAX pooling (ConvolutionPooling.h) against
// the ops it replaces, run one after the other on the same backend: the pooled output, the arg-max
// bytes and the weight and bias gradients must be the same bits, on one thread and on two, for
// shapes where it fuses (direct, im2col or Winograd forward, direct weight gradient) and where it
// falls back to the ops. With an activation, the fused backward pass takes f' from the pooled
// output (as ConvolutionPoolingStep.h does), the unfused one from the convolution's. Where it
// fuses, the convolution's output buffer must stay untouched: that is the point.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include "../BackendTestUtil.h"
#include "CpuIsaTestUtil.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/conf/Enums.h"

using namespace dl4cpp;
using testutil::filled;
using testutil::runsAt;
using testutil::setOmpThreads;
using testutil::skippedBelow;
using testutil::window;

namespace {

struct Case {
  int64_t batch, channels, size, outChannels, kernel;
  int64_t convStride = 1, convPad = 0;
  int64_t poolKernel = 2, poolStride = 2;
  bool bias = true;
  cpu::FusedActivation f{};
};

std::vector<uint8_t> bytes(const Tensor& workspace, int64_t count) {
  const auto* p = reinterpret_cast<const uint8_t*>(workspace.data());
  return {p, p + count};
}

bool untouched(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isnan(t.data()[i])) return false;
  return true;
}

struct Result {
  std::vector<float> pooled, dw, db;
  std::vector<uint8_t> argmax;
  bool convOutputUntouched = false, convGradUntouched = false;
};

// The fused ops (fused = true) or the two ops each replaces, on `threads` OpenMP threads.
Result run(const Case& c, bool fused, int threads) {
  const int saved = omp_get_max_threads();
  setOmpThreads(threads);
  cpu::CpuBackend backend;
  const WindowGeometry convG = window(c.kernel, c.convStride, c.convPad);
  const WindowGeometry poolG = window(c.poolKernel, c.poolStride);
  const int64_t convH = convG.outH(c.size), pooledH = poolG.outH(convH);
  const Shape xShape{c.batch, c.channels, c.size, c.size};
  const Shape wShape{c.outChannels, c.channels, c.kernel, c.kernel};
  const Shape convShape{c.batch, c.outChannels, convH, convH};
  const Shape pooledShape{c.batch, c.outChannels, pooledH, pooledH};
  const Tensor x = filled(xShape, 1), w = filled(wShape, 2), dPooled = filled(pooledShape, 4);
  Tensor b = c.bias ? filled(Shape{c.outChannels}, 3) : Tensor();
  Tensor convOutput(convShape), convGrad(convShape), pooled(pooledShape), workspace;
  Tensor dw(wShape), db = c.bias ? Tensor(Shape{c.outChannels}) : Tensor();
  convOutput.fill(NAN);
  convGrad.fill(NAN);
  const ActivationKind kind = c.f.kind;
  if (fused) {
    backend.convolutionMaxPoolingForward(x, w, b, c.f, convOutput, pooled, convG, poolG, true,
                                         workspace);
    Tensor activated(pooledShape);
    backend.activationBackward(kind, c.f.alpha, Tensor(), pooled, dPooled, activated);
    backend.convolutionMaxPoolingBackwardWeights(x, activated, workspace, convGrad, dw, db, convG,
                                                 poolG);
  } else {
    backend.convolutionForward(x, w, b, convOutput, convG);
    backend.activationForward(kind, c.f.alpha, convOutput, convOutput);
    backend.poolingForward(PoolingKind::MAX, convOutput, pooled, poolG, true, workspace);
    backend.poolingBackward(PoolingKind::MAX, dPooled, convGrad, poolG, workspace);
    backend.activationBackward(kind, c.f.alpha, Tensor(), convOutput, convGrad, convGrad);
    backend.convolutionBackwardWeights(x, convGrad, dw, db, convG);
  }
  Result r{pooled.toVector(),
           dw.toVector(),
           c.bias ? db.toVector() : std::vector<float>(),
           bytes(workspace, pooled.numel()),
           untouched(convOutput),
           untouched(convGrad)};
  setOmpThreads(saved);
  return r;
}

// Fused equals unfused bit for bit on 1 and on 2 threads (against the unfused ops on as many:
// oneDNN's kernels, which the unfused weight gradient of strided or padded convolutions runs on,
// sum in an order that depends on the thread count); returns the fused 1-thread result.
Result checkEqualsUnfused(const Case& c) {
  Result first;
  for (int threads : {1, 2}) {
    INFO("threads " << threads);
    const Result reference = run(c, false, threads);
    const Result r = run(c, true, threads);
    CHECK(r.pooled == reference.pooled);
    CHECK(r.argmax == reference.argmax);
    CHECK(r.dw == reference.dw);
    CHECK(r.db == reference.db);
    if (threads == 1) first = r;
  }
  return first;
}

}  // namespace

TEST_SUITE("nn/backend/cpu") {
  TEST_CASE("ConvolutionPooling: LeNet's first convolution and pooling, fused, equal the two ops") {
    const Result r = checkEqualsUnfused({5, 1, 28, 20, 5});
    // The forward pass fuses on any processor (direct kernels with AVX-512, else im2col); the
    // weight gradient where the direct kernel runs.
    CHECK(r.convOutputUntouched);
    CHECK(r.convGradUntouched == runsAt(CpuIsa::Avx2));
  }

  TEST_CASE(
      "ConvolutionPooling: without bias, odd extents, overlapping windows, several channels") {
    CHECK(checkEqualsUnfused({3, 1, 12, 4, 3, 1, 0, 2, 2, false}).convOutputUntouched);
    CHECK(checkEqualsUnfused({2, 2, 13, 5, 4}).convOutputUntouched);  // 10x10 -> 5x5
    CHECK(checkEqualsUnfused({2, 3, 14, 6, 5}).convOutputUntouched);  // 10x10, 3 channels
    CHECK(checkEqualsUnfused({17, 1, 16, 7, 5})
              .convOutputUntouched);  // 5 + 2 channel blocks, 17 images
    CHECK(checkEqualsUnfused({2, 1, 11, 3, 3}).convOutputUntouched);  // 9x9: last row uncovered
    CHECK(checkEqualsUnfused({2, 2, 13, 4, 3, 1, 0, 3, 2}).convOutputUntouched);  // 3x3/2 windows
  }

  TEST_CASE("ConvolutionPooling: strided or padded convolutions fuse forward only") {
    // The direct weight gradient needs stride 1 and no padding: the backward pass runs as two ops.
    const Result strided = checkEqualsUnfused({2, 2, 15, 4, 3, 2});
    CHECK(strided.convOutputUntouched);
    CHECK_FALSE(strided.convGradUntouched);
    const Result padded = checkEqualsUnfused({2, 1, 10, 4, 3, 1, 1});
    CHECK(padded.convOutputUntouched);
    CHECK_FALSE(padded.convGradUntouched);
  }

  TEST_CASE("ConvolutionPooling: the direct kernels' convolutions fuse forward, item by item") {
    // LeNet's second convolution and pooling, 8x8 outputs: on the 5x5 Winograd kernel at avx2 and
    // avx512, fused the same way. Its weight gradient runs on the Winograd kernel too, which the
    // fusion leaves alone.
    const Result lenet = checkEqualsUnfused({3, 20, 12, 50, 5});
    CHECK(lenet.convOutputUntouched == runsAt(CpuIsa::Avx2));
    CHECK_FALSE(lenet.convGradUntouched);
    // Rows of 16 (16x16 outputs) and of 24 (16 + 8), 5 + 2 channel blocks, no bias, overlapping
    // 3x3/2 windows.
    CHECK(checkEqualsUnfused({2, 3, 20, 7, 5}).convOutputUntouched);
    CHECK(checkEqualsUnfused({2, 9, 28, 7, 5}).convOutputUntouched == runsAt(CpuIsa::Avx2));
    CHECK(checkEqualsUnfused({2, 9, 12, 6, 5, 1, 0, 2, 2, false}).convOutputUntouched ==
          runsAt(CpuIsa::Avx2));
    CHECK(checkEqualsUnfused({2, 9, 12, 4, 5, 1, 0, 3, 2}).convOutputUntouched ==
          runsAt(CpuIsa::Avx2));
  }

  TEST_CASE("ConvolutionPooling: many input channels fuse on the 5x5 Winograd kernel") {
    // 9x9 outputs: not the direct kernels; from 8 input channels not im2col either. At avx2 and
    // avx512 the forward pass runs on the 5x5 Winograd kernel, fused; at baseline on oneDNN's
    // kernels, as the two ops.
    const Result r = checkEqualsUnfused({2, 20, 13, 50, 5});
    CHECK(r.convOutputUntouched == runsAt(CpuIsa::Avx2));
    CHECK_FALSE(r.convGradUntouched);
  }

  TEST_CASE("ConvolutionPooling: RELU and LEAKYRELU between them, fused, equal the three ops") {
    const cpu::FusedActivation relu{ActivationKind::RELU, 0.0f};
    const cpu::FusedActivation leaky{ActivationKind::LEAKYRELU, 0.1f};
    const cpu::FusedActivation leakyZero{ActivationKind::LEAKYRELU, 0.0f};  // -0 for negatives
    for (const cpu::FusedActivation& f : {relu, leaky, leakyZero}) {
      INFO("activation " << toString(f.kind) << " alpha " << f.alpha);
      // A VGG-style 3x3 convolution with padding 1: on the 3x3 Winograd kernels at avx2 and
      // avx512, on oneDNN's at baseline (unfused there); then the direct kernels, im2col and
      // LeNet's 5x5 Winograd shape, each fused.
      Case vgg{2, 16, 12, 32, 3, 1, 1};
      vgg.f = f;
      CHECK(checkEqualsUnfused(vgg).convOutputUntouched == runsAt(CpuIsa::Avx2));
      Case lenetFirst{5, 1, 28, 20, 5};
      lenetFirst.f = f;
      const Result first = checkEqualsUnfused(lenetFirst);
      CHECK(first.convOutputUntouched);
      CHECK(first.convGradUntouched == runsAt(CpuIsa::Avx2));
      Case direct{2, 3, 20, 7, 5};
      direct.f = f;
      CHECK(checkEqualsUnfused(direct).convOutputUntouched);
      // 3x3 without padding on 16-wide rows: the direct kernels take it before the 3x3 Winograd
      // ones, fused or not.
      Case direct3x3{2, 8, 18, 6, 3};
      direct3x3.f = f;
      CHECK(checkEqualsUnfused(direct3x3).convOutputUntouched == runsAt(CpuIsa::Avx2));
      Case lenetSecond{3, 20, 12, 50, 5};
      lenetSecond.f = f;
      CHECK(checkEqualsUnfused(lenetSecond).convOutputUntouched == runsAt(CpuIsa::Avx2));
    }
  }

  TEST_CASE("ConvolutionPooling: another activation or a negative slope is a BackendError") {
    cpu::CpuBackend backend;
    const Tensor x = filled(Shape{1, 1, 12, 12}, 1), w = filled(Shape{4, 1, 5, 5}, 2);
    Tensor convOutput(Shape{1, 4, 8, 8}), pooled(Shape{1, 4, 4, 4}), workspace;
    for (const cpu::FusedActivation& f : {cpu::FusedActivation{ActivationKind::TANH, 0.0f},
                                          cpu::FusedActivation{ActivationKind::LEAKYRELU, -0.1f}})
      CHECK_THROWS_AS(
          backend.convolutionMaxPoolingForward(x, w, Tensor(), f, convOutput, pooled, window(5, 1),
                                               window(2, 2), true, workspace),
          BackendError);
  }

  TEST_CASE("ConvolutionPooling: inference records no arg-max and pools the same values") {
    cpu::CpuBackend backend;
    const Tensor x = filled(Shape{2, 1, 12, 12}, 1), w = filled(Shape{4, 1, 5, 5}, 2);
    const Tensor b = filled(Shape{4}, 3);
    Tensor convOutput(Shape{2, 4, 8, 8}), training(Shape{2, 4, 4, 4}), inference(Shape{2, 4, 4, 4});
    Tensor workspace, none;
    backend.convolutionMaxPoolingForward(x, w, b, {}, convOutput, training, window(5, 1),
                                         window(2, 2), true, workspace);
    backend.convolutionMaxPoolingForward(x, w, b, {}, convOutput, inference, window(5, 1),
                                         window(2, 2), false, none);
    CHECK(inference.toVector() == training.toVector());
    CHECK(none.numel() == 0);
  }

  TEST_CASE(
      "ConvolutionPooling: the weight gradient without a training forward's workspace is a "
      "BackendError") {
    // Below AVX-512 it runs as the two ops, and pooling throws the same.
    if (skippedBelow(CpuIsa::Avx2, "the fused weight gradient")) return;
    cpu::CpuBackend backend;
    const Tensor x = filled(Shape{1, 1, 12, 12}, 1), dPooled = filled(Shape{1, 4, 4, 4}, 2);
    Tensor convGrad(Shape{1, 4, 8, 8}), dw(Shape{4, 1, 5, 5}), db(Shape{4}), empty;
    CHECK_THROWS_AS(backend.convolutionMaxPoolingBackwardWeights(x, dPooled, empty, convGrad, dw,
                                                                 db, window(5, 1), window(2, 2)),
                    BackendError);
  }
}
