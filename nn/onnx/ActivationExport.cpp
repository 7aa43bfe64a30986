#include "nn/onnx/ActivationExport.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "nn/backend/OpTypes.h"
#include "nn/core/Error.h"

namespace dl4cpp::onnx {

namespace {

// Clip's bounds are inputs (scalars) since opset 11.
std::string clip(GraphWriter& g, const std::string& x, float lo, float hi,
                 const std::string& base) {
  return g.node("Clip", {x, g.scalar(base + "_min", lo), g.scalar(base + "_max", hi)}, base);
}

// x * sigmoid(scale * x)
std::string timesSigmoid(GraphWriter& g, const std::string& x, float scale,
                         const std::string& base) {
  std::string arg = x;
  if (scale != 1.0f) arg = g.node("Mul", {x, g.scalar(base + "_scale", scale)}, base + "_scaled");
  return g.node("Mul", {x, g.node("Sigmoid", {arg}, base + "_sigmoid")}, base);
}

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
std::string geluPrecise(GraphWriter& g, const std::string& x, const std::string& base) {
  const auto c = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
  const std::string cube = g.node("Mul", {x, g.node("Mul", {x, x}, base + "_sq")}, base + "_cube");
  const std::string inner =
      g.node("Add", {x, g.node("Mul", {cube, g.scalar(base + "_k", 0.044715f)}, base + "_kx3")},
             base + "_inner");
  const std::string t = g.node(
      "Tanh", {g.node("Mul", {inner, g.scalar(base + "_c", c)}, base + "_arg")}, base + "_tanh");
  const std::string onePlus = g.node("Add", {t, g.scalar(base + "_one", 1.0f)}, base + "_1pt");
  const std::string half = g.node("Mul", {x, g.scalar(base + "_half", 0.5f)}, base + "_halfx");
  return g.node("Mul", {half, onePlus}, base);
}

}  // namespace

std::string exportActivation(GraphWriter& g, Activation activation, float leakyReluAlpha,
                             const std::string& x, const std::string& base) {
  switch (activation) {
    case Activation::IDENTITY:
      return x;
    case Activation::RELU:
      return g.node("Relu", {x}, base);
    case Activation::LEAKYRELU:
      return g.node("LeakyRelu", {x}, base, {Attr::real("alpha", leakyReluAlpha)});
    case Activation::TANH:
      return g.node("Tanh", {x}, base);
    case Activation::SIGMOID:
      return g.node("Sigmoid", {x}, base);
    case Activation::SOFTMAX:
      return g.node("Softmax", {x}, base, {Attr::integer("axis", 1)});
    case Activation::LOGSOFTMAX:
      return g.node("LogSoftmax", {x}, base, {Attr::integer("axis", 1)});
    case Activation::ELU:
      return g.node("Elu", {x}, base, {Attr::real("alpha", 1.0f)});
    case Activation::SELU:
      return g.node("Selu", {x}, base,
                    {Attr::real("alpha", static_cast<float>(kSeluAlpha)),
                     Attr::real("gamma", static_cast<float>(kSeluLambda))});
    case Activation::GELU:
      return timesSigmoid(g, x, 1.702f, base);
    case Activation::GELU_PRECISE:
      return geluPrecise(g, x, base);
    case Activation::SWISH:
      return timesSigmoid(g, x, 1.0f, base);
    case Activation::SOFTPLUS:
      return g.node("Softplus", {x}, base);
    case Activation::HARDTANH:
      return clip(g, x, -1.0f, 1.0f, base);
    case Activation::HARDSIGMOID:
      return g.node("HardSigmoid", {x}, base,
                    {Attr::real("alpha", 0.2f), Attr::real("beta", 0.5f)});
    case Activation::RELU6:
      return clip(g, x, 0.0f, 6.0f, base);
  }
  throw ModelExchangeError(
      fmt::format("ONNX export: {}: activation number {} is not one dl4cpp knows", base,
                  static_cast<int>(activation)));
}

}  // namespace dl4cpp::onnx
