#include "nn/onnx/VertexExport.h"

#include <fmt/format.h>

#include "nn/conf/graph/ElementWiseVertex.h"
#include "nn/conf/graph/L2NormalizeVertex.h"
#include "nn/conf/graph/MergeVertex.h"
#include "nn/conf/graph/PreprocessorVertex.h"
#include "nn/conf/graph/ReshapeVertex.h"
#include "nn/conf/graph/ScaleVertex.h"
#include "nn/conf/graph/ShiftVertex.h"
#include "nn/conf/graph/StackVertex.h"
#include "nn/conf/graph/SubsetVertex.h"
#include "nn/core/Error.h"
#include "nn/onnx/LayerExport.h"

namespace dl4cpp::onnx {

namespace {

struct VertexToExport {
  const GraphVertex& vertex;
  const std::string& name;
  const InputType& outputType;
  const std::vector<Value>& inputs;

  [[noreturn]] void unsupported(const std::string& why) const {
    throw ModelExchangeError(
        fmt::format("ONNX export: vertex \"{}\" ({}): {}", name, vertex.typeName(), why));
  }
  template <typename T>
  const T& conf() const {
    const auto* c = dynamic_cast<const T*>(&vertex);
    if (!c) unsupported("its type name is a built-in one but its class is not");
    return *c;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& v : inputs) out.push_back(v.name);
    return out;
  }
  const std::string& first() const { return inputs.at(0).name; }
};

std::string elementWise(GraphWriter& g, const VertexToExport& v) {
  const std::vector<std::string> xs = v.names();
  switch (v.conf<ElementWiseVertex>().op) {
    case ElementWiseVertex::Op::Add:
      return g.node("Sum", xs, v.name + "_sum");
    case ElementWiseVertex::Op::Subtract:
      return g.node("Sub", xs, v.name + "_sub");
    case ElementWiseVertex::Op::Product: {
      std::string product = xs.at(0);
      for (size_t i = 1; i < xs.size(); ++i)
        product = g.node("Mul", {product, xs[i]}, v.name + "_mul");
      return product;
    }
    case ElementWiseVertex::Op::Average:
      return g.node("Mean", xs, v.name + "_mean");
    case ElementWiseVertex::Op::Max:
      return g.node("Max", xs, v.name + "_max");
  }
  v.unsupported("unknown element-wise op");
}

// Features of rows, or channels of images: dimension 1 either way.
std::string subset(GraphWriter& g, const VertexToExport& v) {
  const auto& c = v.conf<SubsetVertex>();
  return g.node("Slice",
                {v.first(), g.int64s(v.name + "_starts", {c.from}),
                 g.int64s(v.name + "_ends", {c.to + 1}), g.int64s(v.name + "_axes", {1})},
                v.name + "_slice");
}

// y = x / max(||x||, eps), the norm over each example's values.
std::string l2Normalize(GraphWriter& g, const VertexToExport& v) {
  const auto& c = v.conf<L2NormalizeVertex>();
  const std::vector<int64_t> axes = v.inputs.at(0).type.kind == InputType::Kind::Convolutional
                                        ? std::vector<int64_t>{1, 2, 3}
                                        : std::vector<int64_t>{1};
  const std::string norm = g.node("ReduceL2", {v.first()}, v.name + "_norm",
                                  {Attr::integers("axes", axes), Attr::integer("keepdims", 1)});
  const std::string clamped = g.node(
      "Max", {norm, g.scalar(v.name + "_eps", static_cast<float>(c.eps))}, v.name + "_clamped");
  return g.node("Div", {v.first(), clamped}, v.name + "_div");
}

// Part `from` of `stackSize` equal parts of the examples: Slice on dimension 0 between bounds
// computed from the batch size, which the model learns only at run time.
std::string unstack(GraphWriter& g, const VertexToExport& v) {
  const auto& c = v.conf<UnstackVertex>();
  const std::string shape = g.node("Shape", {v.first()}, v.name + "_shape");
  const std::string n = g.node("Gather", {shape, g.int64s(v.name + "_batch_axis", {0})},
                               v.name + "_batch", {Attr::integer("axis", 0)});
  const std::string part =
      g.node("Div", {n, g.int64s(v.name + "_parts", {c.stackSize})}, v.name + "_part");
  const std::string start =
      g.node("Mul", {part, g.int64s(v.name + "_from", {c.from})}, v.name + "_start");
  const std::string end = g.node("Add", {start, part}, v.name + "_end");
  return g.node("Slice", {v.first(), start, end, g.int64s(v.name + "_axes", {0})},
                v.name + "_slice");
}

}  // namespace

Value exportVertex(GraphWriter& g, const GraphVertex& vertex, const std::string& name,
                   const InputType& outputType, const std::vector<Value>& inputs) {
  const VertexToExport v{vertex, name, outputType, inputs};
  const std::string type = vertex.typeName();
  std::string y;
  if (type == "MergeVertex") {
    y = inputs.size() == 1
            ? v.first()
            : g.node("Concat", v.names(), name + "_concat", {Attr::integer("axis", 1)});
  } else if (type == "ElementWiseVertex") {
    y = elementWise(g, v);
  } else if (type == "SubsetVertex") {
    y = subset(g, v);
  } else if (type == "ScaleVertex") {
    const float factor = static_cast<float>(v.conf<ScaleVertex>().scaleFactor);
    y = g.node("Mul", {v.first(), g.scalar(name + "_factor", factor)}, name + "_scale");
  } else if (type == "ShiftVertex") {
    const float shift = static_cast<float>(v.conf<ShiftVertex>().shiftFactor);
    y = g.node("Add", {v.first(), g.scalar(name + "_shift", shift)}, name + "_shift");
  } else if (type == "StackVertex") {
    y = inputs.size() == 1
            ? v.first()
            : g.node("Concat", v.names(), name + "_stack", {Attr::integer("axis", 0)});
  } else if (type == "UnstackVertex") {
    y = unstack(g, v);
  } else if (type == "L2NormalizeVertex") {
    y = l2Normalize(g, v);
  } else if (type == "ReshapeVertex") {
    y = g.node("Reshape", {v.first(), g.int64s(name + "_shape", v.conf<ReshapeVertex>().newShape)},
               name + "_reshape");
  } else if (type == "PreprocessorVertex") {
    y = exportPreProcessor(g, v.conf<PreprocessorVertex>().preProcessor, outputType, inputs.at(0),
                           name)
            .name;
  } else {
    v.unsupported("no ONNX mapping for this vertex type (supported: docs/onnx.md)");
  }
  return {y, outputType};
}

}  // namespace dl4cpp::onnx
