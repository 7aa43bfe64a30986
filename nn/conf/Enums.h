#pragma once
// The enums of a DL4J configuration, under DL4J's names.
#include <dl4cpp/nn/backend/OpTypes.h>

#include <string>

namespace dl4cpp {

using Activation = ActivationKind;  // Activation::RELU, as DL4J's Activation.RELU
using LossFunction = LossKind;      // LossFunction::NEGATIVELOGLIKELIHOOD, ...
using PoolingType = PoolingKind;    // PoolingType::MAX, PoolingType::AVG

// How a convolution or pooling window treats the border (DL4J's ConvolutionMode).
//  Truncate: out = floor((in + 2p - k) / s) + 1; input that does not fit a window is dropped.
//  Same:     out = ceil(in / s); padding computed (asymmetric when odd) so every input is covered.
//  Strict:   like Truncate, but a configuration where the windows do not tile exactly is an error.
enum class ConvolutionMode { Truncate, Same, Strict };

// Weight initialisation schemes (DL4J's WeightInit); fanIn/fanOut as DL4J computes them.
enum class WeightInit {
  XAVIER,          // N(0, sqrt(2 / (fanIn + fanOut)))
  XAVIER_UNIFORM,  // U(-s, s), s = sqrt(6 / (fanIn + fanOut))
  RELU,            // N(0, sqrt(2 / fanIn))  (He)
  RELU_UNIFORM,    // U(-s, s), s = sqrt(6 / fanIn)
  ZERO,            // 0
  NORMAL,          // N(0, 1 / sqrt(fanIn))
  UNIFORM,         // U(-a, a), a = 1 / sqrt(fanIn)
};

std::string toString(ActivationKind a);
std::string toString(LossKind l);
std::string toString(PoolingKind p);
std::string toString(ConvolutionMode m);
std::string toString(WeightInit w);

}  // namespace dl4cpp
