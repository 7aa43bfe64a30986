// The CUDA kernels' per-element formulas (ElementwiseMath.h), run on the host and checked against
// the CPU backend: activations and their backward passes, softmax, every loss (fused or not) and
// every updater, without a GPU.
#include <dl4cpp/dl4cpp.h>
#include <dl4cpp/nn/backend/cuda/ElementwiseMath.h>
#include <doctest/doctest.h>

#include "cuda/CudaTestUtil.h"

using namespace dl4cpp;
using cudatest::checkClose;
using cudatest::oneHot;
using cudatest::randomTensor;

namespace {

// What CudaBackend::activationForward / activationBackward compute, on the host.
void activationForward(ActivationKind kind, float alpha, Tensor& y) {
  const int64_t rows = y.dim(0), k = y.numel() / rows;
  if (kind == ActivationKind::SOFTMAX) {
    for (int64_t r = 0; r < rows; ++r) cuda::softmaxRow(y.data() + r * k, k);
    return;
  }
  for (int64_t i = 0; i < y.numel(); ++i) y.data()[i] = cuda::activate(kind, alpha, y.data()[i]);
}

void activationBackward(ActivationKind kind, float alpha, const Tensor& y, const Tensor& dy,
                        Tensor& dx) {
  const int64_t rows = y.dim(0), k = y.numel() / rows;
  if (kind == ActivationKind::SOFTMAX) {
    for (int64_t r = 0; r < rows; ++r)
      cuda::softmaxBackwardRow(y.data() + r * k, dy.data() + r * k, dx.data() + r * k, k);
    return;
  }
  for (int64_t i = 0; i < y.numel(); ++i)
    dx.data()[i] = cuda::activateBackward(kind, alpha, y.data()[i], dy.data()[i]);
}

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("ElementwiseMath: activations and their backward passes match the CPU backend") {
    auto cpu = makeBackend(Device::cpu());
    cpu->bindToCurrentThread(0);
    uint64_t seed = 500;
    for (ActivationKind kind :
         {ActivationKind::IDENTITY, ActivationKind::RELU, ActivationKind::LEAKYRELU,
          ActivationKind::TANH, ActivationKind::SIGMOID, ActivationKind::SOFTMAX}) {
      CAPTURE(static_cast<int>(kind));
      const Shape s{9, 13};
      const Tensor z = randomTensor(s, ++seed, -3, 3), dy = randomTensor(s, ++seed);
      Tensor yCpu = z.clone(), y = z.clone();
      cpu->activationForward(kind, 0.1f, yCpu);
      activationForward(kind, 0.1f, y);
      checkClose(yCpu, y, 1e-6, 1e-5);
      Tensor dxCpu(s), dx(s);
      cpu->activationBackward(kind, 0.1f, yCpu, dy, dxCpu);
      activationBackward(kind, 0.1f, yCpu, dy, dx);
      checkClose(dxCpu, dx, 1e-6, 1e-5);
    }
  }

  TEST_CASE("ElementwiseMath: every loss gradient and summed score matches the CPU backend") {
    auto cpu = makeBackend(Device::cpu());
    cpu->bindToCurrentThread(0);
    struct Case {
      LossKind loss;
      ActivationKind activation;
    };
    uint64_t seed = 600;
    for (Case c :
         {Case{LossKind::NEGATIVELOGLIKELIHOOD, ActivationKind::SOFTMAX},
          Case{LossKind::MCXENT, ActivationKind::SOFTMAX},
          Case{LossKind::XENT, ActivationKind::SIGMOID},
          Case{LossKind::MSE, ActivationKind::IDENTITY}, Case{LossKind::MSE, ActivationKind::TANH},
          Case{LossKind::MCXENT, ActivationKind::SIGMOID}}) {
      CAPTURE(static_cast<int>(c.loss));
      CAPTURE(static_cast<int>(c.activation));
      const int64_t n = 17, k = 6;
      Tensor y = randomTensor(Shape{n, k}, ++seed, -2, 2);
      cpu->activationForward(c.activation, 0.0f, y);
      const Tensor labels =
          c.loss == LossKind::MSE ? randomTensor(Shape{n, k}, ++seed) : oneHot(n, k, ++seed);
      Tensor dzCpu(Shape{n, k}), dz(Shape{n, k});
      const double want = cpu->lossForwardBackward(c.loss, c.activation, 0.0f, y, labels, dzCpu);

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
        activationBackward(c.activation, 0.0f, y, dz, dz);
      }
      double sum = 0;
      for (int64_t i = 0; i < y.numel(); ++i)
        sum += cuda::lossTerm(c.loss, y.data()[i], labels.data()[i]);
      if (c.loss == LossKind::MSE) sum /= static_cast<double>(k);
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
