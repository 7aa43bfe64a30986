#pragma once
// The enums of a DL4J configuration, under DL4J's names. The op kinds they alias, and their names,
// are the backend's (OpTypes.h, OpNames.h): layers and kernels name them in messages too.
#include <string>

#include "nn/backend/OpNames.h"
#include "nn/backend/OpTypes.h"

namespace dl4cpp {

using Activation = ActivationKind;  // Activation::RELU, as DL4J's Activation.RELU
using LossFunction = LossKind;      // LossFunction::NEGATIVELOGLIKELIHOOD, ...
using PoolingType = PoolingKind;    // PoolingType::MAX, AVG, SUM, PNORM

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
  LECUN_NORMAL,    // N(0, 1 / sqrt(fanIn)): DL4J draws it as NORMAL
  LECUN_UNIFORM,   // U(-a, a), a = 3 / sqrt(fanIn) (DL4J's; LeCun's own bound is sqrt(3 / fanIn))
  XAVIER_FAN_IN,   // N(0, 1 / sqrt(fanIn)): DL4J draws it as NORMAL
  ONES,            // 1
};
// None of them is truncated in DL4J (its normals are Nd4j.randn scaled). A distribution with given
// parameters is a WeightInitScheme (WeightInitScheme.h).

inline constexpr EnumNames<ConvolutionMode, 3> kConvolutionModeNames{
    {{ConvolutionMode::Truncate, "Truncate"},
     {ConvolutionMode::Same, "Same"},
     {ConvolutionMode::Strict, "Strict"}}};
inline constexpr EnumNames<WeightInit, 11> kWeightInitNames{
    {{WeightInit::XAVIER, "XAVIER"},
     {WeightInit::XAVIER_UNIFORM, "XAVIER_UNIFORM"},
     {WeightInit::RELU, "RELU"},
     {WeightInit::RELU_UNIFORM, "RELU_UNIFORM"},
     {WeightInit::ZERO, "ZERO"},
     {WeightInit::NORMAL, "NORMAL"},
     {WeightInit::UNIFORM, "UNIFORM"},
     {WeightInit::LECUN_NORMAL, "LECUN_NORMAL"},
     {WeightInit::LECUN_UNIFORM, "LECUN_UNIFORM"},
     {WeightInit::XAVIER_FAN_IN, "XAVIER_FAN_IN"},
     {WeightInit::ONES, "ONES"}}};

// How fit back-propagates through sequences (DL4J's BackpropType).
//  Standard:      through every step of each batch.
//  TruncatedBPTT: each batch's time axis in segments of tBPTTForwardLength steps, one update per
//                 segment, the recurrent state carried from one segment to the next without a
//                 gradient across the boundary; back-propagation through the last
//                 tBPTTBackwardLength steps of each segment.
enum class BackpropType { Standard, TruncatedBPTT };
inline constexpr EnumNames<BackpropType, 2> kBackpropTypeNames{
    {{BackpropType::Standard, "Standard"}, {BackpropType::TruncatedBPTT, "TruncatedBPTT"}}};

// How data is reshaped before a layer (DL4J's InputPreProcessors, inserted where DL4J's
// setInputType inserts them). FeedForwardToCnn and CnnToFeedForward are views. The others move
// between sequences (N, C, T) and one row or image per time step (N*T rows, example by example):
// RnnToFeedForward before a feed-forward layer that receives sequences, FeedForwardToRnn and
// CnnToRnn before a recurrent layer that receives such rows or images, RnnToCnn only where asked
// for (ListBuilder::inputPreProcessor with an RnnToCnnPreProcessor, which knows the image shape).
enum class InputPreProcessor {
  None,
  FeedForwardToCnn,
  CnnToFeedForward,
  RnnToFeedForward,
  FeedForwardToRnn,
  CnnToRnn,
  RnnToCnn
};
inline constexpr EnumNames<InputPreProcessor, 7> kInputPreProcessorNames{
    {{InputPreProcessor::None, "None"},
     {InputPreProcessor::FeedForwardToCnn, "FeedForwardToCnn"},
     {InputPreProcessor::CnnToFeedForward, "CnnToFeedForward"},
     {InputPreProcessor::RnnToFeedForward, "RnnToFeedForward"},
     {InputPreProcessor::FeedForwardToRnn, "FeedForwardToRnn"},
     {InputPreProcessor::CnnToRnn, "CnnToRnn"},
     {InputPreProcessor::RnnToCnn, "RnnToCnn"}}};

// Whether `p` reorders values (between sequences and rows per time step) rather than viewing them.
inline bool reordersValues(InputPreProcessor p) {
  return p == InputPreProcessor::RnnToFeedForward || p == InputPreProcessor::FeedForwardToRnn ||
         p == InputPreProcessor::CnnToRnn || p == InputPreProcessor::RnnToCnn;
}

inline std::string toString(ConvolutionMode m) { return nameOf(kConvolutionModeNames, m); }
inline std::string toString(BackpropType t) { return nameOf(kBackpropTypeNames, t); }
inline std::string toString(WeightInit w) { return nameOf(kWeightInitNames, w); }
inline std::string toString(InputPreProcessor p) { return nameOf(kInputPreProcessorNames, p); }

// How a layer's gradient is normalised or clipped before regularisation and the updater (DL4J's
// GradientNormalization; t = gradientNormalizationThreshold, ||.|| the L2 norm):
//  None
//  RenormalizeL2PerLayer:        g /= ||layer's gradient||  (1e-5 for a zero norm)
//  RenormalizeL2PerParamType:    each parameter's g /= ||g|| (weights, biases separately)
//  ClipElementWiseAbsoluteValue: g = clamp(g, -t, t)
//  ClipL2PerLayer:               g *= t / ||layer's gradient|| when that norm exceeds t
//  ClipL2PerParamType:           each parameter's g *= t / ||g|| when ||g|| exceeds t
enum class GradientNormalization {
  None,
  RenormalizeL2PerLayer,
  RenormalizeL2PerParamType,
  ClipElementWiseAbsoluteValue,
  ClipL2PerLayer,
  ClipL2PerParamType,
};

inline constexpr EnumNames<GradientNormalization, 6> kGradientNormalizationNames{
    {{GradientNormalization::None, "None"},
     {GradientNormalization::RenormalizeL2PerLayer, "RenormalizeL2PerLayer"},
     {GradientNormalization::RenormalizeL2PerParamType, "RenormalizeL2PerParamType"},
     {GradientNormalization::ClipElementWiseAbsoluteValue, "ClipElementWiseAbsoluteValue"},
     {GradientNormalization::ClipL2PerLayer, "ClipL2PerLayer"},
     {GradientNormalization::ClipL2PerParamType, "ClipL2PerParamType"}}};

inline std::string toString(GradientNormalization g) {
  return nameOf(kGradientNormalizationNames, g);
}

}  // namespace dl4cpp
