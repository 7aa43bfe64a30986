#include "nn/backend/ProfilingBackend.h"

#include <chrono>
#include <type_traits>

#include "nn/backend/OpFlops.h"

namespace dl4cpp {

namespace {
ProfilePhase phaseOf(OpPass pass) {
  switch (pass) {
    case OpPass::FORWARD:
      return ProfilePhase::FORWARD;
    case OpPass::BACKWARD_DATA:
      return ProfilePhase::BACKWARD_DATA;
    case OpPass::BACKWARD_WEIGHTS:
      return ProfilePhase::BACKWARD_WEIGHTS;
  }
  return ProfilePhase::OTHER;
}
}  // namespace

ProfilingBackend::ProfilingBackend(Backend& inner, std::shared_ptr<LayerProfiler> profiler)
    : inner_(inner), profiler_(std::move(profiler)) {}

template <typename Op>
auto ProfilingBackend::timed(ProfilePhase phase, double flops, Op&& op) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto charge = [&] {
    profiler_->record(phase, std::chrono::duration<double>(Clock::now() - start).count(), flops);
  };
  if constexpr (std::is_void_v<decltype(op())>) {
    op();
    charge();
  } else {
    auto result = op();
    charge();
    return result;
  }
}

void ProfilingBackend::bindToCurrentThread(int numThreads) {
  inner_.bindToCurrentThread(numThreads);
}

void ProfilingBackend::convolutionForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                          Tensor& y, const WindowGeometry& g) {
  timed(ProfilePhase::FORWARD, convolutionFlops(x.shape(), w.shape(), y.shape()),
        [&] { inner_.convolutionForward(x, w, b, y, g); });
}

void ProfilingBackend::convolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                               const WindowGeometry& g) {
  timed(ProfilePhase::BACKWARD_DATA, convolutionFlops(dx.shape(), w.shape(), dy.shape()),
        [&] { inner_.convolutionBackwardData(dy, w, dx, g); });
}

void ProfilingBackend::convolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                                  Tensor& db, const WindowGeometry& g) {
  timed(ProfilePhase::BACKWARD_WEIGHTS, convolutionFlops(x.shape(), dw.shape(), dy.shape()),
        [&] { inner_.convolutionBackwardWeights(x, dy, dw, db, g); });
}

void ProfilingBackend::poolingForward(PoolingKind kind, const Tensor& x, Tensor& y,
                                      const WindowGeometry& g, bool training, Tensor& workspace) {
  timed(ProfilePhase::FORWARD, 0,
        [&] { inner_.poolingForward(kind, x, y, g, training, workspace); });
}

void ProfilingBackend::poolingBackward(PoolingKind kind, const Tensor& dy, Tensor& dx,
                                       const WindowGeometry& g, const Tensor& workspace) {
  timed(ProfilePhase::BACKWARD_DATA, 0,
        [&] { inner_.poolingBackward(kind, dy, dx, g, workspace); });
}

std::vector<std::unique_ptr<NetworkStep>> ProfilingBackend::planSteps(
    const std::vector<LayerDescription>& layers) {
  return inner_.planSteps(layers);
}

// A planned step's kernel is one op, charged to the layer the step entered (a fused convolution +
// pooling: the convolution's, with the convolution's FLOPs).
void ProfilingBackend::runPlanned(OpPass pass, double flops, KernelRef kernel) {
  timed(phaseOf(pass), flops, [&] { inner_.runPlanned(pass, flops, kernel); });
}

void ProfilingBackend::innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                           Tensor& y) {
  timed(ProfilePhase::FORWARD, innerProductFlops(x.shape(), w.shape()),
        [&] { inner_.innerProductForward(x, w, b, y); });
}

void ProfilingBackend::innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx) {
  timed(ProfilePhase::BACKWARD_DATA, innerProductFlops(dx.shape(), w.shape()),
        [&] { inner_.innerProductBackwardData(dy, w, dx); });
}

void ProfilingBackend::innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                                   Tensor& db) {
  timed(ProfilePhase::BACKWARD_WEIGHTS, innerProductFlops(x.shape(), dw.shape()),
        [&] { inner_.innerProductBackwardWeights(x, dy, dw, db); });
}

void ProfilingBackend::activationForward(ActivationKind kind, float alpha, const Tensor& x,
                                         Tensor& y) {
  timed(ProfilePhase::ACTIVATION_FORWARD, 0, [&] { inner_.activationForward(kind, alpha, x, y); });
}

void ProfilingBackend::activationBackward(ActivationKind kind, float alpha, const Tensor& x,
                                          const Tensor& y, const Tensor& dy, Tensor& dx) {
  timed(ProfilePhase::ACTIVATION_BACKWARD, 0,
        [&] { inner_.activationBackward(kind, alpha, x, y, dy, dx); });
}

double ProfilingBackend::lossForwardBackward(LossKind loss, ActivationKind activation, float alpha,
                                             const Tensor& z, const Tensor& y, const Tensor& labels,
                                             Tensor& dz) {
  return timed(ProfilePhase::LOSS, 0, [&] {
    return inner_.lossForwardBackward(loss, activation, alpha, z, y, labels, dz);
  });
}

double ProfilingBackend::lossScore(LossKind loss, const Tensor& y, const Tensor& labels) {
  return timed(ProfilePhase::LOSS, 0, [&] { return inner_.lossScore(loss, y, labels); });
}

void ProfilingBackend::updaterStep(const UpdaterParams& u, const RegularizationParams& r,
                                   int64_t iteration, Tensor& param, Tensor& grad, Tensor& state) {
  timed(ProfilePhase::UPDATER, 0, [&] { inner_.updaterStep(u, r, iteration, param, grad, state); });
}

void ProfilingBackend::batchNormForwardTraining(const Tensor& x, const Tensor& gamma,
                                                const Tensor& beta, float eps, Tensor& y,
                                                Tensor& batchMean, Tensor& batchVariance) {
  timed(ProfilePhase::FORWARD, 0,
        [&] { inner_.batchNormForwardTraining(x, gamma, beta, eps, y, batchMean, batchVariance); });
}

void ProfilingBackend::batchNormForwardInference(const Tensor& x, const Tensor& gamma,
                                                 const Tensor& beta, const Tensor& mean,
                                                 const Tensor& variance, float eps, Tensor& y) {
  timed(ProfilePhase::FORWARD, 0,
        [&] { inner_.batchNormForwardInference(x, gamma, beta, mean, variance, eps, y); });
}

void ProfilingBackend::batchNormBackward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                                         const Tensor& batchMean, const Tensor& batchVariance,
                                         float eps, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  timed(ProfilePhase::BACKWARD_DATA, 0, [&] {
    inner_.batchNormBackward(x, dy, gamma, batchMean, batchVariance, eps, dx, dgamma, dbeta);
  });
}

void ProfilingBackend::movingAverage(Tensor& average, const Tensor& value, float decay) {
  timed(ProfilePhase::OTHER, 0, [&] { inner_.movingAverage(average, value, decay); });
}

void ProfilingBackend::dropoutMask(uint64_t seed, float retainProbability, Tensor& mask) {
  timed(ProfilePhase::FORWARD, 0, [&] { inner_.dropoutMask(seed, retainProbability, mask); });
}

void ProfilingBackend::multiply(const Tensor& x, const Tensor& y, Tensor& z) {
  timed(ProfilePhase::OTHER, 0, [&] { inner_.multiply(x, y, z); });
}

void ProfilingBackend::scale(Tensor& y, float a) {
  timed(ProfilePhase::OTHER, 0, [&] { inner_.scale(y, a); });
}

double ProfilingBackend::sumOfSquares(const Tensor& x) {
  return timed(ProfilePhase::OTHER, 0, [&] { return inner_.sumOfSquares(x); });
}

void ProfilingBackend::sumsOfSquares(const Tensor* xs, int64_t count, double* out) {
  timed(ProfilePhase::OTHER, 0, [&] { inner_.sumsOfSquares(xs, count, out); });
}

void ProfilingBackend::stageBatch(const Tensor& features, const Tensor& labels,
                                  Tensor& deviceFeatures, Tensor& deviceLabels) {
  timed(ProfilePhase::OTHER, 0,
        [&] { inner_.stageBatch(features, labels, deviceFeatures, deviceLabels); });
}

void ProfilingBackend::globalPoolingForward(PoolingKind kind, int pnorm, const Tensor& x,
                                            Tensor& y) {
  timed(ProfilePhase::FORWARD, 0, [&] { inner_.globalPoolingForward(kind, pnorm, x, y); });
}

void ProfilingBackend::globalPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x,
                                             const Tensor& y, const Tensor& dy, Tensor& dx) {
  timed(ProfilePhase::BACKWARD_DATA, 0,
        [&] { inner_.globalPoolingBackward(kind, pnorm, x, y, dy, dx); });
}

void ProfilingBackend::lrnForward(const LrnParams& p, const Tensor& x, Tensor& y, bool training,
                                  Tensor& workspace) {
  timed(ProfilePhase::FORWARD, 0, [&] { inner_.lrnForward(p, x, y, training, workspace); });
}

void ProfilingBackend::lrnBackward(const LrnParams& p, const Tensor& x, const Tensor& dy,
                                   Tensor& dx, const Tensor& workspace) {
  timed(ProfilePhase::BACKWARD_DATA, 0, [&] { inner_.lrnBackward(p, x, dy, dx, workspace); });
}

void ProfilingBackend::zeroPaddingForward(const Tensor& x, Tensor& y, const Padding2d& p) {
  timed(ProfilePhase::FORWARD, 0, [&] { inner_.zeroPaddingForward(x, y, p); });
}

void ProfilingBackend::zeroPaddingBackward(const Tensor& dy, Tensor& dx, const Padding2d& p) {
  timed(ProfilePhase::BACKWARD_DATA, 0, [&] { inner_.zeroPaddingBackward(dy, dx, p); });
}

void ProfilingBackend::copy(const Tensor& src, Tensor& dst) {
  timed(ProfilePhase::OTHER, 0, [&] { inner_.copy(src, dst); });
}

double ProfilingBackend::sumOfAbsolutes(const Tensor& x) {
  return timed(ProfilePhase::OTHER, 0, [&] { return inner_.sumOfAbsolutes(x); });
}

void ProfilingBackend::sumsOfAbsolutes(const Tensor* xs, int64_t count, double* out) {
  timed(ProfilePhase::OTHER, 0, [&] { inner_.sumsOfAbsolutes(xs, count, out); });
}

void ProfilingBackend::clipByValue(Tensor& y, float threshold) {
  timed(ProfilePhase::OTHER, 0, [&] { inner_.clipByValue(y, threshold); });
}

}  // namespace dl4cpp
