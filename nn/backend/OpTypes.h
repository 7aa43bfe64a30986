#pragma once
// Plain descriptions of ops, shared by every backend and by the layers that call them.
#include <cmath>
#include <cstdint>
#include <memory>

namespace dl4cpp {

// Element-wise activations (DL4J's Activation enum, and LOGSOFTMAX). SOFTMAX and LOGSOFTMAX are
// row-wise over dimension 1.
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
  LOGSOFTMAX,    // log(SOFTMAX(x)) = x - max - log(sum e^(x - max)), row-wise as SOFTMAX
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

// SubsamplingLayer takes MAX and AVG; GlobalPoolingLayer every kind. PNORM is
// (sum |x|^p)^(1/p) (DL4J's, without a division by the count).
enum class PoolingKind { MAX, AVG, SUM, PNORM };

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
  // Stride and dilation 1, no padding: every output's window lies inside the input, one step on.
  bool plain() const {
    return strideH == 1 && strideW == 1 && dilationH == 1 && dilationW == 1 && padTop == 0 &&
           padLeft == 0 && padBottom == 0 && padRight == 0;
  }
};

// Hyperparameters of one updater step; which fields are used depends on `kind`.
enum class UpdaterKind {
  SGD,
  NESTEROVS,
  ADAM,
  RMSPROP,
  NOOP,
  ADAGRAD,
  ADADELTA,
  ADAMAX,
  NADAM,
  AMSGRAD
};

// ND4J's AdaGradUpdater starts its sum of squared gradients at this value (its
// DEFAULT_ADAGRAD_EPSILON, whatever epsilon the AdaGrad is configured with).
inline constexpr double kAdaGradInitialHistory = 1e-6;

class Schedule;  // nn/updaters/Schedules.h

struct UpdaterParams {
  UpdaterKind kind = UpdaterKind::SGD;
  double learningRate = 1e-3;
  double momentum = 0.9;   // Nesterovs
  double beta1 = 0.9;      // Adam, AdaMax, Nadam, AMSGrad
  double beta2 = 0.999;    // Adam, AdaMax, Nadam, AMSGrad
  double rmsDecay = 0.95;  // RmsProp
  double epsilon = 1e-8;   // Adam, RmsProp, AdaGrad, AdaDelta, Nadam, AMSGrad
  double rho = 0.95;       // AdaDelta
  // DL4J's learningRateSchedule (every updater with a learning rate) and momentumSchedule
  // (Nesterovs); null: the value above throughout. The network sets learningRate and momentum from
  // them before each step (setScheduledValues in nn/updaters/Updaters.h), so backends read only
  // the values.
  std::shared_ptr<const Schedule> learningRateSchedule;
  std::shared_ptr<const Schedule> momentumSchedule;

  // Floats of updater state per parameter (ND4J's stateSize / numParams), laid out as that many
  // consecutive blocks, in ND4J's order.
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
      case UpdaterKind::ADAGRAD:
        return 1;                  // sum of g^2
      case UpdaterKind::ADADELTA:  // running mean of g^2, then of update^2
      case UpdaterKind::ADAMAX:    // m, then u (the decayed infinity norm)
      case UpdaterKind::NADAM:     // m, then v
        return 2;
      case UpdaterKind::AMSGRAD:
        return 3;  // m, v, then vHat (the running maximum of v)
    }
    return 0;
  }
  // The value every state float starts at (init(), or a model loaded without its updater state).
  double initialStateValue() const {
    return kind == UpdaterKind::ADAGRAD ? kAdaGradInitialHistory : 0.0;
  }
  // DL4J's IUpdater.hasLearningRate(): AdaDelta's steps have no learning rate (and NoOp none).
  bool hasLearningRate() const {
    return kind != UpdaterKind::ADADELTA && kind != UpdaterKind::NOOP;
  }
};

// Local response normalisation across channels, with DL4J's definition: for channel c,
// y = x * (k + alpha * sum of x^2 over the `depth` channels centred on c)^-beta, the window clipped
// at the first and last channel. alpha is not divided by the window size (oneDNN and cuDNN divide
// it). depth is odd.
struct LrnParams {
  int64_t depth = 5;
  float k = 2, alpha = 1e-4f, beta = 0.75f;
};

// Zeros added around each (n, c) plane of an image: rows above and below, columns left and right.
struct Padding2d {
  int64_t top = 0, bottom = 0, left = 0, right = 0;
};

// How one parameter segment is regularised (DL4J's L1Regularization, L2Regularization and
// WeightDecay, in the order DL4J's UpdaterBlock applies them): l1 and l2 are added to the gradient
// before the updater, weight decay to the update after it.
struct RegularizationParams {
  double l1 = 0;                   // grad += l1 * sign(param)
  double l2 = 0;                   // grad += l2 * param
  double weightDecay = 0;          // update += weightDecay * (lr when applyLR, else 1) * param
  bool weightDecayApplyLR = true;  // lr: the updater's, 1 for one without (AdaDelta)
};

// The per-iteration constants of the Adam family's steps (t = iteration + 1), formed in double
// as DL4J does, for every backend. Adam and AMSGrad step by lr sqrt(1 - b2^t) / (1 - b1^t) times
// m' / (sqrt(v') + eps); AdaMax by lr / (1 - b1^t) times m' / u'; Nadam by
// (nadamMomentumScale m' + nadamGradientScale g) / (sqrt(v') + eps).
inline double oneMinusPower(double beta, int64_t iteration) {
  return 1.0 - std::pow(beta, static_cast<double>(iteration + 1));
}
inline double adamStepSize(const UpdaterParams& u, int64_t iteration) {
  return u.learningRate * std::sqrt(oneMinusPower(u.beta2, iteration)) /
         oneMinusPower(u.beta1, iteration);
}
inline double adaMaxStepSize(const UpdaterParams& u, int64_t iteration) {
  return u.learningRate / oneMinusPower(u.beta1, iteration);
}
inline double nadamMomentumScale(const UpdaterParams& u, int64_t iteration) {
  return u.learningRate * u.beta1 / oneMinusPower(u.beta1, iteration);
}
inline double nadamGradientScale(const UpdaterParams& u, int64_t iteration) {
  return u.learningRate * (1.0 - u.beta1) / oneMinusPower(u.beta1, iteration);
}

// The multiple of the parameter that weight decay adds to the update (0: none).
inline double weightDecayFactor(const UpdaterParams& u, const RegularizationParams& r) {
  if (r.weightDecay == 0 || u.kind == UpdaterKind::NOOP) return 0;
  return r.weightDecayApplyLR && u.hasLearningRate() ? r.weightDecay * u.learningRate
                                                     : r.weightDecay;
}

}  // namespace dl4cpp
