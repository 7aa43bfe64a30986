#pragma once
// The names of the op kinds (OpTypes.h), as configurations, model files and messages spell them
// (DL4J's names), and the table type every enum's names use (nn/conf/Enums.h has the rest).
#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "nn/backend/OpTypes.h"

namespace dl4cpp {

// The names of an enum's values, as configurations and model files spell them (DL4J's names).
template <typename E, size_t N>
using EnumNames = std::array<std::pair<E, const char*>, N>;

// The name of `value` in `names` ("?" for a value the table lacks).
template <typename E, size_t N>
constexpr const char* nameOf(const EnumNames<E, N>& names, E value) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return "?";
}

inline constexpr EnumNames<ActivationKind, 16> kActivationNames{
    {{ActivationKind::IDENTITY, "IDENTITY"},
     {ActivationKind::RELU, "RELU"},
     {ActivationKind::LEAKYRELU, "LEAKYRELU"},
     {ActivationKind::TANH, "TANH"},
     {ActivationKind::SIGMOID, "SIGMOID"},
     {ActivationKind::SOFTMAX, "SOFTMAX"},
     {ActivationKind::ELU, "ELU"},
     {ActivationKind::SELU, "SELU"},
     {ActivationKind::GELU, "GELU"},
     {ActivationKind::GELU_PRECISE, "GELU_PRECISE"},
     {ActivationKind::SWISH, "SWISH"},
     {ActivationKind::SOFTPLUS, "SOFTPLUS"},
     {ActivationKind::HARDTANH, "HARDTANH"},
     {ActivationKind::HARDSIGMOID, "HARDSIGMOID"},
     {ActivationKind::RELU6, "RELU6"},
     {ActivationKind::LOGSOFTMAX, "LOGSOFTMAX"}}};
inline constexpr EnumNames<LossKind, 10> kLossNames{
    {{LossKind::NEGATIVELOGLIKELIHOOD, "NEGATIVELOGLIKELIHOOD"},
     {LossKind::MCXENT, "MCXENT"},
     {LossKind::MSE, "MSE"},
     {LossKind::XENT, "XENT"},
     {LossKind::MEAN_ABSOLUTE_ERROR, "MEAN_ABSOLUTE_ERROR"},
     {LossKind::L1, "L1"},
     {LossKind::L2, "L2"},
     {LossKind::HINGE, "HINGE"},
     {LossKind::SQUARED_HINGE, "SQUARED_HINGE"},
     {LossKind::KL_DIVERGENCE, "KL_DIVERGENCE"}}};
inline constexpr EnumNames<PoolingKind, 4> kPoolingNames{{{PoolingKind::MAX, "MAX"},
                                                          {PoolingKind::AVG, "AVG"},
                                                          {PoolingKind::SUM, "SUM"},
                                                          {PoolingKind::PNORM, "PNORM"}}};
inline std::string toString(ActivationKind a) { return nameOf(kActivationNames, a); }
inline std::string toString(LossKind l) { return nameOf(kLossNames, l); }
inline std::string toString(PoolingKind p) { return nameOf(kPoolingNames, p); }

}  // namespace dl4cpp
