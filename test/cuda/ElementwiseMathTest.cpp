// The CUDA kernels' per-element formulas (ElementwiseMath.h), run on the host and checked against
// the CPU backend: activations and their backward passes, softmax, every loss (fused or not) and
// every updater, without a GPU.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include "cuda/CudaTestUtil.h"
#include "nn/backend/SoftmaxLines.h"
#include "nn/backend/cuda/ElementwiseMath.h"

using namespace dl4cpp;
using cudatest::checkClose;
using cudatest::randomTensor;

namespace {

// What CudaBackend::activationForward / activationBackward compute, on the host.
void activationForward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) {
  if (kind == ActivationKind::SOFTMAX || kind == ActivationKind::LOGSOFTMAX) {
    const SoftmaxLines lines(y);
    for (int64_t l = 0; l < lines.count; ++l) {
      const int64_t at = lines.start(l);
      (kind == ActivationKind::SOFTMAX ? cuda::softmaxLine : cuda::logSoftmaxLine)(
          x.data() + at, y.data() + at, lines.channels, lines.stride);
    }
    return;
  }
  for (int64_t i = 0; i < y.numel(); ++i) y.data()[i] = cuda::activate(kind, alpha, x.data()[i]);
}

void activationBackward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y,
                        const Tensor& dy, Tensor& dx) {
  if (kind == ActivationKind::SOFTMAX || kind == ActivationKind::LOGSOFTMAX) {
    const SoftmaxLines lines(y);
    for (int64_t l = 0; l < lines.count; ++l) {
      const int64_t at = lines.start(l);
      (kind == ActivationKind::SOFTMAX ? cuda::softmaxBackwardLine : cuda::logSoftmaxBackwardLine)(
          y.data() + at, dy.data() + at, dx.data() + at, lines.channels, lines.stride);
    }
    return;
  }
  const bool fromInput = activationBackwardNeedsInput(kind);
  for (int64_t i = 0; i < y.numel(); ++i)
    dx.data()[i] = cuda::activateBackward(kind, alpha, fromInput ? x.data()[i] : 0.0f, y.data()[i],
                                          dy.data()[i]);
}

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("ElementwiseMath: activations and their backward passes match the CPU backend") {
    auto cpu = makeBackend(Device::cpu());
    cpu->bindToCurrentThread(0);
    uint64_t seed = 500;
    for (const auto& [kind, name] : kActivationNames)
      for (const Shape& s : {Shape{9, 13}, Shape{3, 5, 4, 7}}) {  // softmax over NCHW channels
        const std::string kindName = name;
        CAPTURE(kindName);
        CAPTURE(s.toString());
        // Inputs past every kink (RELU6's 6, HARDSIGMOID's +-2.5).
        const Tensor x = randomTensor(s, ++seed, -7, 7), dy = randomTensor(s, ++seed);
        Tensor yCpu(s), y(s);
        cpu->activationForward(kind, 0.1f, x, yCpu);
        activationForward(kind, 0.1f, x, y);
        checkClose(yCpu, y, 1e-6, 1e-5);
        Tensor dxCpu(s), dx(s);
        cpu->activationBackward(kind, 0.1f, x, yCpu, dy, dxCpu);
        activationBackward(kind, 0.1f, x, yCpu, dy, dx);
        checkClose(dxCpu, dx, 1e-6, 1e-5);
      }
  }

  TEST_CASE("ElementwiseMath: every loss gradient and summed score matches the CPU backend") {
    auto cpu = makeBackend(Device::cpu());
    cpu->bindToCurrentThread(0);
    uint64_t seed = 600;
    for (const cudatest::LossCase& c : cudatest::kLossCases) {
      const std::string loss = toString(c.loss), activation = toString(c.activation);
      CAPTURE(loss);
      CAPTURE(activation);
      const int64_t n = 17, k = 6;
      const Tensor z = randomTensor(Shape{n, k}, ++seed, -2, 2);
      Tensor y(Shape{n, k});
      cpu->activationForward(c.activation, 0.0f, z, y);
      const Tensor labels = cudatest::labelsFor(c.loss, n, k, ++seed);
      Tensor dzCpu(Shape{n, k}), dz(Shape{n, k});
      const double want = cpu->lossForwardBackward(c.loss, c.activation, 0.0f, z, y, labels, dzCpu);

      // CudaBackend::lossForwardBackward's branches, on the host.
      const bool crossEntropy =
          c.loss == LossKind::NEGATIVELOGLIKELIHOOD || c.loss == LossKind::MCXENT;
      if (crossEntropy && c.activation == ActivationKind::SOFTMAX) {
        for (int64_t r = 0; r < n; ++r)
          cuda::softmaxCrossEntropyGradientRow(y.data() + r * k, labels.data() + r * k,
                                               dz.data() + r * k, k);
      } else if (c.loss == LossKind::XENT && c.activation == ActivationKind::SIGMOID) {
        for (int64_t i = 0; i < y.numel(); ++i) dz.data()[i] = y.data()[i] - labels.data()[i];
      } else {
        for (int64_t i = 0; i < y.numel(); ++i)
          dz.data()[i] = cuda::lossGradient(c.loss, y.data()[i], labels.data()[i], k);
        activationBackward(c.activation, 0.0f, z, y, dz, dz);
      }
      double sum = 0;
      for (int64_t i = 0; i < y.numel(); ++i)
        sum += cuda::lossTerm(c.loss, y.data()[i], labels.data()[i]);
      if (lossAveragesOutputs(c.loss)) sum /= static_cast<double>(k);
      CHECK(sum == doctest::Approx(want).epsilon(1e-6));
      checkClose(dzCpu, dz, 1e-6, 1e-5);
    }
  }

  TEST_CASE("ElementwiseMath: a NaN output stays NaN through the loss clips") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    CHECK(std::isnan(cuda::clampTo(nan, 0.0f, 1.0f)));
    CHECK(std::isnan(cuda::lossTerm(LossKind::MCXENT, nan, 1.0f)));
    CHECK(std::isnan(cuda::lossGradient(LossKind::XENT, nan, 1.0f, 3)));
  }

  TEST_CASE("ElementwiseMath: every updater with every regularisation matches the CPU backend") {
    auto cpu = makeBackend(Device::cpu());
    cpu->bindToCurrentThread(0);
    uint64_t seed = 700;
    for (const UpdaterParams& u : cudatest::everyUpdater())
      for (const RegularizationParams& r : cudatest::everyRegularization()) {
        CAPTURE(static_cast<int>(u.kind));
        CAPTURE(r.l1);
        CAPTURE(r.l2);
        CAPTURE(r.weightDecay);
        CAPTURE(r.weightDecayApplyLR);
        const int64_t n = 257;
        Tensor pCpu = randomTensor(Shape{n}, ++seed), gCpu = randomTensor(Shape{n}, ++seed);
        pCpu.data()[3] = 0.0f;  // sign(0) = 0: l1 leaves its gradient alone
        Tensor sCpu(Shape{std::max<int64_t>(1, n * u.stateSizePerParam())});
        sCpu.fill(static_cast<float>(u.initialStateValue()));
        Tensor p = pCpu.clone(), g = gCpu.clone(), s = sCpu.clone();
        for (int64_t iteration = 0; iteration < 3; ++iteration) {  // state carries over
          cpu->updaterStep(u, r, iteration, pCpu, gCpu, sCpu);
          const cuda::UpdaterArgs a = cuda::updaterArgs(u, r, iteration);
          for (int64_t i = 0; i < n; ++i)
            cuda::updaterElement(a, p.data(), g.data(), s.data(), i, n);
        }
        checkClose(pCpu, p, 1e-7, 1e-6);
        checkClose(gCpu, g, 1e-7, 1e-6);
        checkClose(sCpu, s, 1e-7, 1e-6);
      }
  }

  TEST_CASE("ElementwiseMath: clipping by value matches the CPU backend, NaN included") {
    auto cpu = makeBackend(Device::cpu());
    cpu->bindToCurrentThread(0);
    Tensor y = randomTensor(Shape{301}, 800, -2, 2);
    y.data()[7] = std::numeric_limits<float>::quiet_NaN();
    Tensor clipped = y.clone();
    cpu->clipByValue(y, 0.75f);
    for (int64_t i = 0; i < clipped.numel(); ++i)
      clipped.data()[i] = cuda::clipElement(clipped.data()[i], 0.75f);
    CHECK(std::isnan(y.at(7)));
    CHECK(std::isnan(clipped.at(7)));
    y.data()[7] = clipped.data()[7] = 0.0f;
    checkClose(y, clipped, 0, 0);
    for (int64_t i = 0; i < y.numel(); ++i) REQUIRE(std::fabs(y.at(i)) <= 0.75f);
  }
}
