#pragma once
// The element-wise and flat-buffer family: activations (softmax included), losses, updater steps,
// reductions over buffers, and data movement (copies, zero padding, input staging).
// ElementwiseImpl is what a device implements (cpu/CpuElementwise.cpp, cuda/CudaElementwise.cu);
// ElementwiseOps is what layers, updaters and the network call, through Backend.
#include <cstdint>

#include "nn/backend/OpTypes.h"
#include "nn/backend/ops/OpDispatch.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

class ElementwiseImpl {
 public:
  virtual ~ElementwiseImpl() = default;

  // y = f(x); y may alias x (in place). `alpha` is LEAKYRELU's negative slope. SOFTMAX is over
  // dimension 1 of a tensor of rank 2 or more.
  virtual void activationForward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) = 0;
  // dx = f'(x) * dy. Computed from the output y = f(x), except for the activations whose
  // activationBackwardNeedsInput(kind) (OpTypes.h): those read x, which the caller keeps from the
  // forward pass (layers::LayerActivation); for every other activation x is not read and may be
  // empty. dx may alias dy.
  virtual void activationBackward(ActivationKind kind, float alpha, const Tensor& x,
                                  const Tensor& y, const Tensor& dy, Tensor& dx) = 0;

  // For an output layer whose activation produced y (N, K) from pre-activations z: writes dz =
  // dL/dz (for the summed, not averaged, loss) and returns the summed per-example loss. z is read
  // as activationBackward reads x (only where activationBackwardNeedsInput, else it may be empty).
  // Fuses softmax with NLL/MCXENT and sigmoid with XENT for stability.
  virtual double lossForwardBackward(LossKind loss, ActivationKind activation, float alpha,
                                     const Tensor& z, const Tensor& y, const Tensor& labels,
                                     Tensor& dz) = 0;
  // The summed per-example loss only (for score() without a backward pass).
  virtual double lossScore(LossKind loss, const Tensor& y, const Tensor& labels) = 0;

  // One updater step over a contiguous segment: first grad += l1 * sign(param) + l2 * param (when
  // either is nonzero), then the updater turns grad into an update using `state`
  // (stateSizePerParam() * numel floats, laid out as consecutive blocks of numel), weight decay
  // adds weightDecayFactor(u, r) * param to it, then param -= update. NOOP changes only grad.
  // `iteration` counts from 0.
  virtual void updaterStep(const UpdaterParams& u, const RegularizationParams& r, int64_t iteration,
                           Tensor& param, Tensor& grad, Tensor& state) = 0;
  // average = decay * average + (1 - decay) * value (running statistics).
  virtual void movingAverage(Tensor& average, const Tensor& value, float decay) = 0;
  // Inverted dropout's mask: mask[i] = 1 / p where element i is kept, else 0; element i is kept
  // with probability p by a counter-based draw of (seed, i) (CounterRandom.h), so a seed gives the
  // same mask on every device and with every thread count.
  virtual void dropoutMask(uint64_t seed, float retainProbability, Tensor& mask) = 0;
  // z = x * y element by element; z may alias x or y.
  virtual void multiply(const Tensor& x, const Tensor& y, Tensor& z) = 0;
  // y = a * y (scaling gradients by 1/batch).
  virtual void scale(Tensor& y, float a) = 0;
  // y = min(max(y, -threshold), threshold), NaN staying NaN (DL4J's
  // GradientNormalization.ClipElementWiseAbsoluteValue).
  virtual void clipByValue(Tensor& y, float threshold) = 0;

  // Sum of squares (for the L2 term of the score).
  virtual double sumOfSquares(const Tensor& x) = 0;
  // out[i] = sumOfSquares(xs[i]) for i < count. The same numbers as one call each; a GPU backend
  // overrides it to wait for the device once for all of them (MultiLayerNetwork::fit asks for
  // the l2 terms and the gradient's finiteness check together).
  virtual void sumsOfSquares(const Tensor* xs, int64_t count, double* out) {
    for (int64_t i = 0; i < count; ++i) out[i] = sumOfSquares(xs[i]);
  }
  // Sum of absolute values (for the l1 term of the score).
  virtual double sumOfAbsolutes(const Tensor& x) = 0;
  // out[i] = sumOfAbsolutes(xs[i]) for i < count; a GPU backend waits for the device once.
  virtual void sumsOfAbsolutes(const Tensor* xs, int64_t count, double* out) {
    for (int64_t i = 0; i < count; ++i) out[i] = sumOfAbsolutes(xs[i]);
  }

  // y (N, C, H + top + bottom, W + left + right): x framed by zeros.
  virtual void zeroPaddingForward(const Tensor& x, Tensor& y, const Padding2d& p) = 0;
  // dx (N, C, H, W): the part of dy (N, C, H + top + bottom, W + left + right) inside the frame.
  virtual void zeroPaddingBackward(const Tensor& dy, Tensor& dx, const Padding2d& p) = 0;
  // dst = src (equal element counts), queued like any op (a Tensor::copyFrom waits for the device).
  virtual void copy(const Tensor& src, Tensor& dst) = 0;
  // Makes a minibatch's features and labels (host tensors from an iterator; labels may be empty)
  // available on this backend's device. The CPU backend hands them back as they are; the CUDA
  // backend copies them through pinned memory on a copy stream into one of two buffer sets, so
  // staging batch i+1 can overlap compute on batch i. The results stay valid until the
  // next-but-one call.
  virtual void stageBatch(const Tensor& features, const Tensor& labels, Tensor& deviceFeatures,
                          Tensor& deviceLabels) = 0;
};

class ElementwiseOps : protected OpFamily<ElementwiseImpl> {
 public:
  void activationForward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) {
    run(OpPhase::ACTIVATION_FORWARD, [&] { impl().activationForward(kind, alpha, x, y); });
  }
  void activationBackward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y,
                          const Tensor& dy, Tensor& dx) {
    run(OpPhase::ACTIVATION_BACKWARD,
        [&] { impl().activationBackward(kind, alpha, x, y, dy, dx); });
  }
  double lossForwardBackward(LossKind loss, ActivationKind activation, float alpha, const Tensor& z,
                             const Tensor& y, const Tensor& labels, Tensor& dz) {
    return run(OpPhase::LOSS, [&] {
      return impl().lossForwardBackward(loss, activation, alpha, z, y, labels, dz);
    });
  }
  double lossScore(LossKind loss, const Tensor& y, const Tensor& labels) {
    return run(OpPhase::LOSS, [&] { return impl().lossScore(loss, y, labels); });
  }
  void updaterStep(const UpdaterParams& u, const RegularizationParams& r, int64_t iteration,
                   Tensor& param, Tensor& grad, Tensor& state) {
    run(OpPhase::UPDATER, [&] { impl().updaterStep(u, r, iteration, param, grad, state); });
  }
  void movingAverage(Tensor& average, const Tensor& value, float decay) {
    run(OpPhase::OTHER, [&] { impl().movingAverage(average, value, decay); });
  }
  void dropoutMask(uint64_t seed, float retainProbability, Tensor& mask) {
    run(OpPhase::FORWARD, [&] { impl().dropoutMask(seed, retainProbability, mask); });
  }
  void multiply(const Tensor& x, const Tensor& y, Tensor& z) {
    run(OpPhase::OTHER, [&] { impl().multiply(x, y, z); });
  }
  void scale(Tensor& y, float a) {
    run(OpPhase::OTHER, [&] { impl().scale(y, a); });
  }
  void clipByValue(Tensor& y, float threshold) {
    run(OpPhase::OTHER, [&] { impl().clipByValue(y, threshold); });
  }
  double sumOfSquares(const Tensor& x) {
    return run(OpPhase::OTHER, [&] { return impl().sumOfSquares(x); });
  }
  void sumsOfSquares(const Tensor* xs, int64_t count, double* out) {
    run(OpPhase::OTHER, [&] { impl().sumsOfSquares(xs, count, out); });
  }
  double sumOfAbsolutes(const Tensor& x) {
    return run(OpPhase::OTHER, [&] { return impl().sumOfAbsolutes(x); });
  }
  void sumsOfAbsolutes(const Tensor* xs, int64_t count, double* out) {
    run(OpPhase::OTHER, [&] { impl().sumsOfAbsolutes(xs, count, out); });
  }
  void zeroPaddingForward(const Tensor& x, Tensor& y, const Padding2d& p) {
    run(OpPhase::FORWARD, [&] { impl().zeroPaddingForward(x, y, p); });
  }
  void zeroPaddingBackward(const Tensor& dy, Tensor& dx, const Padding2d& p) {
    run(OpPhase::BACKWARD_DATA, [&] { impl().zeroPaddingBackward(dy, dx, p); });
  }
  void copy(const Tensor& src, Tensor& dst) {
    run(OpPhase::OTHER, [&] { impl().copy(src, dst); });
  }
  void stageBatch(const Tensor& features, const Tensor& labels, Tensor& deviceFeatures,
                  Tensor& deviceLabels) {
    run(OpPhase::OTHER, [&] { impl().stageBatch(features, labels, deviceFeatures, deviceLabels); });
  }
};

}  // namespace dl4cpp
