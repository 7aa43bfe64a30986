#include <dl4cpp/nn/conf/Enums.h>

namespace dl4cpp {

std::string toString(ActivationKind a) {
  switch (a) {
    case ActivationKind::IDENTITY:
      return "IDENTITY";
    case ActivationKind::RELU:
      return "RELU";
    case ActivationKind::LEAKYRELU:
      return "LEAKYRELU";
    case ActivationKind::TANH:
      return "TANH";
    case ActivationKind::SIGMOID:
      return "SIGMOID";
    case ActivationKind::SOFTMAX:
      return "SOFTMAX";
  }
  return "?";
}

std::string toString(LossKind l) {
  switch (l) {
    case LossKind::NEGATIVELOGLIKELIHOOD:
      return "NEGATIVELOGLIKELIHOOD";
    case LossKind::MCXENT:
      return "MCXENT";
    case LossKind::MSE:
      return "MSE";
    case LossKind::XENT:
      return "XENT";
  }
  return "?";
}

std::string toString(PoolingKind p) { return p == PoolingKind::MAX ? "MAX" : "AVG"; }

std::string toString(ConvolutionMode m) {
  switch (m) {
    case ConvolutionMode::Truncate:
      return "Truncate";
    case ConvolutionMode::Same:
      return "Same";
    case ConvolutionMode::Strict:
      return "Strict";
  }
  return "?";
}

std::string toString(WeightInit w) {
  switch (w) {
    case WeightInit::XAVIER:
      return "XAVIER";
    case WeightInit::XAVIER_UNIFORM:
      return "XAVIER_UNIFORM";
    case WeightInit::RELU:
      return "RELU";
    case WeightInit::RELU_UNIFORM:
      return "RELU_UNIFORM";
    case WeightInit::ZERO:
      return "ZERO";
    case WeightInit::NORMAL:
      return "NORMAL";
    case WeightInit::UNIFORM:
      return "UNIFORM";
  }
  return "?";
}

}  // namespace dl4cpp
