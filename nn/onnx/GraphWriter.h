#pragma once
// Builds one ONNX graph (onnx::GraphProto) node by node for the exporter: unique value names,
// float and int64 initializers, nodes with attributes. Private to dl4cpp_onnx; the only file pair
// besides OnnxExport.cpp that touches ONNX's protobuf classes.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "nn/conf/InputType.h"

namespace dl4cpp::onnx {

// A value flowing between exported nodes: its name in the graph and what dl4cpp holds there
// (rows (N, size), flat images (N, C*H*W), or images (N, C, H, W)).
struct Value {
  std::string name;
  InputType type;
};

// An attribute of a node.
struct Attr {
  enum class Kind { Int, Float, Ints, String, Strings };
  std::string name;
  Kind kind = Kind::Int;
  int64_t i = 0;
  float f = 0;
  std::vector<int64_t> ints;
  std::string s;
  std::vector<std::string> strings;

  static Attr integer(std::string name, int64_t v) {
    Attr a;
    a.name = std::move(name);
    a.i = v;
    return a;
  }
  static Attr real(std::string name, float v) {
    Attr a;
    a.name = std::move(name);
    a.kind = Kind::Float;
    a.f = v;
    return a;
  }
  static Attr integers(std::string name, std::vector<int64_t> v) {
    Attr a;
    a.name = std::move(name);
    a.kind = Kind::Ints;
    a.ints = std::move(v);
    return a;
  }
  static Attr text(std::string name, std::string v) {
    Attr a;
    a.name = std::move(name);
    a.kind = Kind::String;
    a.s = std::move(v);
    return a;
  }
  static Attr texts(std::string name, std::vector<std::string> v) {
    Attr a;
    a.name = std::move(name);
    a.kind = Kind::Strings;
    a.strings = std::move(v);
    return a;
  }
};

class GraphWriter {
 public:
  explicit GraphWriter(::onnx::GraphProto& graph) : graph_(graph) {}

  // Reserves `name` exactly (a graph input or output); ModelExchangeError when already taken.
  void reserve(const std::string& name);
  // A name not used yet, made from `base`.
  std::string fresh(const std::string& base);

  // A float initializer of `shape` holding `values` (shape's product of them); its name.
  std::string floats(const std::string& base, const std::vector<int64_t>& shape,
                     std::span<const float> values);
  std::string scalar(const std::string& base, float value) {
    return floats(base, {}, std::span<const float>(&value, 1));
  }
  // An int64 initializer of one dimension (shapes, axes, pads).
  std::string int64s(const std::string& base, const std::vector<int64_t>& values);

  // Adds a node `op` reading `inputs` and writing one new value (named from `base`); its name.
  std::string node(const std::string& op, const std::vector<std::string>& inputs,
                   const std::string& base, const std::vector<Attr>& attrs = {});
  // The same, writing the given (reserved) output name.
  void nodeTo(const std::string& op, const std::vector<std::string>& inputs,
              const std::string& output, const std::vector<Attr>& attrs = {});

  // Graph inputs and outputs: float tensors with a symbolic batch dimension "N" first.
  void addInput(const std::string& name, const std::vector<int64_t>& dimsAfterBatch);
  void addOutput(const std::string& name, const std::vector<int64_t>& dimsAfterBatch);

  // The shape (N, C, T), a 1-D int64 value, of the sequences the latest rows or images per time
  // step were cut from (RnnToFeedForward, RnnToCnn): what turns them back into sequences. The
  // sequences of one pass share N and T, so the latest cut stands for every one of them.
  void setSequenceShape(std::string name) { sequenceShape_ = std::move(name); }
  const std::string& sequenceShape() const { return sequenceShape_; }

 private:
  ::onnx::GraphProto& graph_;
  std::set<std::string> used_;
  std::string sequenceShape_;
};

// The dimensions after the batch of a value of `type` (the tensor dl4cpp holds: images 4-D).
std::vector<int64_t> dimsAfterBatch(const InputType& type);

}  // namespace dl4cpp::onnx
