#pragma once
// ProfilingBackend: a Backend decorator that times every op of the backend it wraps and charges
// it to a LayerProfiler (the current layer, the op's phase, its analytic FLOPs). It changes no
// result: every call is forwarded unchanged. DeviceContext::setProfiler installs it; without a
// profiler the context calls its backend directly, so profiling costs nothing when off.
//
// Times are wall-clock around each call. That is the op's cost on the CPU backend, whose ops
// complete before returning; an asynchronous backend would need to synchronise per op.
#include <memory>

#include "nn/backend/Backend.h"
#include "nn/profiling/LayerProfiler.h"

namespace dl4cpp {

class ProfilingBackend final : public Backend {
 public:
  // `inner` must outlive this decorator (DeviceContext owns both).
  ProfilingBackend(Backend& inner, std::shared_ptr<LayerProfiler> profiler);

  LayerProfiler& profiler() { return *profiler_; }

  void bindToCurrentThread(int numThreads) override;
  void convolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                          const WindowGeometry& g) override;
  void convolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                               const WindowGeometry& g) override;
  void convolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                  const WindowGeometry& g) override;
  void poolingForward(PoolingKind kind, const Tensor& x, Tensor& y, const WindowGeometry& g,
                      bool training, Tensor& workspace) override;
  void poolingBackward(PoolingKind kind, const Tensor& dy, Tensor& dx, const WindowGeometry& g,
                       const Tensor& workspace) override;
  std::vector<std::unique_ptr<NetworkStep>> planSteps(
      const std::vector<LayerDescription>& layers) override;
  void runPlanned(OpPass pass, double flops, KernelRef kernel) override;
  void innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y) override;
  void innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx) override;
  void innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                   Tensor& db) override;
  void activationForward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) override;
  void activationBackward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y,
                          const Tensor& dy, Tensor& dx) override;
  double lossForwardBackward(LossKind loss, ActivationKind activation, float alpha, const Tensor& z,
                             const Tensor& y, const Tensor& labels, Tensor& dz) override;
  double lossScore(LossKind loss, const Tensor& y, const Tensor& labels) override;
  void batchNormForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                                Tensor& y, Tensor& batchMean, Tensor& batchVariance) override;
  void batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 const Tensor& mean, const Tensor& variance, float eps,
                                 Tensor& y) override;
  void batchNormBackward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                         const Tensor& batchMean, const Tensor& batchVariance, float eps,
                         Tensor& dx, Tensor& dgamma, Tensor& dbeta) override;
  void movingAverage(Tensor& average, const Tensor& value, float decay) override;
  void dropoutMask(uint64_t seed, float retainProbability, Tensor& mask) override;
  void multiply(const Tensor& x, const Tensor& y, Tensor& z) override;
  void updaterStep(const UpdaterParams& u, const RegularizationParams& r, int64_t iteration,
                   Tensor& param, Tensor& grad, Tensor& state) override;
  void scale(Tensor& y, float a) override;
  double sumOfSquares(const Tensor& x) override;
  void sumsOfSquares(const Tensor* xs, int64_t count, double* out) override;
  void stageBatch(const Tensor& features, const Tensor& labels, Tensor& deviceFeatures,
                  Tensor& deviceLabels) override;
  void globalPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, Tensor& y) override;
  void globalPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& y,
                             const Tensor& dy, Tensor& dx) override;
  void lrnForward(const LrnParams& p, const Tensor& x, Tensor& y, bool training,
                  Tensor& workspace) override;
  void lrnBackward(const LrnParams& p, const Tensor& x, const Tensor& dy, Tensor& dx,
                   const Tensor& workspace) override;
  void zeroPaddingForward(const Tensor& x, Tensor& y, const Padding2d& p) override;
  void zeroPaddingBackward(const Tensor& dy, Tensor& dx, const Padding2d& p) override;
  void copy(const Tensor& src, Tensor& dst) override;
  double sumOfAbsolutes(const Tensor& x) override;
  void sumsOfAbsolutes(const Tensor* xs, int64_t count, double* out) override;
  void clipByValue(Tensor& y, float threshold) override;

 private:
  // Runs `op`, charging its wall time and `flops` to `phase`; returns what `op` returns.
  template <typename Op>
  auto timed(ProfilePhase phase, double flops, Op&& op);

  Backend& inner_;
  std::shared_ptr<LayerProfiler> profiler_;
};

}  // namespace dl4cpp
