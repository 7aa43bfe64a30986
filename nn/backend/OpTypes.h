#pragma once
// Plain descriptions of ops, shared by every backend and by the layers that call them.
#include <cstdint>

namespace dl4cpp {

// Element-wise activations (DL4J's Activation enum). SOFTMAX is row-wise over dimension 1.
enum class ActivationKind { IDENTITY, RELU, LEAKYRELU, TANH, SIGMOID, SOFTMAX };

// DL4J's LossFunctions.LossFunction values that dl4cpp implements.
enum class LossKind { NEGATIVELOGLIKELIHOOD, MCXENT, MSE, XENT };

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

}  // namespace dl4cpp
