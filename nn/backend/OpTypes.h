#pragma once
// Plain descriptions of ops, shared by every backend and by the layers that call them.
#include <cstdint>

namespace dl4cpp {

// Element-wise activations (DL4J's Activation enum). SOFTMAX is row-wise over dimension 1.
enum class ActivationKind {
  IDENTITY,
  RELU,
  LEAKYRELU,
  TANH,
  SIGMOID,
  SOFTMAX,
  // With DL4J's definitions and defaults (sigma is the logistic sigmoid):
  ELU,           // x > 0 ? x : e^x - 1 (DL4J's Activation.ELU: alpha 1)
  SELU,          // lambda * (x > 0 ? x : alpha (e^x - 1)), DL4J's lambda and alpha below
  GELU,          // x sigma(1.702 x): DL4J's ActivationGELU default (its "not precise" form)
  GELU_PRECISE,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): DL4J's ActivationGELU(true),
                 // as published (DL4J's PreciseGELU op cubes 0.044715 x instead of x)
  SWISH,         // x sigma(x)
  SOFTPLUS,      // log(1 + e^x)
  HARDTANH,      // min(max(x, -1), 1)
  HARDSIGMOID,   // min(max(0.2 x + 0.5, 0), 1)
  RELU6,         // min(max(x, 0), 6)
};

// SELU's constants (Klambauer et al. 2017, as DL4J's SELU op spells them).
inline constexpr double kSeluLambda = 1.0507009873554804934193349852946;
inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

// Whether an activation's backward pass reads its input x rather than its output y: true where
// f' is no function of y (SWISH and both GELUs are not monotonic), and for SOFTPLUS, whose
// f'(x) = sigma(x) would be 1 - e^-y, an exp the CPU backend can vectorise only from x (oneDNN's
// soft_relu backward). Every other activation's backward reads only y.
constexpr bool activationBackwardNeedsInput(ActivationKind kind) {
  return kind == ActivationKind::GELU || kind == ActivationKind::GELU_PRECISE ||
         kind == ActivationKind::SWISH || kind == ActivationKind::SOFTPLUS;
}

// DL4J's LossFunctions.LossFunction values that dl4cpp implements. Per example, summed over the K
// outputs (y: the output, l: the label):
enum class LossKind {
  NEGATIVELOGLIKELIHOOD,
  MCXENT,
  MSE,
  XENT,
  MEAN_ABSOLUTE_ERROR,  // sum |y - l| / K (DL4J's LossMAE)
  L1,                   // sum |y - l| (LossL1)
  L2,                   // sum (y - l)^2 (LossL2)
  HINGE,                // sum max(0, 1 - l y), labels -1 or +1 (LossHinge; a 0 label, used as
                        // it is as in DL4J, adds a constant 1 and no gradient)
  SQUARED_HINGE,        // sum max(0, 1 - l y)^2, labels -1 or +1 (LossSquaredHinge)
  KL_DIVERGENCE,        // sum l' log(l' / y'), l' and y' clipped to [1e-5, 1] (LossKLD)
};

// Whether a loss divides its per-example sum by the number of outputs K (MSE, MEAN_ABSOLUTE_ERROR).
constexpr bool lossAveragesOutputs(LossKind loss) {
  return loss == LossKind::MSE || loss == LossKind::MEAN_ABSOLUTE_ERROR;
}

enum class PoolingKind { MAX, AVG };

// The pass of a layer an op belongs to (what Backend::runPlanned says of a planned step's kernel).
enum class OpPass { FORWARD, BACKWARD_DATA, BACKWARD_WEIGHTS };

// 2-D window geometry for convolution and pooling. Padding may be asymmetric (ConvolutionMode
// Same pads bottom/right by one more than top/left when the total is odd, as DL4J and TF do).
struct WindowGeometry {
  int64_t kernelH = 1, kernelW = 1;
  int64_t strideH = 1, strideW = 1;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int64_t dilationH = 1, dilationW = 1;

  // Output extent along one axis for input extent `in`.
  static int64_t outExtent(int64_t in, int64_t k, int64_t s, int64_t padBefore, int64_t padAfter,
                           int64_t d) {
    return (in + padBefore + padAfter - (d * (k - 1) + 1)) / s + 1;
  }
  int64_t outH(int64_t inH) const {
    return outExtent(inH, kernelH, strideH, padTop, padBottom, dilationH);
  }
  int64_t outW(int64_t inW) const {
    return outExtent(inW, kernelW, strideW, padLeft, padRight, dilationW);
  }
};

// Hyperparameters of one updater step; which fields are used depends on `kind`.
enum class UpdaterKind { SGD, NESTEROVS, ADAM, RMSPROP, NOOP };

struct UpdaterParams {
  UpdaterKind kind = UpdaterKind::SGD;
  double learningRate = 1e-3;
  double momentum = 0.9;   // Nesterovs
  double beta1 = 0.9;      // Adam
  double beta2 = 0.999;    // Adam
  double rmsDecay = 0.95;  // RmsProp
  double epsilon = 1e-8;   // Adam, RmsProp

  // Floats of updater state per parameter.
  int stateSizePerParam() const {
    switch (kind) {
      case UpdaterKind::NESTEROVS:
        return 1;  // velocity
      case UpdaterKind::ADAM:
        return 2;  // m, then v
      case UpdaterKind::RMSPROP:
        return 1;  // running mean of g^2
      case UpdaterKind::SGD:
      case UpdaterKind::NOOP:
        return 0;
    }
    return 0;
  }
};

}  // namespace dl4cpp
