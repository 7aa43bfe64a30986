#include "nn/onnx/LayerExport.h"

#include <fmt/format.h>

#include <vector>

#include "nn/conf/layers/ActivationLayer.h"
#include "nn/conf/layers/BatchNormalization.h"
#include "nn/conf/layers/ConvolutionLayer.h"
#include "nn/conf/layers/DenseLayer.h"
#include "nn/conf/layers/DropoutLayer.h"
#include "nn/conf/layers/GlobalPoolingLayer.h"
#include "nn/conf/layers/LocalResponseNormalization.h"
#include "nn/conf/layers/LossLayer.h"
#include "nn/conf/layers/OutputLayer.h"
#include "nn/conf/layers/RnnOutputLayer.h"
#include "nn/conf/layers/SubsamplingLayer.h"
#include "nn/conf/layers/ZeroPaddingLayer.h"
#include "nn/core/Error.h"
#include "nn/onnx/ActivationExport.h"
#include "nn/onnx/RecurrentExport.h"

namespace dl4cpp::onnx {

void refuseLayer(const LayerToExport& l, const std::string& why) {
  throw ModelExchangeError(
      fmt::format("ONNX export: layer \"{}\" ({}): {}", l.name, l.layer.typeName(), why));
}

namespace {

std::string activation(GraphWriter& g, const LayerToExport& l, const std::string& x) {
  return exportActivation(g, l.layer.resolvedActivation(),
                          static_cast<float>(l.layer.leakyReluAlpha), x,
                          l.name + "_" + toString(l.layer.resolvedActivation()));
}

std::vector<int64_t> windowPads(const WindowGeometry& w) {
  return {w.padTop, w.padLeft, w.padBottom, w.padRight};
}

// A window's attributes over images, or over the steps of sequences (Convolution1DLayer,
// Subsampling1DLayer: the window's height runs along time).
struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;
};
WindowAttrs windowAttrs(const WindowGeometry& w, bool sequences) {
  if (sequences) return {{w.kernelH}, {w.strideH}, {w.dilationH}, {w.padTop, w.padBottom}};
  return {
      {w.kernelH, w.kernelW}, {w.strideH, w.strideW}, {w.dilationH, w.dilationW}, windowPads(w)};
}

// y = x W^T + b: Gemm with W (nOut, nIn) as stored, transposed.
std::string feedForward(GraphWriter& g, const LayerToExport& l, const FeedForwardLayer& conf,
                        const std::string& x) {
  const std::span<const float> w = l.params.subspan(0, conf.nOut * conf.nIn);
  std::vector<std::string> inputs{x, g.floats(l.name + "_W", {conf.nOut, conf.nIn}, w)};
  if (conf.hasBias)
    inputs.push_back(g.floats(l.name + "_b", {conf.nOut}, l.params.subspan(w.size(), conf.nOut)));
  return g.node("Gemm", inputs, l.name + "_gemm", {Attr::integer("transB", 1)});
}

// b (nOut) first, then W (nOut, nIn, kH, kW): DL4J's order, ONNX's weight layout.
std::string convolution(GraphWriter& g, const LayerToExport& l, const ConvolutionLayer& conf,
                        const std::string& x) {
  const WindowGeometry& w = conf.geometry;
  const bool sequences = l.inputType.kind == InputType::Kind::Recurrent;
  const WindowAttrs a = windowAttrs(w, sequences);
  const int64_t biasSize = conf.hasBias ? conf.nOut : 0;
  const std::span<const float> weights = l.params.subspan(biasSize);
  std::vector<int64_t> shape{conf.nOut, conf.nIn};
  shape.insert(shape.end(), a.kernel.begin(), a.kernel.end());
  std::vector<std::string> inputs{x, g.floats(l.name + "_W", shape, weights)};
  if (conf.hasBias)
    inputs.push_back(g.floats(l.name + "_b", {conf.nOut}, l.params.first(biasSize)));
  return g.node("Conv", inputs, l.name + "_conv",
                {Attr::integers("kernel_shape", a.kernel), Attr::integers("strides", a.strides),
                 Attr::integers("dilations", a.dilations), Attr::integers("pads", a.pads),
                 Attr::integer("group", 1)});
}

// MAX ignores the padding; AVG divides by the values inside the input (count_include_pad 0), as
// dl4cpp does. The geometry holds the resolved padding (Same mode's asymmetric one included) and
// floors the output size, ONNX's ceil_mode 0.
std::string subsampling(GraphWriter& g, const LayerToExport& l, const SubsamplingLayer& conf,
                        const std::string& x) {
  const WindowGeometry& w = conf.geometry;
  if (w.dilationH != 1 || w.dilationW != 1) refuseLayer(l, "dilated pooling");
  const WindowAttrs a = windowAttrs(w, l.inputType.kind == InputType::Kind::Recurrent);
  std::vector<Attr> attrs{Attr::integers("kernel_shape", a.kernel),
                          Attr::integers("strides", a.strides), Attr::integers("pads", a.pads)};
  switch (conf.poolingType) {
    case PoolingType::MAX:
      return g.node("MaxPool", {x}, l.name + "_maxpool", attrs);
    case PoolingType::AVG:
      attrs.push_back(Attr::integer("count_include_pad", 0));
      return g.node("AveragePool", {x}, l.name + "_avgpool", attrs);
    default:
      refuseLayer(l, "pooling type " + toString(conf.poolingType) +
                         " (ONNX pools windows by MAX and AVG only)");
  }
}

// Inference form: the running mean and variance (layer state (2, C)) and gamma, beta (parameters,
// or the configured constants when locked).
std::string batchNorm(GraphWriter& g, const LayerToExport& l, const BatchNormalization& conf,
                      const std::string& x) {
  const int64_t c = conf.nOut;
  std::vector<float> gamma(c, static_cast<float>(conf.gamma)),
      beta(c, static_cast<float>(conf.beta));
  if (!conf.lockGammaBeta) {
    gamma.assign(l.params.begin(), l.params.begin() + c);
    beta.assign(l.params.begin() + c, l.params.begin() + 2 * c);
  }
  if (l.state.size() != static_cast<size_t>(2 * c))
    refuseLayer(l, fmt::format("expected {} running statistics, the model holds {}", 2 * c,
                               l.state.size()));
  return g.node("BatchNormalization",
                {x, g.floats(l.name + "_gamma", {c}, gamma), g.floats(l.name + "_beta", {c}, beta),
                 g.floats(l.name + "_mean", {c}, l.state.first(c)),
                 g.floats(l.name + "_var", {c}, l.state.subspan(c, c))},
                l.name + "_bn", {Attr::real("epsilon", static_cast<float>(conf.eps))});
}

// dl4cpp's alpha multiplies the sum of squares; ONNX's is divided by the size first.
std::string lrn(GraphWriter& g, const LayerToExport& l, const LocalResponseNormalization& conf,
                const std::string& x) {
  const auto size = static_cast<int64_t>(conf.n);
  if (static_cast<double>(size) != conf.n || size % 2 == 0)
    refuseLayer(l,
                fmt::format("window of {} channels: ONNX's LRN takes an odd whole number", conf.n));
  return g.node(
      "LRN", {x}, l.name + "_lrn",
      {Attr::integer("size", size), Attr::real("alpha", static_cast<float>(conf.alpha * conf.n)),
       Attr::real("beta", static_cast<float>(conf.beta)),
       Attr::real("bias", static_cast<float>(conf.k))});
}

std::string globalPooling(GraphWriter& g, const LayerToExport& l, const GlobalPoolingLayer& conf,
                          const std::string& x) {
  std::string pooled;
  switch (conf.poolingType) {
    case PoolingType::MAX:
      pooled = g.node("GlobalMaxPool", {x}, l.name + "_gmaxpool");
      break;
    case PoolingType::AVG:
      pooled = g.node("GlobalAveragePool", {x}, l.name + "_gavgpool");
      break;
    case PoolingType::SUM:
      // Over H and W of images, over the steps of sequences (ONNX's global pools take either).
      pooled = g.node("ReduceSum",
                      {x, g.int64s(l.name + "_axes", l.inputType.kind == InputType::Kind::Recurrent
                                                         ? std::vector<int64_t>{2}
                                                         : std::vector<int64_t>{2, 3})},
                      l.name + "_gsumpool", {Attr::integer("keepdims", 1)});
      break;
    case PoolingType::PNORM:
      pooled = g.node("GlobalLpPool", {x}, l.name + "_glppool", {Attr::integer("p", conf.pnorm)});
      break;
  }
  if (!conf.collapseDimensions) return pooled;
  return g.node("Flatten", {pooled}, l.name + "_flat", {Attr::integer("axis", 1)});
}

// Pad's pads: every axis's begin, then every axis's end (N, C, H, W).
std::string zeroPadding(GraphWriter& g, const LayerToExport& l, const ZeroPaddingLayer& conf,
                        const std::string& x) {
  const auto& [top, bottom, left, right] = conf.padding;
  return g.node("Pad", {x, g.int64s(l.name + "_pads", {0, 0, top, left, 0, 0, bottom, right})},
                l.name + "_pad", {Attr::text("mode", "constant")});
}

// A lookup of index rows (N, 1) (EmbeddingLayer) or index sequences (N, 1, T) or (N, T)
// (EmbeddingSequenceLayer): the float indices cast to int64, Gather of W's rows, the bias added;
// (N, nOut), or (N, nOut, T) for sequences.
std::string embedding(GraphWriter& g, const LayerToExport& l, const FeedForwardLayer& conf,
                      const std::string& x, bool sequences) {
  const std::span<const float> w = l.params.subspan(0, conf.nIn * conf.nOut);
  std::string indices =
      g.node("Cast", {x}, l.name + "_indices", {Attr::integer("to", ::onnx::TensorProto::INT64)});
  // (N, 1) and (N, 1, T) lose their axis 1: (N) and (N, T).
  if (!sequences || l.inputType.kind == InputType::Kind::Recurrent)
    indices =
        g.node("Squeeze", {indices, g.int64s(l.name + "_index_axis", {1})}, l.name + "_index");
  std::string y = g.node("Gather", {g.floats(l.name + "_W", {conf.nIn, conf.nOut}, w), indices},
                         l.name + "_gather", {Attr::integer("axis", 0)});
  if (conf.hasBias)
    y = g.node("Add",
               {y, g.floats(l.name + "_b", {conf.nOut}, l.params.subspan(w.size(), conf.nOut))},
               l.name + "_add");
  if (!sequences) return y;
  return g.node("Transpose", {y}, l.name + "_to_seq", {Attr::integers("perm", {0, 2, 1})});
}

// A dense layer at every step: (N, nIn, T) -> (N, T, nIn) -> MatMul W^T, Add b -> (N, nOut, T).
std::string rnnOutput(GraphWriter& g, const LayerToExport& l, const FeedForwardLayer& conf,
                      const std::string& x) {
  const std::span<const float> w = l.params.subspan(0, conf.nOut * conf.nIn);
  std::vector<float> wT(w.size());  // (nIn, nOut)
  for (int64_t o = 0; o < conf.nOut; ++o)
    for (int64_t i = 0; i < conf.nIn; ++i) wT[i * conf.nOut + o] = w[o * conf.nIn + i];
  const std::string rows =
      g.node("Transpose", {x}, l.name + "_to_rows", {Attr::integers("perm", {0, 2, 1})});
  std::string z = g.node("MatMul", {rows, g.floats(l.name + "_W", {conf.nIn, conf.nOut}, wT)},
                         l.name + "_matmul");
  if (conf.hasBias)
    z = g.node("Add",
               {z, g.floats(l.name + "_b", {conf.nOut}, l.params.subspan(w.size(), conf.nOut))},
               l.name + "_add");
  return g.node("Transpose", {z}, l.name + "_to_seq", {Attr::integers("perm", {0, 2, 1})});
}

// The layer's configuration as the class its type name stands for.
template <typename T>
const T& conf(const LayerToExport& l) {
  const auto* c = dynamic_cast<const T*>(&l.layer);
  if (!c) refuseLayer(l, "its type name is a built-in one but its class is not");
  return *c;
}

}  // namespace

Value exportPreProcessor(GraphWriter& g, InputPreProcessor preProcessor, const InputType& to,
                         const Value& input, const std::string& base) {
  switch (preProcessor) {
    case InputPreProcessor::None:
      return input;
    case InputPreProcessor::FeedForwardToCnn:
      return {
          g.node("Reshape",
                 {input.name, g.int64s(base + "_shape", {-1, to.channels, to.height, to.width})},
                 base + "_to_image"),
          to};
    case InputPreProcessor::CnnToFeedForward:
      // Flat images are rows already: nothing to do but say so.
      if (input.type.kind != InputType::Kind::Convolutional) return {input.name, to};
      return {g.node("Flatten", {input.name}, base + "_to_rows", {Attr::integer("axis", 1)}), to};
    case InputPreProcessor::RnnToFeedForward:
    case InputPreProcessor::RnnToCnn: {
      // (N, C, T) -> (N, T, C) -> one row (or image) per step, example by example.
      g.setSequenceShape(g.node("Shape", {input.name}, base + "_sequence_shape"));
      const std::string steps = g.node("Transpose", {input.name}, base + "_steps_last",
                                       {Attr::integers("perm", {0, 2, 1})});
      const std::vector<int64_t> shape =
          to.kind == InputType::Kind::Convolutional
              ? std::vector<int64_t>{-1, to.channels, to.height, to.width}
              : std::vector<int64_t>{-1, to.size};
      return {g.node("Reshape", {steps, g.int64s(base + "_step_shape", shape)}, base + "_per_step"),
              to};
    }
    case InputPreProcessor::FeedForwardToRnn:
    case InputPreProcessor::CnnToRnn: {
      if (g.sequenceShape().empty())
        throw ModelExchangeError(fmt::format(
            "ONNX export: layer \"{}\": rows per time step with no sequences they came from",
            base));
      // Rows (N*T, C) -> (N, T, C) with N and T of the sequences they came from -> (N, C, T).
      const std::string rows =
          input.type.kind == InputType::Kind::Convolutional
              ? g.node("Flatten", {input.name}, base + "_rows", {Attr::integer("axis", 1)})
              : input.name;
      const std::string batchAndSteps =
          g.node("Gather", {g.sequenceShape(), g.int64s(base + "_n_t", {0, 2})}, base + "_n_t");
      const std::string shape =
          g.node("Concat", {batchAndSteps, g.int64s(base + "_features", {to.size})},
                 base + "_shape", {Attr::integer("axis", 0)});
      const std::string steps = g.node("Reshape", {rows, shape}, base + "_steps_last");
      return {
          g.node("Transpose", {steps}, base + "_sequences", {Attr::integers("perm", {0, 2, 1})}),
          to};
    }
  }
  throw ModelExchangeError(fmt::format("ONNX export: {}: unknown preprocessor", base));
}

Value exportLayer(GraphWriter& g, const LayerToExport& l, const Value& input) {
  const std::string x = exportPreProcessor(g, l.preProcessor, l.inputType, input, l.name).name;
  const std::string type = l.layer.typeName();
  std::string y;
  // By type name, not by class: a user's layer derived from a built-in one computes its own thing.
  if (type == "DenseLayer" || type == "OutputLayer") {
    y = activation(g, l, feedForward(g, l, conf<FeedForwardLayer>(l), x));
  } else if (isRecurrentType(type)) {
    y = exportRecurrent(g, l, x);
  } else if (type == "RnnOutputLayer") {
    y = activation(g, l, rnnOutput(g, l, conf<FeedForwardLayer>(l), x));
  } else if (type == "ConvolutionLayer" || type == "Convolution1DLayer") {
    y = activation(g, l, convolution(g, l, conf<ConvolutionLayer>(l), x));
  } else if (type == "SubsamplingLayer" || type == "Subsampling1DLayer") {
    y = subsampling(g, l, conf<SubsamplingLayer>(l), x);
  } else if (type == "BatchNormalization") {
    y = activation(g, l, batchNorm(g, l, conf<BatchNormalization>(l), x));
  } else if (type == "LocalResponseNormalization") {
    y = lrn(g, l, conf<LocalResponseNormalization>(l), x);
  } else if (type == "GlobalPoolingLayer") {
    y = globalPooling(g, l, conf<GlobalPoolingLayer>(l), x);
  } else if (type == "ZeroPaddingLayer") {
    y = zeroPadding(g, l, conf<ZeroPaddingLayer>(l), x);
  } else if (type == "EmbeddingLayer" || type == "EmbeddingSequenceLayer") {
    y = activation(g, l,
                   embedding(g, l, conf<FeedForwardLayer>(l), x, type == "EmbeddingSequenceLayer"));
  } else if (type == "MaskZeroLayer") {
    refuseLayer(l,
                "it masks the steps whose input equals its mask value, and an ONNX model carries "
                "no masks");
  } else if (type == "ActivationLayer" || type == "LossLayer" || type == "RnnLossLayer") {
    y = activation(g, l, x);
  } else if (type == "DropoutLayer") {
    y = x;  // dropout acts in training only
  } else {
    refuseLayer(l, "no ONNX mapping for this layer type (supported: docs/onnx.md)");
  }
  return {y, l.outputType};
}

}  // namespace dl4cpp::onnx
