#pragma once
// Helpers for the CUDA tests. Every test that needs a GPU starts with
//   if (!cudaDevicePresent()) return;
// which prints "skipped: no CUDA device": CTest's SKIP_REGULAR_EXPRESSION (test/CMakeLists.txt)
// turns that into a reported skip, so a machine without a GPU never counts these as passed.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <vector>

#include "nn/backend/Backend.h"
#include "nn/backend/DeviceContext.h"
#include "nn/tensor/Random.h"

namespace cudatest {

inline bool cudaDevicePresent() {
  if (dl4cpp::cudaDeviceCount() > 0) return true;
  std::cout << "skipped: no CUDA device" << std::endl;
  return false;
}

inline const dl4cpp::Device kGpu = dl4cpp::Device::cuda(0);

// A CPU backend (the reference) and a backend of GPU 0, both bound to the calling thread.
struct Backends {
  std::unique_ptr<dl4cpp::Backend> cpu = dl4cpp::makeBackend(dl4cpp::Device::cpu());
  std::unique_ptr<dl4cpp::Backend> gpu = dl4cpp::makeBackend(kGpu);
  Backends() {
    cpu->bindToCurrentThread(0);
    gpu->bindToCurrentThread(0);
  }
};

// A host tensor of values uniform in [lo, hi), fixed by `seed`.
inline dl4cpp::Tensor randomTensor(const dl4cpp::Shape& shape, uint64_t seed, double lo = -1,
                                   double hi = 1) {
  dl4cpp::Random random(seed);
  dl4cpp::Tensor t(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(random.uniform(lo, hi));
  return t;
}

// Every updater, with hyperparameters that move parameters visibly in a few steps.
inline std::vector<dl4cpp::UpdaterParams> everyUpdater() {
  using namespace dl4cpp;
  return {Sgd(0.1),      Nesterovs(0.05, 0.9), Adam(0.01),   RmsProp(0.02), NoOp(),
          AdaGrad(0.05), AdaDelta(),           AdaMax(0.01), Nadam(0.01),   AMSGrad(0.01)};
}

// None, l2 alone, l1 + l2 + weight decay, and weight decay without the learning rate.
inline std::vector<dl4cpp::RegularizationParams> everyRegularization() {
  using dl4cpp::RegularizationParams;
  return {RegularizationParams{}, RegularizationParams{.l2 = 1e-3},
          RegularizationParams{.l1 = 2e-3, .l2 = 1e-3, .weightDecay = 0.05},
          RegularizationParams{.weightDecay = 0.05, .weightDecayApplyLR = false}};
}

// One-hot rows (n, k).
inline dl4cpp::Tensor oneHot(int64_t n, int64_t k, uint64_t seed) {
  dl4cpp::Random random(seed);
  dl4cpp::Tensor t(dl4cpp::Shape{n, k});
  for (int64_t r = 0; r < n; ++r) t.data()[r * k + static_cast<int64_t>(random.nextU64() % k)] = 1;
  return t;
}

// Losses with the activations they are checked with: every loss, both fused pairs and the
// unfused cross-entropy, and activations whose backward pass reads their input (z).
struct LossCase {
  dl4cpp::LossKind loss;
  dl4cpp::ActivationKind activation;
};
inline const std::vector<LossCase> kLossCases{
    {dl4cpp::LossKind::NEGATIVELOGLIKELIHOOD, dl4cpp::ActivationKind::SOFTMAX},
    {dl4cpp::LossKind::MCXENT, dl4cpp::ActivationKind::SOFTMAX},
    {dl4cpp::LossKind::XENT, dl4cpp::ActivationKind::SIGMOID},
    {dl4cpp::LossKind::MSE, dl4cpp::ActivationKind::IDENTITY},
    {dl4cpp::LossKind::MSE, dl4cpp::ActivationKind::TANH},
    {dl4cpp::LossKind::MCXENT, dl4cpp::ActivationKind::SIGMOID},
    {dl4cpp::LossKind::MSE, dl4cpp::ActivationKind::GELU},
    {dl4cpp::LossKind::MEAN_ABSOLUTE_ERROR, dl4cpp::ActivationKind::IDENTITY},
    {dl4cpp::LossKind::L1, dl4cpp::ActivationKind::TANH},
    {dl4cpp::LossKind::L2, dl4cpp::ActivationKind::SWISH},
    {dl4cpp::LossKind::HINGE, dl4cpp::ActivationKind::IDENTITY},
    {dl4cpp::LossKind::SQUARED_HINGE, dl4cpp::ActivationKind::TANH},
    {dl4cpp::LossKind::KL_DIVERGENCE, dl4cpp::ActivationKind::SOFTMAX},
    {dl4cpp::LossKind::KL_DIVERGENCE, dl4cpp::ActivationKind::SIGMOID}};

// Labels (n, k) of the kind `loss` expects: one-hot for the cross-entropies, -1 or +1 for the
// hinges, rows that sum to 1 for KL_DIVERGENCE, values in [0, 1) for the regression losses.
inline dl4cpp::Tensor labelsFor(dl4cpp::LossKind loss, int64_t n, int64_t k, uint64_t seed) {
  using dl4cpp::LossKind;
  switch (loss) {
    case LossKind::NEGATIVELOGLIKELIHOOD:
    case LossKind::MCXENT:
    case LossKind::XENT:
      return oneHot(n, k, seed);
    case LossKind::HINGE:
    case LossKind::SQUARED_HINGE: {
      dl4cpp::Tensor t = randomTensor(dl4cpp::Shape{n, k}, seed);
      for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = t.data()[i] < 0 ? -1.0f : 1.0f;
      return t;
    }
    case LossKind::KL_DIVERGENCE: {
      dl4cpp::Tensor t = randomTensor(dl4cpp::Shape{n, k}, seed, 0.05, 1);
      for (int64_t r = 0; r < n; ++r) {
        float sum = 0;
        for (int64_t c = 0; c < k; ++c) sum += t.data()[r * k + c];
        for (int64_t c = 0; c < k; ++c) t.data()[r * k + c] /= sum;
      }
      return t;
    }
    default:
      return randomTensor(dl4cpp::Shape{n, k}, seed, 0, 1);
  }
}

// Every element of `gpu` (any device) within abs + rel * |cpu| of `cpu`; reports the worst one.
inline void checkClose(const dl4cpp::Tensor& cpu, const dl4cpp::Tensor& gpu, double abs,
                       double rel = 0) {
  REQUIRE(cpu.shape() == gpu.shape());
  const std::vector<float> a = cpu.toVector(), b = gpu.toVector();
  double worst = 0;
  size_t where = 0;
  bool ok = true;
  for (size_t i = 0; i < a.size(); ++i) {
    const double diff = std::fabs(double(a[i]) - double(b[i]));
    const double limit = abs + rel * std::fabs(double(a[i]));
    if (!(diff <= limit)) ok = false;
    if (!(diff <= worst)) {
      worst = diff;
      where = i;
    }
  }
  INFO("worst difference " << worst << " at element " << where << " of " << a.size() << " (cpu "
                           << (a.empty() ? 0.f : a[where]) << ", gpu "
                           << (b.empty() ? 0.f : b[where]) << ")");
  CHECK(ok);
}

// The convolution geometries the layers produce: Truncate (no padding), Same with odd total
// padding (one more at the bottom/right), strided with padding on one axis, and dilated.
inline std::vector<dl4cpp::WindowGeometry> convGeometries() {
  dl4cpp::WindowGeometry truncate;
  truncate.kernelH = truncate.kernelW = 5;
  dl4cpp::WindowGeometry same;
  same.kernelH = same.kernelW = 4;
  same.padTop = same.padLeft = 1;
  same.padBottom = same.padRight = 2;
  dl4cpp::WindowGeometry strided;
  strided.kernelH = 3;
  strided.kernelW = 2;
  strided.strideH = 2;
  strided.strideW = 3;
  strided.padTop = 1;
  strided.padBottom = 1;
  dl4cpp::WindowGeometry dilated;
  dilated.kernelH = dilated.kernelW = 3;
  dilated.dilationH = dilated.dilationW = 2;
  dilated.padTop = dilated.padLeft = dilated.padBottom = dilated.padRight = 2;
  return {truncate, same, strided, dilated};
}

// Pooling geometries: LeNet's 2x2 stride 2, and overlapping 3x3 stride 2 windows with asymmetric
// padding.
inline std::vector<dl4cpp::WindowGeometry> poolGeometries() {
  dl4cpp::WindowGeometry lenet;
  lenet.kernelH = lenet.kernelW = 2;
  lenet.strideH = lenet.strideW = 2;
  dl4cpp::WindowGeometry padded;
  padded.kernelH = padded.kernelW = 3;
  padded.strideH = padded.strideW = 2;
  padded.padTop = padded.padLeft = 1;
  padded.padBottom = padded.padRight = 2;
  return {lenet, padded};
}

// Five fit() steps of `cpu` and `gpu`, initialised models of one configuration, on `data`; then
// their scores and parameters must agree.
template <typename Model, typename Data>
void checkTrainsAlike(Model& cpu, Model& gpu, const Data& data) {
  for (int i = 0; i < 5; ++i) {
    cpu.fit(data);
    gpu.fit(data);
  }
  CHECK(gpu.score() == doctest::Approx(cpu.score()).epsilon(1e-4));
  checkClose(cpu.params(), gpu.params(), 1e-4, 1e-3);
}

}  // namespace cudatest
