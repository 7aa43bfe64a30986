#pragma once
// The op facade. Layers, updaters and the network call only these functions; each device kind
// implements all of them with the same signatures (cpu/ on oneDNN, cuda/ on cuBLAS + kernels).
// The choice of implementation is made once, when a DeviceContext is created (makeBackend in
// Backend.cpp), so no layer ever branches on the device. A backend may also compute runs of
// adjacent layers it recognises its own way: the network asks it for a plan once (LayerPlan.h).
//
// Conventions for every op:
//  - tensors are dense row-major float32 on the context's device; images are NCHW; convolution
//    weights are (nOut, nIn, kH, kW); inner-product weights are (nOut, nIn) (the same memory as
//    DL4J's (nIn, nOut) 'f'-order W), biases are (nOut);
//  - outputs are overwritten, never accumulated into, unless the name says Accumulate;
//  - shapes are checked by the layer that builds the call; a backend may assume them;
//  - an op may cache whatever it creates for a shape (oneDNN primitives, workspaces) inside the
//    backend, so calling it again with the same shapes allocates nothing.
#include <cstdint>
#include <memory>
#include <vector>

#include "nn/backend/LayerPlan.h"
#include "nn/backend/OpTypes.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

class Backend {
 public:
  virtual ~Backend() = default;

  // Apply the calling thread's parallelism settings (the OpenMP thread count for oneDNN and the
  // flat-buffer loops; the current device for CUDA) before ops run on this thread. numThreads 0
  // keeps the thread's current count.
  virtual void bindToCurrentThread(int numThreads) = 0;

  // --- Convolution: y = conv(x, W) + b ---------------------------------------------------------
  // x (N, C, H, W), w (O, C, kH, kW), b (O) or empty, y (N, O, outH, outW).
  virtual void convolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                                  const WindowGeometry& g) = 0;
  // dx = dL/dx from dy and w.
  virtual void convolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                       const WindowGeometry& g) = 0;
  // dw, db (db may be empty) = dL/dW, dL/db from x and dy.
  virtual void convolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                          const WindowGeometry& g) = 0;

  // --- Pooling -----------------------------------------------------------------------------------
  // x (N, C, H, W) -> y (N, C, outH, outW); kind is MAX or AVG (SubsamplingLayer refuses the
  // others). AVG divides by the window area excluding padding
  // (DL4J's default). `workspace` is the calling layer's private scratch: training-mode MAX
  // records its arg-max there for poolingBackward (the backend sizes it; it stays with the layer
  // so two layers of equal shape never share one).
  virtual void poolingForward(PoolingKind kind, const Tensor& x, Tensor& y, const WindowGeometry& g,
                              bool training, Tensor& workspace) = 0;
  // dx from dy; MAX reads the workspace its training-mode forward wrote.
  virtual void poolingBackward(PoolingKind kind, const Tensor& dy, Tensor& dx,
                               const WindowGeometry& g, const Tensor& workspace) = 0;

  // --- Layers run together (LayerPlan.h) -------------------------------------------------------
  // The steps this backend computes its own way, each over a run of adjacent layers it recognises
  // in `layers`, in layer order and without overlap; the network runs every other layer by itself.
  // Called by MultiLayerNetwork::init(). The default plans nothing.
  virtual std::vector<std::unique_ptr<NetworkStep>> planSteps(
      const std::vector<LayerDescription>& layers);
  // Runs `kernel`, the `pass` of a planned step, whose analytic FLOPs are `flops` (OpFlops.h): the
  // one op through which planned kernels run, so that a decorator sees them as it sees any op.
  virtual void runPlanned(OpPass pass, double flops, KernelRef kernel);

  // --- Batch normalisation -------------------------------------------------------------------
  // Per channel c of x (N, C, H, W), statistics over N, H and W; per feature c of x (N, C), over
  // N. gamma, beta, mean and variance are (C); variances are population variances.
  // Training: writes the batch's mean and variance and y = gamma (x - mean) / sqrt(var + eps) +
  // beta.
  virtual void batchNormForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                        float eps, Tensor& y, Tensor& batchMean,
                                        Tensor& batchVariance) = 0;
  // Inference: the same with the given (running) mean and variance.
  virtual void batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                         const Tensor& mean, const Tensor& variance, float eps,
                                         Tensor& y) = 0;
  // dx, dgamma, dbeta from x, dy, gamma and the batch statistics its training forward wrote; dx
  // may be empty when only dgamma and dbeta are wanted.
  virtual void batchNormBackward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                                 const Tensor& batchMean, const Tensor& batchVariance, float eps,
                                 Tensor& dx, Tensor& dgamma, Tensor& dbeta) = 0;

  // --- Inner product: y = x W^T + b --------------------------------------------------------------
  // x (N, nIn), w (nOut, nIn), b (nOut) or empty, y (N, nOut).
  virtual void innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                   Tensor& y) = 0;
  virtual void innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx) = 0;
  virtual void innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                           Tensor& db) = 0;

  // --- Activations -------------------------------------------------------------------------------
  // y = f(x); y may alias x (in place). `alpha` is LEAKYRELU's negative slope. SOFTMAX is over
  // dimension 1 of a tensor of rank 2 or more.
  virtual void activationForward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) = 0;
  // dx = f'(x) * dy. Computed from the output y = f(x), except for the activations whose
  // activationBackwardNeedsInput(kind) (OpTypes.h): those read x, which the caller keeps from the
  // forward pass (layers::LayerActivation); for every other activation x is not read and may be
  // empty. dx may alias dy.
  virtual void activationBackward(ActivationKind kind, float alpha, const Tensor& x,
                                  const Tensor& y, const Tensor& dy, Tensor& dx) = 0;

  // --- Loss --------------------------------------------------------------------------------------
  // For an output layer whose activation produced y (N, K) from pre-activations z: writes dz =
  // dL/dz (for the summed, not averaged, loss) and returns the summed per-example loss. z is read
  // as activationBackward reads x (only where activationBackwardNeedsInput, else it may be empty).
  // Fuses softmax with NLL/MCXENT and sigmoid with XENT for stability.
  virtual double lossForwardBackward(LossKind loss, ActivationKind activation, float alpha,
                                     const Tensor& z, const Tensor& y, const Tensor& labels,
                                     Tensor& dz) = 0;
  // The summed per-example loss only (for score() without a backward pass).
  virtual double lossScore(LossKind loss, const Tensor& y, const Tensor& labels) = 0;

  // --- Flat-buffer ops (parameters, gradients, updater state)
  // ------------------------------------- One updater step over a contiguous segment: first grad +=
  // l1 * sign(param) + l2 * param (when either is nonzero), then the updater turns grad into an
  // update using `state` (stateSizePerParam() * numel floats, laid out as consecutive blocks of
  // numel), weight decay adds weightDecayFactor(u, r) * param to it, then param -= update.
  // NOOP changes only grad. `iteration` counts from 0.
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
  // Sum of squares (for the L2 term of the score).
  virtual double sumOfSquares(const Tensor& x) = 0;
  // out[i] = sumOfSquares(xs[i]) for i < count. The same numbers as one call each; a GPU backend
  // overrides it to wait for the device once for all of them (MultiLayerNetwork::fit asks for
  // the l2 terms and the gradient's finiteness check together).
  virtual void sumsOfSquares(const Tensor* xs, int64_t count, double* out) {
    for (int64_t i = 0; i < count; ++i) out[i] = sumOfSquares(xs[i]);
  }

  // --- Input staging
  // --------------------------------------------------------------------------------- Makes a
  // minibatch's features and labels (host tensors from an iterator; labels may be empty) available
  // on this backend's device. The CPU backend hands them back as they are; the CUDA backend copies
  // them through pinned memory on a copy stream into one of two buffer sets, so staging batch i+1
  // can overlap compute on batch i. The results stay valid until the next-but-one call.
  virtual void stageBatch(const Tensor& features, const Tensor& labels, Tensor& deviceFeatures,
                          Tensor& deviceLabels) = 0;

  // --- Global pooling, local response normalisation, zero padding, copies ----------------------
  // x (N, C, H, W) -> y (N * C values, in (n, c) order): each (n, c) plane reduced by `kind`
  // (PNORM with exponent pnorm >= 1).
  virtual void globalPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, Tensor& y) = 0;
  // dx from dy and the forward pass's x and y: MAX routes each plane's dy to the plane's first
  // maximum, AVG spreads dy / (H * W), SUM copies dy, PNORM scales by x |x|^(p-2) / y^(p-1) (0
  // where y is 0).
  virtual void globalPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& y,
                                     const Tensor& dy, Tensor& dx) = 0;
  // x, y (N, C, H, W): LrnParams' normalisation. A training-mode pass records in `workspace`
  // (the calling layer's, sized by the backend) what lrnBackward reads.
  virtual void lrnForward(const LrnParams& p, const Tensor& x, Tensor& y, bool training,
                          Tensor& workspace) = 0;
  // dx from dy, the forward pass's x and its training-mode workspace.
  virtual void lrnBackward(const LrnParams& p, const Tensor& x, const Tensor& dy, Tensor& dx,
                           const Tensor& workspace) = 0;
  // y (N, C, H + top + bottom, W + left + right): x framed by zeros.
  virtual void zeroPaddingForward(const Tensor& x, Tensor& y, const Padding2d& p) = 0;
  // dx (N, C, H, W): the part of dy (N, C, H + top + bottom, W + left + right) inside the frame.
  virtual void zeroPaddingBackward(const Tensor& dy, Tensor& dx, const Padding2d& p) = 0;
  // dst = src (equal element counts), queued like any op (a Tensor::copyFrom waits for the device).
  virtual void copy(const Tensor& src, Tensor& dst) = 0;
  // --- Regularisation and gradient normalisation ------------------------------------------------
  // Sum of absolute values (for the l1 term of the score).
  virtual double sumOfAbsolutes(const Tensor& x) = 0;
  // out[i] = sumOfAbsolutes(xs[i]) for i < count; a GPU backend waits for the device once.
  virtual void sumsOfAbsolutes(const Tensor* xs, int64_t count, double* out) {
    for (int64_t i = 0; i < count; ++i) out[i] = sumOfAbsolutes(xs[i]);
  }
  // y = min(max(y, -threshold), threshold), NaN staying NaN (DL4J's
  // GradientNormalization.ClipElementWiseAbsoluteValue).
  virtual void clipByValue(Tensor& y, float threshold) = 0;
};

// Creates the backend for `device` (defined in Backend.cpp: the one place that picks it).
std::unique_ptr<Backend> makeBackend(Device device);

}  // namespace dl4cpp
