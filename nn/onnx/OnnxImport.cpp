#include "nn/onnx/OnnxImport.h"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/conf/graph/ComputationGraphConfiguration.h"
#include "nn/conf/graph/ElementWiseVertex.h"
#include "nn/conf/graph/MergeVertex.h"
#include "nn/conf/graph/PreprocessorVertex.h"
#include "nn/conf/graph/ScaleVertex.h"
#include "nn/conf/graph/ShiftVertex.h"
#include "nn/conf/layers/ActivationLayer.h"
#include "nn/conf/layers/BatchNormalization.h"
#include "nn/conf/layers/Bidirectional.h"
#include "nn/conf/layers/ConvolutionLayer.h"
#include "nn/conf/layers/DenseLayer.h"
#include "nn/conf/layers/GlobalPoolingLayer.h"
#include "nn/conf/layers/GravesLSTM.h"
#include "nn/conf/layers/LSTM.h"
#include "nn/conf/layers/LastTimeStep.h"
#include "nn/conf/layers/LocalResponseNormalization.h"
#include "nn/conf/layers/OutputLayer.h"
#include "nn/conf/layers/RnnOutputLayer.h"
#include "nn/conf/layers/SimpleRnn.h"
#include "nn/conf/layers/SubsamplingLayer.h"
#include "nn/conf/layers/ZeroPaddingLayer.h"
#include "nn/core/AtomicFile.h"
#include "nn/core/Error.h"
#include "nn/graph/ComputationGraph.h"
#include "nn/onnx/RecurrentExport.h"
#include "nn/onnx/RecurrentImport.h"
#include "nn/util/ModelSerializer.h"

namespace dl4cpp::onnx {

namespace {

using Attrs = std::map<std::string, const ::onnx::AttributeProto*>;

// Bounds on what a file may declare, so that sizes computed from it cannot overflow: a tensor's
// values, and every dimension, window, stride and padding.
constexpr int64_t kMaxTensorValues = int64_t{1} << 31;
constexpr int64_t kMaxExtent = int64_t{1} << 24;

// A constant tensor: an initializer or a Constant node's value.
struct Constant {
  std::vector<int64_t> dims;
  std::vector<float> floats;  // FLOAT tensors
  std::vector<int64_t> ints;  // INT64 tensors
  bool isFloat = false;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;  // readTensor bounds the product
    return n;
  }
};

// How a tensor of sequences is laid out. dl4cpp holds sequences as (N, F, T); ONNX's LSTM and RNN
// read (T, N, F) and write Y (T, D, N, H) (D directions), and a dense layer at every step reads
// (N, T, F). A Transpose, Squeeze, Reshape or Slice between these layouts adds no vertex: the value
// keeps its vertex and InputType (recurrent(F, T)) and changes its layout, which only those
// operators, LSTM, RNN, MatMul and the reductions over a bidirectional Y read; every other
// operator reads dl4cpp's layout (needValue).
enum class Layout {
  Dl4cpp,      // (N, F, T), or a tensor that is not a sequence
  StepsMajor,  // (T, N, F): LSTM's X
  LstmY,       // (T, 1, N, H): a one-direction LSTM's or RNN's Y
  LstmYLast,   // (1, N, H, T): Y transposed (1, 2, 3, 0), Squeeze(0) gives (N, H, T)
  StepsMinor,  // (N, T, F): read by a MatMul at every step
  BiY,         // (T, 2, N, H): a bidirectional Y
  BiYLast,     // (N, 2, H, T): transposed (2, 1, 3, 0); Reshape (0, 2H, -1) or a reduction over
               // axis 1 combines the directions
  LastStep,    // (N, H, 1): Slice of the last step, Squeeze(2) gives (N, H)
};

// A tensor the graph computes: the dl4cpp vertex (or network input) holding it and its type.
struct Value {
  std::string vertex;
  InputType type;
  Layout layout = Layout::Dl4cpp;
};

// One layer or vertex to add to the graph builder, kept until every node is read so that a
// following activation or bias can still be folded into it.
struct Entry {
  std::string name;
  std::shared_ptr<Layer> layer;
  std::shared_ptr<GraphVertex> vertex;
  std::vector<std::string> inputs;
  std::vector<float> params, state;
  bool dense = false;      // a DenseLayer (Gemm, MatMul): may become the OutputLayer
  bool foldsBias = false;  // a MatMul's dense layer without bias yet
  bool perStep = false;    // a MatMul at every step of sequences: becomes an RnnOutputLayer
  std::string onnxOutput;  // the ONNX tensor it computes
};

[[noreturn]] void fail(const ::onnx::NodeProto& node, const std::string& why) {
  // Nodes need no name: one without is named by its first output.
  const std::string name = !node.name().empty()     ? node.name()
                           : node.output_size() > 0 ? "output " + node.output(0)
                                                    : std::string();
  throw ModelExchangeError(
      fmt::format("ONNX import: node \"{}\" ({}): {}", name, node.op_type(), why));
}

template <typename T>
void appendRaw(const std::string& raw, std::vector<T>& out) {
  if (raw.size() % sizeof(T) != 0)
    throw ModelExchangeError("ONNX import: a tensor's raw data is not whole values");
  out.resize(raw.size() / sizeof(T));
  if (!raw.empty())
    std::memcpy(out.data(), raw.data(), raw.size());  // an empty vector's data() may be null
}

Constant readTensor(const ::onnx::TensorProto& t) {
  const std::string what = fmt::format("ONNX import: tensor \"{}\"", t.name());
  if (t.data_location() == ::onnx::TensorProto::EXTERNAL)
    throw ModelExchangeError(what + ": data in external files is not imported");
  Constant c;
  if (t.dims_size() > 8) throw ModelExchangeError(what + ": rank above 8");
  int64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > kMaxExtent)
      throw ModelExchangeError(fmt::format("{}: dimension {} out of range", what, d));
    numel *= d;  // at most 2^31 * 2^24: no overflow
    if (numel > kMaxTensorValues) throw ModelExchangeError(what + ": more than 2^31 values");
    c.dims.push_back(d);
  }
  if (t.data_type() == ::onnx::TensorProto::FLOAT) {
    c.isFloat = true;
    if (t.has_raw_data())
      appendRaw(t.raw_data(), c.floats);
    else
      c.floats.assign(t.float_data().begin(), t.float_data().end());
    if (static_cast<int64_t>(c.floats.size()) != c.numel())
      throw ModelExchangeError(
          fmt::format("{}: {} values for its {} elements", what, c.floats.size(), c.numel()));
  } else if (t.data_type() == ::onnx::TensorProto::INT64) {
    if (t.has_raw_data())
      appendRaw(t.raw_data(), c.ints);
    else
      c.ints.assign(t.int64_data().begin(), t.int64_data().end());
    if (static_cast<int64_t>(c.ints.size()) != c.numel())
      throw ModelExchangeError(
          fmt::format("{}: {} values for its {} elements", what, c.ints.size(), c.numel()));
  } else {
    throw ModelExchangeError(
        fmt::format("{}: element type {} (float and int64 are imported)", what, t.data_type()));
  }
  return c;
}

::onnx::ModelProto parseBytes(std::span<const std::byte> bytes, const std::string& name) {
  if (bytes.size() > kMaxImportBytes)
    throw ModelExchangeError(fmt::format("ONNX import: {} is too large", name));
  ::onnx::ModelProto model;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetRecursionLimit(kMaxImportNesting);
  in.SetTotalBytesLimit(static_cast<int>(std::min<uint64_t>(kMaxImportBytes - 1, INT32_MAX)));
  if (!model.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    throw ModelExchangeError(fmt::format(
        "ONNX import: {} is not an ONNX model (not a protobuf ModelProto, truncated, or nested "
        "deeper than {})",
        name, kMaxImportNesting));
  if (!model.has_graph() || model.ir_version() <= 0)
    throw ModelExchangeError(
        fmt::format("ONNX import: {} is not an ONNX model (no graph or IR version)", name));
  try {
    ::onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw ModelExchangeError(
        fmt::format("ONNX import: ONNX's checker rejects {}: {}", name, e.what()));
  }
  return model;
}

::onnx::ModelProto parse(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxImportBytes)
    throw ModelExchangeError(fmt::format("ONNX import: {} has {} bytes, more than the {} read",
                                         path.string(), size, kMaxImportBytes));
  const std::vector<std::byte> bytes = readWholeFile(path, "an ONNX model");
  return parseBytes(bytes, path.string());
}

Attrs attrs(const ::onnx::NodeProto& node) {
  Attrs a;
  for (const auto& attr : node.attribute()) a[attr.name()] = &attr;
  return a;
}
// Refuses every attribute not in `known`: one the importer does not read could change what
// the node computes.
void onlyAttrs(const ::onnx::NodeProto& node, const Attrs& a,
               std::initializer_list<const char*> known) {
  for (const auto& entry : a) {
    const std::string& name = entry.first;
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return name == k; }))
      fail(node, fmt::format("attribute \"{}\" is not imported", name));
  }
}
int64_t intAttr(const Attrs& a, const char* name, int64_t fallback) {
  auto it = a.find(name);
  return it == a.end() ? fallback : it->second->i();
}
float floatAttr(const Attrs& a, const char* name, float fallback) {
  auto it = a.find(name);
  return it == a.end() ? fallback : it->second->f();
}
std::string stringAttr(const Attrs& a, const char* name, const std::string& fallback) {
  auto it = a.find(name);
  return it == a.end() ? fallback : it->second->s();
}
std::vector<int64_t> intsAttr(const Attrs& a, const char* name, std::vector<int64_t> fallback) {
  auto it = a.find(name);
  if (it == a.end()) return fallback;
  return {it->second->ints().begin(), it->second->ints().end()};
}

class Importer {
 public:
  Importer(const ::onnx::ModelProto& model, const ImportOptions& options)
      : model_(model), options_(options) {}

  ComputationGraph run();

 private:
  const ::onnx::ModelProto& model_;
  ImportOptions options_;
  int opset_ = 0;
  std::map<std::string, Constant> constants_;
  std::map<std::string, Value> values_;
  std::map<std::string, int> consumers_;
  std::set<std::string> graphOutputs_;
  std::set<std::string> names_;
  std::vector<Entry> entries_;
  std::map<std::string, size_t> entryOf_;  // vertex name -> entries_ index
  std::vector<std::string> inputNames_;
  std::vector<InputType> inputTypes_;
  // Pooling nodes imported in Same mode: the pads (top, left, bottom, right) it must resolve to.
  std::map<std::string, std::pair<::onnx::NodeProto, std::vector<int64_t>>> expectedPads_;

  std::string uniqueName(const std::string& wanted) {
    std::string base = wanted.empty() ? "v" : wanted;
    std::string name = base;
    for (int i = 1; names_.count(name); ++i) name = fmt::format("{}_{}", base, i);
    names_.insert(name);
    return name;
  }

  const Constant* constant(const std::string& name) const {
    auto it = constants_.find(name);
    return it == constants_.end() ? nullptr : &it->second;
  }
  const Constant& needConstant(const ::onnx::NodeProto& node, int i) const {
    if (node.input_size() <= i || node.input(i).empty())
      fail(node, fmt::format("input {} missing", i));
    const Constant* c = constant(node.input(i));
    if (!c) fail(node, fmt::format("input {} (\"{}\") must be an initializer", i, node.input(i)));
    return *c;
  }
  const Value& needValue(const ::onnx::NodeProto& node, int i) const {
    const Value& v = needAnyLayout(node, i);
    if (v.layout != Layout::Dl4cpp)
      fail(node, fmt::format("input \"{}\" is a transposed sequence (read by Transpose, Squeeze, "
                             "LSTM and a per-step MatMul only)",
                             node.input(i)));
    return v;
  }
  const Value& needAnyLayout(const ::onnx::NodeProto& node, int i) const {
    if (node.input_size() <= i) fail(node, fmt::format("input {} missing", i));
    auto it = values_.find(node.input(i));
    if (it == values_.end())
      fail(node, fmt::format("input \"{}\" is not a computed tensor (constant-only arithmetic "
                             "is not imported)",
                             node.input(i)));
    return it->second;
  }

  void define(const ::onnx::NodeProto& node, const Value& v) {
    if (node.output_size() < 1 || node.output(0).empty()) fail(node, "no output");
    values_[node.output(0)] = v;
  }
  Value addLayer(const ::onnx::NodeProto& node, std::shared_ptr<Layer> layer, const Value& input,
                 InputType outputType, std::vector<float> params = {},
                 std::vector<float> state = {}) {
    Entry e;
    e.name = uniqueName(node.output(0));
    e.layer = std::move(layer);
    e.inputs = {input.vertex};
    e.params = std::move(params);
    e.state = std::move(state);
    e.onnxOutput = node.output(0);
    entryOf_[e.name] = entries_.size();
    entries_.push_back(std::move(e));
    Value v{entries_.back().name, outputType};
    define(node, v);
    return v;
  }
  Value addVertex(const ::onnx::NodeProto& node, std::shared_ptr<GraphVertex> vertex,
                  const std::vector<Value>& inputs, InputType outputType) {
    Entry e;
    e.name = uniqueName(node.output(0));
    e.vertex = std::move(vertex);
    for (const auto& in : inputs) e.inputs.push_back(in.vertex);
    e.onnxOutput = node.output(0);
    entryOf_[e.name] = entries_.size();
    entries_.push_back(std::move(e));
    Value v{entries_.back().name, outputType};
    define(node, v);
    return v;
  }
  // The entry computing `v` when only `node` reads it (so a fold changes nothing else).
  Entry* foldable(const std::string& tensor, const Value& v) {
    if (consumers_[tensor] != 1 || graphOutputs_.count(tensor)) return nullptr;
    auto it = entryOf_.find(v.vertex);
    if (it == entryOf_.end()) return nullptr;
    Entry& e = entries_[it->second];
    if (e.onnxOutput != tensor) return nullptr;
    return &e;
  }

  void node(const ::onnx::NodeProto& node);
  void activation(const ::onnx::NodeProto& node, Activation a, double leakyAlpha = 0.01);
  void gemm(const ::onnx::NodeProto& node);
  void matMul(const ::onnx::NodeProto& node);
  void conv(const ::onnx::NodeProto& node);
  void pool(const ::onnx::NodeProto& node, PoolingType type);
  void batchNorm(const ::onnx::NodeProto& node);
  void elementWise(const ::onnx::NodeProto& node);
  void reshape(const ::onnx::NodeProto& node, const Value& x, int64_t rank,
               std::vector<int64_t> shape);
  void pad(const ::onnx::NodeProto& node);
  void recurrent(const ::onnx::NodeProto& node);
  void relayout(const ::onnx::NodeProto& node);
  void combineDirections(const ::onnx::NodeProto& node, const Value& y);
  void lastStep(const ::onnx::NodeProto& node);
  void lastTimeStep(const ::onnx::NodeProto& node, const Value& x);
};

bool sameType(const InputType& a, const InputType& b) {
  return a.kind == b.kind && a.shape(1) == b.shape(1);
}

InputType imageOf(const ::onnx::NodeProto& node, const Value& v) {
  if (v.type.kind != InputType::Kind::Convolutional) fail(node, "expects images (N, C, H, W)");
  return v.type;
}

void Importer::activation(const ::onnx::NodeProto& node, Activation a, double leakyAlpha) {
  const Value& x = needValue(node, 0);
  // Right after a layer computing with the identity: that layer's activation.
  if (Entry* e = foldable(node.input(0), x);
      e && e->layer && e->layer->typeName() != "ActivationLayer" &&
      e->layer->typeName() != "SubsamplingLayer" && e->layer->typeName() != "GlobalPoolingLayer" &&
      e->layer->typeName() != "LocalResponseNormalization" &&
      e->layer->typeName() != "ZeroPaddingLayer" && !isRecurrentType(e->layer->typeName()) &&
      e->layer->activation.value_or(Activation::IDENTITY) == Activation::IDENTITY) {
    e->layer->activation = a;
    e->layer->leakyReluAlpha = leakyAlpha;
    e->onnxOutput = node.output(0);
    define(node, x);
    return;
  }
  auto layer = std::make_shared<ActivationLayer>(ActivationLayer::Builder(a).build());
  layer->leakyReluAlpha = leakyAlpha;
  addLayer(node, layer, x, x.type);
}

// y = alpha A B' + beta C, B' = B or B^T: a DenseLayer with W (nOut, nIn) = alpha B'^T.
void Importer::gemm(const ::onnx::NodeProto& node) {
  const Attrs a = attrs(node);
  onlyAttrs(node, a, {"alpha", "beta", "transA", "transB"});
  if (intAttr(a, "transA", 0) != 0) fail(node, "transA = 1 (the input transposed)");
  const Value& x = needValue(node, 0);
  if (x.type.kind != InputType::Kind::FeedForward) fail(node, "expects rows (N, features)");
  const Constant& b = needConstant(node, 1);
  if (!b.isFloat || b.dims.size() != 2) fail(node, "B must be a float matrix");
  const bool transB = intAttr(a, "transB", 0) != 0;
  const int64_t nIn = transB ? b.dims[1] : b.dims[0], nOut = transB ? b.dims[0] : b.dims[1];
  if (nIn != x.type.size)
    fail(node, fmt::format("B takes {} features, the input has {}", nIn, x.type.size));
  const float alpha = floatAttr(a, "alpha", 1), beta = floatAttr(a, "beta", 1);
  std::vector<float> params(nOut * nIn);
  for (int64_t o = 0; o < nOut; ++o)
    for (int64_t i = 0; i < nIn; ++i)
      params[o * nIn + i] = alpha * (transB ? b.floats[o * nIn + i] : b.floats[i * nOut + o]);
  const bool hasBias = node.input_size() > 2 && !node.input(2).empty();
  if (hasBias) {
    const Constant& c = needConstant(node, 2);
    if (!c.isFloat || c.numel() != nOut || (c.dims.size() == 2 && c.dims[0] != 1))
      fail(node, fmt::format("C must be {} biases (other broadcasts are not imported)", nOut));
    for (float v : c.floats) params.push_back(beta * v);
  }
  auto layer = std::make_shared<DenseLayer>(DenseLayer::Builder()
                                                .nIn(nIn)
                                                .nOut(nOut)
                                                .hasBias(hasBias)
                                                .activation(Activation::IDENTITY)
                                                .build());
  addLayer(node, layer, x, InputType::feedForward(nOut), std::move(params));
  entries_.back().dense = true;
}

// x B with B (nIn, nOut) an initializer: a DenseLayer without bias, which a following Add of
// nOut biases completes.
void Importer::matMul(const ::onnx::NodeProto& node) {
  onlyAttrs(node, attrs(node), {});
  const Value& x = needAnyLayout(node, 0);
  const bool perStep = x.layout == Layout::StepsMinor;
  if (!perStep && x.type.kind != InputType::Kind::FeedForward)
    fail(node, "expects rows (N, features) or sequences transposed to (N, T, features)");
  const Constant& b = needConstant(node, 1);
  if (!b.isFloat || b.dims.size() != 2) fail(node, "B must be a float matrix");
  const int64_t nIn = b.dims[0], nOut = b.dims[1];
  if (nIn != x.type.size)
    fail(node, fmt::format("B takes {} features, the input has {}", nIn, x.type.size));
  std::vector<float> params(nOut * nIn);
  for (int64_t o = 0; o < nOut; ++o)
    for (int64_t i = 0; i < nIn; ++i) params[o * nIn + i] = b.floats[i * nOut + o];
  if (perStep) {
    // A dense layer at every step: dl4cpp's RnnOutputLayer (its loss is chosen when it is known
    // to be the graph's output, as for a Gemm's OutputLayer).
    auto layer = std::make_shared<RnnOutputLayer>(RnnOutputLayer::Builder(LossFunction::MSE)
                                                      .nIn(nIn)
                                                      .nOut(nOut)
                                                      .hasBias(false)
                                                      .activation(Activation::IDENTITY)
                                                      .build());
    Value v =
        addLayer(node, layer, x, InputType::recurrent(nOut, x.type.length), std::move(params));
    v.layout = Layout::StepsMinor;
    define(node, v);
    entries_.back().foldsBias = true;
    entries_.back().perStep = true;
    return;
  }
  auto layer = std::make_shared<DenseLayer>(DenseLayer::Builder()
                                                .nIn(nIn)
                                                .nOut(nOut)
                                                .hasBias(false)
                                                .activation(Activation::IDENTITY)
                                                .build());
  addLayer(node, layer, x, InputType::feedForward(nOut), std::move(params));
  entries_.back().dense = true;
  entries_.back().foldsBias = true;
}

// Kernel sizes, strides and dilations: positive and bounded.
void checkWindow(const ::onnx::NodeProto& node, const char* what, const std::vector<int64_t>& v) {
  if (v.size() != 2) fail(node, "2-D windows only");
  for (int64_t x : v)
    if (x <= 0 || x > kMaxExtent) fail(node, fmt::format("{} {} out of range", what, x));
}

// The explicit padding (top, left, bottom, right) of a Conv or pooling node, or none for Same
// mode.
std::vector<int64_t> windowPads(const ::onnx::NodeProto& node, const Attrs& a) {
  const std::string autoPad = stringAttr(a, "auto_pad", "NOTSET");
  // SAME_UPPER is dl4cpp's Same mode (the extra padding at the end): an empty result.
  if (autoPad == "SAME_UPPER") return {};
  if (autoPad != "NOTSET" && autoPad != "VALID")
    fail(node,
         fmt::format("auto_pad {} (explicit pads, VALID and SAME_UPPER are imported)", autoPad));
  std::vector<int64_t> pads = intsAttr(a, "pads", {0, 0, 0, 0});
  if (autoPad == "VALID") pads = {0, 0, 0, 0};
  if (pads.size() != 4) fail(node, "2-D windows only");
  for (int64_t p : pads)
    if (p < 0 || p > kMaxExtent) fail(node, fmt::format("padding {} out of range", p));
  return pads;
}

std::string sizeText(const InputType& t) {
  return fmt::format("({}, {}, {})", t.channels, t.height, t.width);
}

// A ConvolutionLayer or SubsamplingLayer with pads (top, left, bottom, right): symmetric ones are
// its padding; asymmetric ones are either what Same mode resolves (checked after the build) or,
// for a convolution, a ZeroPaddingLayer before it.
void Importer::conv(const ::onnx::NodeProto& node) {
  const Attrs a = attrs(node);
  onlyAttrs(node, a, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  Value x = needValue(node, 0);
  const InputType in = imageOf(node, x);
  const Constant& w = needConstant(node, 1);
  if (!w.isFloat || w.dims.size() != 4) fail(node, "W must be a float (M, C, kH, kW) tensor");
  if (intAttr(a, "group", 1) != 1) fail(node, "grouped convolution (group != 1)");
  const int64_t nOut = w.dims[0], nIn = w.dims[1], kH = w.dims[2], kW = w.dims[3];
  if (nIn != in.channels)
    fail(node, fmt::format("W takes {} channels, the input has {}", nIn, in.channels));
  const auto kernel = intsAttr(a, "kernel_shape", {kH, kW});
  if (kernel != std::vector<int64_t>{kH, kW}) fail(node, "kernel_shape disagrees with W");
  const auto strides = intsAttr(a, "strides", {1, 1});
  const auto dilations = intsAttr(a, "dilations", {1, 1});
  checkWindow(node, "stride", strides);
  checkWindow(node, "dilation", dilations);
  std::vector<int64_t> pads = windowPads(node, a);
  const bool same = pads.empty();
  if (!same && (pads[0] != pads[2] || pads[1] != pads[3])) {
    // Zeros around the image, then the window without padding: what the pads compute.
    auto zp = std::make_shared<ZeroPaddingLayer>(
        ZeroPaddingLayer::Builder(pads[0], pads[2], pads[1], pads[3]).build());
    ::onnx::NodeProto padNode = node;
    padNode.set_output(0, node.output(0) + "_pad");
    x = addLayer(padNode, zp, x,
                 InputType::convolutional(in.height + pads[0] + pads[2],
                                          in.width + pads[1] + pads[3], in.channels));
    pads = {0, 0, 0, 0};
  }
  std::vector<float> params;
  const bool hasBias = node.input_size() > 2 && !node.input(2).empty();
  if (hasBias) {
    const Constant& b = needConstant(node, 2);
    if (!b.isFloat || b.numel() != nOut) fail(node, fmt::format("B must be {} biases", nOut));
    params = b.floats;
  }
  params.insert(params.end(), w.floats.begin(), w.floats.end());
  if (same) pads = {0, 0, 0, 0};
  auto layer = std::make_shared<ConvolutionLayer>(
      ConvolutionLayer::Builder(kH, kW)
          .stride(strides[0], strides[1])
          .padding(pads[0], pads[1])
          .convolutionMode(same ? ConvolutionMode::Same : ConvolutionMode::Truncate)
          .dilation(dilations[0], dilations[1])
          .nIn(nIn)
          .nOut(nOut)
          .hasBias(hasBias)
          .activation(Activation::IDENTITY)
          .build());
  const InputType xin = x.type;
  auto outExtent = [](int64_t n, int64_t k, int64_t s, int64_t p, int64_t d) {
    return (n + 2 * p - (k - 1) * d - 1) / s + 1;
  };
  const int64_t oh = same ? (xin.height + strides[0] - 1) / strides[0]
                          : outExtent(xin.height, kH, strides[0], pads[0], dilations[0]);
  const int64_t ow = same ? (xin.width + strides[1] - 1) / strides[1]
                          : outExtent(xin.width, kW, strides[1], pads[1], dilations[1]);
  if (oh <= 0 || ow <= 0) fail(node, "the window is larger than the padded input " + sizeText(xin));
  addLayer(node, layer, x, InputType::convolutional(oh, ow, nOut), std::move(params));
}

void Importer::pool(const ::onnx::NodeProto& node, PoolingType type) {
  const Attrs a = attrs(node);
  if (type == PoolingType::MAX)
    onlyAttrs(
        node, a,
        {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
  else
    onlyAttrs(node, a,
              {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"});
  if (node.output_size() > 1 && !node.output(1).empty()) fail(node, "the Indices output");
  const Value& x = needValue(node, 0);
  const InputType in = imageOf(node, x);
  if (intAttr(a, "ceil_mode", 0) != 0) fail(node, "ceil_mode = 1");
  if (intsAttr(a, "dilations", {1, 1}) != std::vector<int64_t>{1, 1}) fail(node, "dilated pooling");
  const auto kernel = intsAttr(a, "kernel_shape", {});
  const auto strides = intsAttr(a, "strides", {1, 1});
  checkWindow(node, "kernel size", kernel);
  checkWindow(node, "stride", strides);
  std::vector<int64_t> pads = windowPads(node, a);
  const bool sameUpper = pads.empty();
  if (sameUpper) {
    // Same mode's padding, which build() resolves as ONNX does for SAME_UPPER.
    const auto total = [](int64_t n, int64_t k, int64_t s) {
      return std::max<int64_t>(((n + s - 1) / s - 1) * s + k - n, 0);
    };
    const int64_t h = total(in.height, kernel[0], strides[0]),
                  w = total(in.width, kernel[1], strides[1]);
    pads = {h / 2, w / 2, h - h / 2, w - w / 2};
  }
  // Uneven padding is what Same mode resolves (extra on the end), or refused: zeros around the
  // image would change a maximum and an average. build() resolves it, run() checks it.
  const bool same = sameUpper || pads[0] != pads[2] || pads[1] != pads[3];
  if (type == PoolingType::AVG && intAttr(a, "count_include_pad", 0) != 0 &&
      std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }))
    fail(node, "count_include_pad = 1 with padding (dl4cpp averages over the input's values)");
  auto builder = SubsamplingLayer::Builder(type, kernel[0], kernel[1], strides[0], strides[1]);
  if (same)
    builder.convolutionMode(ConvolutionMode::Same);
  else
    builder.padding(pads[0], pads[1]);
  auto layer = std::make_shared<SubsamplingLayer>(builder.build());
  const int64_t oh = (in.height + pads[0] + pads[2] - kernel[0]) / strides[0] + 1;
  const int64_t ow = (in.width + pads[1] + pads[3] - kernel[1]) / strides[1] + 1;
  if (oh <= 0 || ow <= 0) fail(node, "the window is larger than the padded input " + sizeText(in));
  if (same) expectedPads_[node.output(0)] = {node, pads};
  addLayer(node, layer, x, InputType::convolutional(oh, ow, in.channels));
}

void Importer::batchNorm(const ::onnx::NodeProto& node) {
  const Attrs a = attrs(node);
  onlyAttrs(node, a, {"epsilon", "momentum", "spatial", "training_mode"});
  if (intAttr(a, "training_mode", 0) != 0) fail(node, "training_mode = 1");
  if (intAttr(a, "spatial", 1) != 1) fail(node, "spatial = 0");
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty()) fail(node, "the running statistics outputs (training form)");
  const Value& x = needValue(node, 0);
  if (x.type.kind == InputType::Kind::Recurrent) fail(node, "normalisation of sequences");
  const int64_t c = x.type.kind == InputType::Kind::Convolutional ? x.type.channels : x.type.size;
  std::vector<float> params, state;
  for (int i = 1; i <= 4; ++i) {
    const Constant& t = needConstant(node, i);
    if (!t.isFloat || t.numel() != c) fail(node, fmt::format("input {} must hold {} values", i, c));
    (i <= 2 ? params : state)
        .insert((i <= 2 ? params : state).end(), t.floats.begin(), t.floats.end());
  }
  auto layer = std::make_shared<BatchNormalization>(BatchNormalization::Builder()
                                                        .nIn(c)
                                                        .nOut(c)
                                                        .eps(floatAttr(a, "epsilon", 1e-5f))
                                                        .activation(Activation::IDENTITY)
                                                        .build());
  addLayer(node, layer, x, x.type, std::move(params), std::move(state));
}

void Importer::elementWise(const ::onnx::NodeProto& node) {
  onlyAttrs(node, attrs(node), {});
  const std::string& op = node.op_type();
  // One computed tensor and a constant scalar: ScaleVertex, ShiftVertex.
  if (node.input_size() == 2 && (constant(node.input(0)) || constant(node.input(1)))) {
    const bool constFirst = constant(node.input(0)) != nullptr;
    const Constant& c = *constant(node.input(constFirst ? 0 : 1));
    const Value& x = needAnyLayout(node, constFirst ? 1 : 0);
    if (op == "Add" && !constFirst) {
      // A MatMul's bias.
      Entry* e = foldable(node.input(0), x);
      if (e && e->foldsBias && c.isFloat && c.numel() == x.type.size &&
          (c.dims.size() == 1 || (c.dims.size() == 2 && c.dims[0] == 1))) {
        static_cast<FeedForwardLayer&>(*e->layer).hasBias = true;
        e->params.insert(e->params.end(), c.floats.begin(), c.floats.end());
        e->foldsBias = false;
        e->onnxOutput = node.output(0);
        define(node, x);
        return;
      }
    }
    needValue(node, constFirst ? 1 : 0);  // dl4cpp's layout from here on
    if (x.type.kind == InputType::Kind::Recurrent)
      fail(node, "arithmetic on sequences other than a per-step MatMul's bias");
    if (!c.isFloat || c.numel() != 1)
      fail(node, "a constant operand must be one float (broadcasting is not imported)");
    const double v = c.floats[0];
    if (op == "Mul") return void(addVertex(node, std::make_shared<ScaleVertex>(v), {x}, x.type));
    if (op == "Add") return void(addVertex(node, std::make_shared<ShiftVertex>(v), {x}, x.type));
    if (op == "Sub" && !constFirst)
      return void(addVertex(node, std::make_shared<ShiftVertex>(-v), {x}, x.type));
    fail(node, "this constant operand is not imported");
  }
  std::vector<Value> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    inputs.push_back(needValue(node, i));
    if (inputs.back().type.kind == InputType::Kind::Recurrent)
      fail(node, "arithmetic on sequences is not imported");
    if (!sameType(inputs.back().type, inputs[0].type))
      fail(node, "inputs of different shapes (broadcasting is not imported)");
  }
  ElementWiseVertex::Op o;
  if (op == "Add" || op == "Sum")
    o = ElementWiseVertex::Op::Add;
  else if (op == "Sub")
    o = ElementWiseVertex::Op::Subtract;
  else if (op == "Mul")
    o = ElementWiseVertex::Op::Product;
  else if (op == "Mean")
    o = ElementWiseVertex::Op::Average;
  else
    o = ElementWiseVertex::Op::Max;
  if (inputs.size() == 1) return define(node, inputs[0]);
  if (o == ElementWiseVertex::Op::Subtract && inputs.size() != 2) fail(node, "Sub of two inputs");
  addVertex(node, std::make_shared<ElementWiseVertex>(o), inputs, inputs[0].type);
}

// A reshape between images (N, C, H, W) and rows (N, C*H*W) in C order: dl4cpp's
// preprocessors; any other is refused.
void Importer::reshape(const ::onnx::NodeProto& node, const Value& x, int64_t rank,
                       std::vector<int64_t> shape) {
  if (x.type.kind == InputType::Kind::Recurrent) fail(node, "a reshape of sequences");
  const bool image = x.type.kind == InputType::Kind::Convolutional;
  const int64_t size = image ? x.type.channels * x.type.height * x.type.width : x.type.size;
  if (rank == 2) {
    if (!image) return define(node, x);
    auto v = std::make_shared<PreprocessorVertex>(InputPreProcessor::CnnToFeedForward);
    addVertex(node, v, {x}, InputType::feedForward(size));
    return;
  }
  if (rank == 4 && !shape.empty()) {
    // shape (N or -1 or 0, C, H, W).
    const int64_t c = shape[1], h = shape[2], w = shape[3];
    if (c <= 0 || h <= 0 || w <= 0 || c > kMaxExtent || h > kMaxExtent || w > kMaxExtent ||
        c * h > size || c * h * w != size)
      fail(node, fmt::format("reshape of {} values to images ({}, {}, {})", size, c, h, w));
    if (image && x.type.channels == c && x.type.height == h && x.type.width == w)
      return define(node, x);
    if (image) fail(node, "a reshape of images to images of another shape");
    auto v = std::make_shared<PreprocessorVertex>(InputPreProcessor::FeedForwardToCnn, h, w, c);
    addVertex(node, v, {x}, InputType::convolutional(h, w, c));
    return;
  }
  fail(node, "a reshape other than images to rows (a flatten) or rows to images");
}

void Importer::pad(const ::onnx::NodeProto& node) {
  const Attrs a = attrs(node);
  onlyAttrs(node, a, {"mode"});
  if (stringAttr(a, "mode", "constant") != "constant") fail(node, "a mode other than constant");
  const Value& x = needValue(node, 0);
  imageOf(node, x);
  const Constant& pads = needConstant(node, 1);
  if (pads.isFloat || pads.ints.size() != 8) fail(node, "pads must be 8 int64 values");
  if (node.input_size() > 2 && !node.input(2).empty()) {
    const Constant& v = needConstant(node, 2);
    if (!v.isFloat || v.numel() != 1 || v.floats[0] != 0)
      fail(node, "a padding value other than 0");
  }
  if (node.input_size() > 3 && !node.input(3).empty()) fail(node, "the axes input");
  const auto& p = pads.ints;
  if (p[0] || p[1] || p[4] || p[5]) fail(node, "padding of the batch or channel axis");
  for (int64_t v : p)
    if (v < 0 || v > kMaxExtent) fail(node, fmt::format("padding {} (negative: cropping)", v));
  auto layer =
      std::make_shared<ZeroPaddingLayer>(ZeroPaddingLayer::Builder(p[2], p[6], p[3], p[7]).build());
  addLayer(node, layer, x,
           InputType::convolutional(x.type.height + p[2] + p[6], x.type.width + p[3] + p[7],
                                    x.type.channels));
}

void Importer::node(const ::onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  // The directions of a bidirectional Y combined (Bidirectional's mode).
  if ((op == "Reshape" || op == "ReduceSum" || op == "ReduceProd" || op == "ReduceMean") &&
      n.input_size() > 0 && n.output_size() > 0)
    if (auto it = values_.find(n.input(0));
        it != values_.end() && it->second.layout == Layout::BiYLast)
      return combineDirections(n, it->second);
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    fail(n, fmt::format("operator domain \"{}\" is not imported", n.domain()));
  // ONNX's checker holds each node to its schema's arity; a node without an output computes
  // nothing a graph could use.
  if (n.output_size() < 1 || n.output(0).empty()) fail(n, "no output");
  if (op != "Constant" && (n.input_size() < 1 || n.input(0).empty())) fail(n, "no first input");
  if (op == "Constant") {
    const Attrs a = attrs(n);
    onlyAttrs(n, a, {"value"});
    if (!a.count("value")) fail(n, "a Constant without a tensor value");
    constants_[n.output(0)] = readTensor(a.at("value")->t());
    return;
  }
  for (int i = 1; i < n.output_size(); ++i)
    if (!n.output(i).empty() && consumers_[n.output(i)] + graphOutputs_.count(n.output(i)) > 0 &&
        op != "Dropout")
      fail(n, "a second output that is used");
  if (op == "Gemm") return gemm(n);
  if (op == "MatMul") return matMul(n);
  if (op == "Conv") return conv(n);
  if (op == "MaxPool") return pool(n, PoolingType::MAX);
  if (op == "AveragePool") return pool(n, PoolingType::AVG);
  if (op == "BatchNormalization") return batchNorm(n);
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    onlyAttrs(n, attrs(n), {});
    const Value& x = needValue(n, 0);
    const InputType in = imageOf(n, x);
    auto layer = std::make_shared<GlobalPoolingLayer>(
        GlobalPoolingLayer::Builder(op == "GlobalMaxPool" ? PoolingType::MAX : PoolingType::AVG)
            .collapseDimensions(false)
            .build());
    addLayer(n, layer, x, InputType::convolutional(1, 1, in.channels));
    return;
  }
  if (op == "GlobalLpPool" || op == "ReduceSum") {
    const Attrs a = attrs(n);
    const Value& x = needValue(n, 0);
    const InputType in = imageOf(n, x);
    GlobalPoolingLayer::Builder builder(op == "ReduceSum" ? PoolingType::SUM : PoolingType::PNORM);
    if (op == "GlobalLpPool") {
      onlyAttrs(n, a, {"p"});
      builder.pnorm(intAttr(a, "p", 2));
    } else {
      // Over H and W, kept (axes an attribute before opset 13, an input since).
      onlyAttrs(n, a, {"axes", "keepdims", "noop_with_empty_axes"});
      std::vector<int64_t> axes = intsAttr(a, "axes", {});
      if (n.input_size() > 1 && !n.input(1).empty()) {
        const Constant& c = needConstant(n, 1);
        if (c.isFloat) fail(n, "axes must be int64 values");
        axes = c.ints;
      }
      for (int64_t& axis : axes)
        if (axis < 0) axis += 4;
      std::sort(axes.begin(), axes.end());
      if (axes != std::vector<int64_t>{2, 3} || intAttr(a, "keepdims", 1) != 1 ||
          intAttr(a, "noop_with_empty_axes", 0) != 0)
        fail(n, "a sum other than over H and W with keepdims = 1 (a global sum pooling)");
    }
    auto layer = std::make_shared<GlobalPoolingLayer>(builder.collapseDimensions(false).build());
    addLayer(n, layer, x, InputType::convolutional(1, 1, in.channels));
    return;
  }
  if (op == "LRN") {
    const Attrs a = attrs(n);
    onlyAttrs(n, a, {"alpha", "beta", "bias", "size"});
    const Value& x = needValue(n, 0);
    imageOf(n, x);
    if (!a.count("size")) fail(n, "no size");
    const int64_t size = intAttr(a, "size", 0);
    if (size <= 0 || size % 2 == 0)
      fail(n, fmt::format("size {} (dl4cpp's window is odd and centred)", size));
    // ONNX divides alpha by the size; dl4cpp's alpha multiplies the sum itself.
    auto layer = std::make_shared<LocalResponseNormalization>(
        LocalResponseNormalization::Builder(floatAttr(a, "bias", 1), static_cast<double>(size),
                                            floatAttr(a, "alpha", 1e-4f) / double(size),
                                            floatAttr(a, "beta", 0.75f))
            .build());
    addLayer(n, layer, x, x.type);
    return;
  }
  if (op == "Relu" || op == "Tanh" || op == "Sigmoid" || op == "Softplus") {
    onlyAttrs(n, attrs(n), {});
    return activation(n, op == "Relu"      ? Activation::RELU
                         : op == "Tanh"    ? Activation::TANH
                         : op == "Sigmoid" ? Activation::SIGMOID
                                           : Activation::SOFTPLUS);
  }
  if (op == "LeakyRelu") {
    const Attrs a = attrs(n);
    onlyAttrs(n, a, {"alpha"});
    const float alpha = floatAttr(a, "alpha", 0.01f);
    // dl4cpp's backward pass reads the input's sign from the output, which a negative slope flips.
    if (!(alpha >= 0) || !std::isfinite(alpha))
      fail(n, fmt::format("alpha {} (dl4cpp's LEAKYRELU takes a finite alpha >= 0)", alpha));
    return activation(n, Activation::LEAKYRELU, alpha);
  }
  if (op == "Elu") {
    const Attrs a = attrs(n);
    onlyAttrs(n, a, {"alpha"});
    if (floatAttr(a, "alpha", 1) != 1) fail(n, "alpha != 1 (dl4cpp's ELU has alpha 1)");
    return activation(n, Activation::ELU);
  }
  if (op == "Selu") {
    const Attrs a = attrs(n);
    onlyAttrs(n, a, {"alpha", "gamma"});
    if (floatAttr(a, "alpha", float(kSeluAlpha)) != float(kSeluAlpha) ||
        floatAttr(a, "gamma", float(kSeluLambda)) != float(kSeluLambda))
      fail(n, "alpha and gamma other than SELU's constants");
    return activation(n, Activation::SELU);
  }
  if (op == "HardSigmoid") {
    const Attrs a = attrs(n);
    onlyAttrs(n, a, {"alpha", "beta"});
    if (floatAttr(a, "alpha", 0.2f) != 0.2f || floatAttr(a, "beta", 0.5f) != 0.5f)
      fail(n, "alpha and beta other than 0.2 and 0.5 (dl4cpp's HARDSIGMOID)");
    return activation(n, Activation::HARDSIGMOID);
  }
  if (op == "Clip") {
    onlyAttrs(n, attrs(n), {});
    auto bound = [&](int i) -> std::optional<float> {
      if (n.input_size() <= i || n.input(i).empty()) return std::nullopt;
      const Constant& c = needConstant(n, i);
      if (!c.isFloat || c.numel() != 1) fail(n, "bounds must be float scalars");
      return c.floats[0];
    };
    const auto lo = bound(1), hi = bound(2);
    if (lo == -1.0f && hi == 1.0f) return activation(n, Activation::HARDTANH);
    if (lo == 0.0f && hi == 6.0f) return activation(n, Activation::RELU6);
    if (lo == 0.0f && !hi) return activation(n, Activation::RELU);
    fail(n, "bounds other than [-1, 1], [0, 6] or [0, inf) (HARDTANH, RELU6, RELU)");
  }
  if (op == "Softmax" || op == "LogSoftmax") {
    const Attrs a = attrs(n);
    onlyAttrs(n, a, {"axis"});
    const Value& x = needValue(n, 0);
    const int64_t rank = x.type.kind == InputType::Kind::Convolutional ? 4
                         : x.type.kind == InputType::Kind::Recurrent   ? 3
                                                                       : 2;
    int64_t axis = intAttr(a, "axis", opset_ >= 13 ? -1 : 1);
    if (axis < 0) axis += rank;
    // dl4cpp's softmax is over dimension 1 (the channels of each pixel of images, the features
    // of each step of sequences); before opset 13 ONNX's is over everything from `axis` on, the
    // same only for rows.
    if (axis != 1 || (rank != 2 && opset_ < 13))
      fail(n, fmt::format("softmax over axis {} of a rank-{} tensor at opset {} (dl4cpp's is over "
                          "dimension 1 alone)",
                          intAttr(a, "axis", opset_ >= 13 ? -1 : 1), rank, opset_));
    return activation(n, op == "Softmax" ? Activation::SOFTMAX : Activation::LOGSOFTMAX);
  }
  if (op == "Dropout") {
    const Attrs a = attrs(n);
    onlyAttrs(n, a, {"seed", "ratio", "is_test"});
    if (n.input_size() > 2 && !n.input(2).empty()) {
      const Constant* t = constant(n.input(2));
      if (!t || (t->isFloat ? t->floats[0] != 0 : t->ints.empty() || t->ints[0] != 0))
        fail(n, "training_mode that is not a constant false");
    }
    if (n.output_size() > 1 && !n.output(1).empty() &&
        consumers_[n.output(1)] + graphOutputs_.count(n.output(1)) > 0)
      fail(n, "the mask output");
    return define(n, needValue(n, 0));
  }
  if (op == "Identity") {
    onlyAttrs(n, attrs(n), {});
    if (const Constant* c = constant(n.input(0))) {
      constants_[n.output(0)] = *c;
      return;
    }
    return define(n, needValue(n, 0));
  }
  if (op == "Flatten") {
    const Attrs a = attrs(n);
    onlyAttrs(n, a, {"axis"});
    if (intAttr(a, "axis", 1) != 1) fail(n, "axis other than 1");
    return reshape(n, needValue(n, 0), 2, {});
  }
  if (op == "Reshape") {
    const Attrs a = attrs(n);
    onlyAttrs(n, a, {"allowzero"});
    const Value& x = needValue(n, 0);
    const Constant& s = needConstant(n, 1);
    if (s.isFloat || s.dims.size() != 1) fail(n, "shape must be int64 values");
    const bool image = x.type.kind == InputType::Kind::Convolutional;
    const int64_t size = image ? x.type.channels * x.type.height * x.type.width : x.type.size;
    const auto& v = s.ints;
    const bool allowZero = intAttr(a, "allowzero", 0) != 0;
    // The batch dimension first: -1, 0 (copied), or nothing fixed.
    if (v.empty() || !(v[0] == -1 || (v[0] == 0 && !allowZero)))
      fail(n, "a shape whose first dimension is not the batch (-1 or 0)");
    if (v.size() == 2 && (v[1] == size || (v[1] == -1 && v[0] == 0))) return reshape(n, x, 2, {});
    if (v.size() == 4) return reshape(n, x, 4, v);
    fail(n, "a reshape other than images to rows (a flatten) or rows to images");
  }
  if (op == "Concat") {
    const Attrs a = attrs(n);
    onlyAttrs(n, a, {"axis"});
    std::vector<Value> inputs;
    inputs.reserve(static_cast<size_t>(n.input_size()));
    for (int i = 0; i < n.input_size(); ++i) {
      inputs.push_back(needValue(n, i));
      if (inputs.back().type.kind == InputType::Kind::Recurrent)
        fail(n, "concatenation of sequences is not imported");
    }
    const int64_t rank = inputs[0].type.kind == InputType::Kind::Convolutional ? 4 : 2;
    int64_t axis = intAttr(a, "axis", 1);
    if (axis < 0) axis += rank;
    if (axis != 1) fail(n, "concatenation along an axis other than 1");
    InputType out = inputs[0].type;
    for (size_t i = 1; i < inputs.size(); ++i) {
      const InputType& t = inputs[i].type;
      if (t.kind != out.kind || (rank == 4 && (t.height != out.height || t.width != out.width)))
        fail(n, "inputs of different kinds or image sizes");
      if (rank == 4)
        out.channels += t.channels;
      else
        out.size += t.size;
    }
    if (inputs.size() == 1) return define(n, inputs[0]);
    addVertex(n, std::make_shared<MergeVertex>(), inputs, out);
    return;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Max" || op == "Sum" || op == "Mean")
    return elementWise(n);
  if (op == "Pad") return pad(n);
  if (op == "LSTM" || op == "RNN") return recurrent(n);
  if (op == "Transpose" || op == "Squeeze") return relayout(n);
  if (op == "Slice") return lastStep(n);
  fail(n, "operator not supported by the importer (supported: docs/onnx.md)");
}

// The ONNX name of a recurrent activation function as dl4cpp's (ONNX's HardSigmoid defaults in an
// LSTM or RNN, alpha 0.2 and beta 0.5, are dl4cpp's HARDSIGMOID).
Activation recurrentActivation(const ::onnx::NodeProto& node, const std::string& name) {
  if (name == "Sigmoid") return Activation::SIGMOID;
  if (name == "Tanh") return Activation::TANH;
  if (name == "Relu") return Activation::RELU;
  if (name == "HardSigmoid") return Activation::HARDSIGMOID;
  fail(node, fmt::format("activation {} (Sigmoid, Tanh, Relu and HardSigmoid are imported)", name));
}

// LSTM or RNN (forward or bidirectional, initial state zero, every step real) of X (T, N, F) as
// dl4cpp's LSTM (GravesLSTM with peepholes P) or SimpleRnn, in a Bidirectional for both
// directions (its mode set by what combines Y's directions: combineDirections). The weights are
// converted by RecurrentImport.h.
void Importer::recurrent(const ::onnx::NodeProto& node) {
  const bool isLstm = node.op_type() == "LSTM";
  const Attrs a = attrs(node);
  if (isLstm)
    onlyAttrs(node, a, {"hidden_size", "direction", "activations", "input_forget", "layout"});
  else
    onlyAttrs(node, a, {"hidden_size", "direction", "activations", "layout"});
  const std::string direction = stringAttr(a, "direction", "forward");
  if (direction != "forward" && direction != "bidirectional")
    fail(node, "direction " + direction + " (forward and bidirectional are imported)");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (intAttr(a, "input_forget", 0) != 0) fail(node, "input_forget = 1 (coupled gates)");
  if (intAttr(a, "layout", 0) != 0) fail(node, "layout = 1 (batch first)");
  if (node.input_size() > 4 && !node.input(4).empty())
    fail(node,
         "sequence_lens (sequences of different lengths; dl4cpp masks them instead, which "
         "an ONNX model cannot carry)");
  if ((node.input_size() > 5 && !node.input(5).empty()) ||
      (node.input_size() > 6 && !node.input(6).empty()))
    fail(node, "an initial state (dl4cpp's recurrent layers start every sequence at zero)");
  const Value& x = needAnyLayout(node, 0);
  if (x.layout != Layout::StepsMajor)
    fail(node, "X must be sequences transposed to (T, N, F) (a Transpose (2, 0, 1) of (N, F, T))");
  const int64_t f = x.type.size, gates = isLstm ? 4 : 1;
  const Constant& w = needConstant(node, 1);
  const Constant& r = needConstant(node, 2);
  if (!w.isFloat || !r.isFloat || w.dims.size() != 3 || r.dims.size() != 3 || w.dims[0] != dirs ||
      r.dims[0] != dirs || w.dims[1] % gates != 0 || w.dims[2] != f)
    fail(node, fmt::format("W must be ({}, {}H, {}) and R ({}, {}H, H) float tensors", dirs, gates,
                           f, dirs, gates));
  const int64_t h = w.dims[1] / gates;
  if (h <= 0 || r.dims[1] != gates * h || r.dims[2] != h)
    fail(node, fmt::format("R must be ({}, {}, {})", dirs, gates * h, h));
  if (a.count("hidden_size") && intAttr(a, "hidden_size", 0) != h)
    fail(node, fmt::format("hidden_size {} but W holds {}", intAttr(a, "hidden_size", 0), h));
  const Constant* b = nullptr;
  if (node.input_size() > 3 && !node.input(3).empty()) {
    b = &needConstant(node, 3);
    if (!b->isFloat || b->dims.size() != 2 || b->dims[0] != dirs || b->dims[1] != 2 * gates * h)
      fail(node, fmt::format("B must be ({}, {})", dirs, 2 * gates * h));
  }
  const Constant* p = nullptr;
  if (node.input_size() > 7 && !node.input(7).empty()) {
    p = &needConstant(node, 7);
    if (!p->isFloat || p->dims.size() != 2 || p->dims[0] != dirs || p->dims[1] != 3 * h)
      fail(node, fmt::format("P must be ({}, {})", dirs, 3 * h));
  }
  // Activations: per direction, the gates' and the cell's two (LSTM) or one (RNN); dl4cpp's layer
  // has one set, so both directions must agree.
  const std::vector<std::string> defaults =
      isLstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
             : std::vector<std::string>{"Tanh"};
  std::vector<std::string> names;
  if (auto it = a.find("activations"); it != a.end())
    names.assign(it->second->strings().begin(), it->second->strings().end());
  else
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  const auto perDirection = static_cast<int64_t>(defaults.size());
  if (static_cast<int64_t>(names.size()) != perDirection * dirs)
    fail(node, fmt::format("activations must name {} functions ({} per direction)",
                           perDirection * dirs, perDirection));
  for (int64_t i = perDirection; i < perDirection * dirs; ++i)
    if (names[static_cast<size_t>(i)] != names[static_cast<size_t>(i - perDirection)])
      fail(node, "the two directions' activations differ (dl4cpp's Bidirectional wraps one layer)");
  std::shared_ptr<Layer> cell;
  RecurrentCell kind = RecurrentCell::SimpleRnn;
  if (isLstm) {
    const Activation gate = recurrentActivation(node, names[0]);
    const Activation act = recurrentActivation(node, names[1]);
    if (recurrentActivation(node, names[2]) != act)
      fail(node, "the cell's two activations differ (dl4cpp's LSTM uses one for both)");
    if (p) {
      kind = RecurrentCell::GravesLstm;
      cell = std::make_shared<GravesLSTM>(GravesLSTM::Builder()
                                              .nIn(f)
                                              .nOut(h)
                                              .activation(act)
                                              .gateActivationFunction(gate)
                                              .build());
    } else {
      kind = RecurrentCell::Lstm;
      cell = std::make_shared<LSTM>(
          LSTM::Builder().nIn(f).nOut(h).activation(act).gateActivationFunction(gate).build());
    }
  } else {
    cell = std::make_shared<SimpleRnn>(SimpleRnn::Builder()
                                           .nIn(f)
                                           .nOut(h)
                                           .activation(recurrentActivation(node, names[0]))
                                           .build());
  }
  std::vector<float> params;
  for (int64_t d = 0; d < dirs; ++d) {
    const auto slice = [d](const Constant* c) {
      if (!c) return std::span<const float>();
      const auto per = static_cast<size_t>(c->numel() / c->dims[0]);
      return std::span<const float>(c->floats).subspan(static_cast<size_t>(d) * per, per);
    };
    const std::vector<float> one =
        dl4cppRecurrentParams(kind, {f, h, slice(&w), slice(&r), slice(b), slice(p)});
    params.insert(params.end(), one.begin(), one.end());
  }
  std::shared_ptr<Layer> layer = cell;
  if (dirs == 2) layer = std::make_shared<Bidirectional>(Bidirectional::Mode::CONCAT, *cell);
  Value v =
      addLayer(node, layer, x, InputType::recurrent(dirs * h, x.type.length), std::move(params));
  v.layout = dirs == 2 ? Layout::BiY : Layout::LstmY;
  define(node, v);
}

// A bidirectional Y (N, 2, H, T) combined over its directions: Reshape to (N, 2H, T) stacks them
// (CONCAT, forward's first), ReduceSum, ReduceProd or ReduceMean over axis 1 (not kept) adds,
// multiplies or averages them: the Bidirectional's mode.
void Importer::combineDirections(const ::onnx::NodeProto& node, const Value& y) {
  const std::string& op = node.op_type();
  Entry* e = foldable(node.input(0), y);
  auto* bi = e && e->layer ? dynamic_cast<Bidirectional*>(e->layer.get()) : nullptr;
  if (!bi) fail(node, "a bidirectional output read by more than this node");
  const int64_t h = y.type.size / 2;
  const Attrs a = attrs(node);
  Bidirectional::Mode mode = Bidirectional::Mode::CONCAT;
  if (op == "Reshape") {
    onlyAttrs(node, a, {"allowzero"});
    const Constant& s = needConstant(node, 1);
    const bool allowZero = intAttr(a, "allowzero", 0) != 0;
    if (s.isFloat || s.ints.size() != 3 || !((s.ints[0] == 0 && !allowZero) || s.ints[0] == -1) ||
        s.ints[1] != 2 * h || !(s.ints[2] == -1 || (s.ints[2] == 0 && !allowZero)) ||
        s.ints[0] == s.ints[2])
      fail(node,
           fmt::format("a reshape of a bidirectional output other than to (N, {}, T)", 2 * h));
  } else {
    onlyAttrs(node, a, {"axes", "keepdims"});
    std::vector<int64_t> axes = intsAttr(a, "axes", {});
    if (node.input_size() > 1 && !node.input(1).empty()) {
      const Constant& c = needConstant(node, 1);
      if (c.isFloat) fail(node, "axes must be int64 values");
      axes = c.ints;
    }
    if ((axes != std::vector<int64_t>{1} && axes != std::vector<int64_t>{-3}) ||
        intAttr(a, "keepdims", 1) != 0)
      fail(node,
           "a reduction of a bidirectional output other than over its directions (axis 1, "
           "keepdims 0)");
    mode = op == "ReduceSum"    ? Bidirectional::Mode::ADD
           : op == "ReduceProd" ? Bidirectional::Mode::MUL
                                : Bidirectional::Mode::AVERAGE;
  }
  bi->mode = mode;
  e->onnxOutput = node.output(0);
  Value v = y;
  v.layout = Layout::Dl4cpp;
  if (mode != Bidirectional::Mode::CONCAT) v.type.size = h;
  define(node, v);
}

// Slice of the last step of sequences (starts -1, ends past the end, axis 2) computed by a
// recurrent layer that only this node reads: with the Squeeze of axis 2 after it, the layer
// becomes LastTimeStep around it.
void Importer::lastTimeStep(const ::onnx::NodeProto& node, const Value& x) {
  Entry* e = foldable(node.input(0), x);
  if (!e) fail(node, "the last step of sequences read by more than this node");
  e->layer = std::make_shared<LastTimeStep>(*e->layer);
  e->onnxOutput = node.output(0);
  define(node, Value{x.vertex, InputType::feedForward(x.type.size)});
}

void Importer::lastStep(const ::onnx::NodeProto& node) {
  onlyAttrs(node, attrs(node), {});
  const Value& x = needValue(node, 0);
  auto ints = [&](int i) -> std::vector<int64_t> {
    if (node.input_size() <= i || node.input(i).empty()) return {};
    const Constant& c = needConstant(node, i);
    if (c.isFloat) fail(node, "starts, ends, axes and steps must be int64 values");
    return c.ints;
  };
  const std::vector<int64_t> starts = ints(1), ends = ints(2), axes = ints(3), steps = ints(4);
  Entry* e = foldable(node.input(0), x);
  if (x.type.kind != InputType::Kind::Recurrent || starts != std::vector<int64_t>{-1} ||
      ends.size() != 1 || ends[0] < std::numeric_limits<int32_t>::max() ||
      (axes != std::vector<int64_t>{2} && axes != std::vector<int64_t>{-1}) ||
      !(steps.empty() || steps == std::vector<int64_t>{1}))
    fail(node, "a slice other than of the last step of sequences (N, F, T)");
  if (!e || !e->layer || !e->layer->consumesSequences())
    fail(node, "the last step of sequences not computed by a recurrent layer only it reads");
  e->onnxOutput = node.output(0);
  Value v = x;
  v.layout = Layout::LastStep;
  define(node, v);
}

// Transpose and Squeeze between the layouts of sequences (Layout): the value itself, relabelled.
void Importer::relayout(const ::onnx::NodeProto& node) {
  const Attrs a = attrs(node);
  const Value& x = needAnyLayout(node, 0);
  const bool sequence = x.type.kind == InputType::Kind::Recurrent;
  using P = std::vector<int64_t>;
  P axes;  // Squeeze's: an attribute before opset 13, an input since
  if (node.op_type() == "Squeeze") {
    onlyAttrs(node, a, {"axes"});
    axes = intsAttr(a, "axes", {});
    if (node.input_size() > 1 && !node.input(1).empty()) {
      const Constant& c = needConstant(node, 1);
      if (c.isFloat) fail(node, "axes must be int64 values");
      axes = c.ints;
    }
    if (x.layout == Layout::LastStep && (axes == P{2} || axes == P{-1}))
      return lastTimeStep(node, x);
  }
  const auto relaid = [&]() -> Layout {
    if (node.op_type() == "Transpose") {
      onlyAttrs(node, a, {"perm"});
      const P perm = intsAttr(a, "perm", {});
      if (sequence && x.layout == Layout::Dl4cpp && perm == P{2, 0, 1}) return Layout::StepsMajor;
      if (sequence && x.layout == Layout::Dl4cpp && perm == P{0, 2, 1}) return Layout::StepsMinor;
      if ((x.layout == Layout::StepsMajor && perm == P{1, 2, 0}) ||
          (x.layout == Layout::StepsMinor && perm == P{0, 2, 1}))
        return Layout::Dl4cpp;
      if (x.layout == Layout::LstmY && perm == P{1, 2, 3, 0}) return Layout::LstmYLast;
      if (x.layout == Layout::BiY && perm == P{2, 1, 3, 0}) return Layout::BiYLast;
      fail(node,
           "a transpose other than between the layouts of sequences (N, F, T), (T, N, F) "
           "and (N, T, F), or of a recurrent Y (T, D, N, H) to (D, N, H, T) or (N, D, H, T)");
    }
    if (x.layout == Layout::LstmYLast && (axes == P{0} || axes == P{-4})) return Layout::Dl4cpp;
    if (x.layout == Layout::LstmY && (axes == P{1} || axes == P{-3})) return Layout::StepsMajor;
    fail(node, "a squeeze other than of a recurrent Y's direction axis or a last step's axis");
  };
  const Layout to = relaid();
  // The layer computing x now computes this node's output (an activation may fold into it).
  if (Entry* e = foldable(node.input(0), x)) e->onnxOutput = node.output(0);
  Value v = x;
  v.layout = to;
  define(node, v);
}

ComputationGraph Importer::run() {
  for (const auto& o : model_.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = static_cast<int>(o.version());
  if (opset_ < kMinImportOpset || opset_ > kMaxImportOpset)
    throw ModelExchangeError(fmt::format("ONNX import: opset {} (opsets {} to {} are imported)",
                                         opset_, kMinImportOpset, kMaxImportOpset));
  const ::onnx::GraphProto& g = model_.graph();
  // sequence_lens is int32, which the tensor reader refuses: say first what the node needs it for.
  for (const auto& n : g.node())
    if ((n.op_type() == "LSTM" || n.op_type() == "RNN") && n.input_size() > 4 &&
        !n.input(4).empty())
      fail(n,
           "sequence_lens (sequences of different lengths; dl4cpp masks them instead, which an "
           "ONNX model cannot carry)");
  for (const auto& t : g.initializer()) constants_[t.name()] = readTensor(t);
  for (const auto& n : g.node())
    for (const auto& in : n.input()) ++consumers_[in];
  for (const auto& o : g.output()) graphOutputs_.insert(o.name());

  for (const auto& in : g.input()) {
    if (constants_.count(in.name())) continue;  // IR < 4 lists initializers as inputs
    const auto& tt = in.type().tensor_type();
    if (!in.type().has_tensor_type() || tt.elem_type() != ::onnx::TensorProto::FLOAT)
      throw ModelExchangeError(
          fmt::format("ONNX import: input \"{}\": float tensors are imported", in.name()));
    std::vector<int64_t> dims;
    for (int i = 1; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      // Sequences (N, F, T) of any length: T symbolic.
      if (tt.shape().dim_size() == 3 && i == 2 && !d.has_dim_value()) {
        dims.push_back(0);
        continue;
      }
      if (!d.has_dim_value() || d.dim_value() <= 0 || d.dim_value() > kMaxExtent)
        throw ModelExchangeError(fmt::format(
            "ONNX import: input \"{}\": dimension {} must be fixed (only the batch may vary) "
            "and at most 2^24",
            in.name(), i));
      dims.push_back(d.dim_value());
      if (std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>()) >
          kMaxTensorValues)
        throw ModelExchangeError(
            fmt::format("ONNX import: input \"{}\": more than 2^31 values per example", in.name()));
    }
    InputType type;
    if (tt.shape().dim_size() == 2)
      type = InputType::feedForward(dims[0]);
    else if (tt.shape().dim_size() == 3)
      type = InputType::recurrent(dims[0], dims[1]);
    else if (tt.shape().dim_size() == 4)
      type = InputType::convolutional(dims[1], dims[2], dims[0]);
    else
      throw ModelExchangeError(fmt::format(
          "ONNX import: input \"{}\": rank {} (rows (N, F), sequences (N, F, T) and images (N, C, "
          "H, W) are imported)",
          in.name(), tt.shape().dim_size()));
    const std::string name = uniqueName(in.name());
    inputNames_.push_back(name);
    inputTypes_.push_back(type);
    values_[in.name()] = {name, type};
  }
  if (inputNames_.empty()) throw ModelExchangeError("ONNX import: the model has no input");
  for (const auto& n : g.node()) node(n);

  // The graph outputs; a Gemm whose activation is the output becomes the OutputLayer.
  std::vector<std::string> outputs;
  for (const auto& o : g.output()) {
    auto it = values_.find(o.name());
    if (it == values_.end())
      throw ModelExchangeError(
          fmt::format("ONNX import: output \"{}\" is a constant or not computed", o.name()));
    if (it->second.layout != Layout::Dl4cpp)
      throw ModelExchangeError(fmt::format(
          "ONNX import: output \"{}\" is a transposed sequence (dl4cpp's outputs are (N, F, T))",
          o.name()));
    std::string vertex = it->second.vertex;
    // An output that is a network input or another output (Identity, Dropout): an identity
    // layer of its own, as a graph output is a vertex.
    if (std::count(inputNames_.begin(), inputNames_.end(), vertex) ||
        std::count(outputs.begin(), outputs.end(), vertex)) {
      Entry e;
      e.name = uniqueName(o.name());
      e.layer =
          std::make_shared<ActivationLayer>(ActivationLayer::Builder(Activation::IDENTITY).build());
      e.inputs = {vertex};
      e.onnxOutput = o.name();
      entryOf_[e.name] = entries_.size();
      entries_.push_back(std::move(e));
      vertex = entries_.back().name;
    }
    // The vertex computing an output is named after it (a layer is otherwise named after the
    // tensor its first node computes), so that users find the head by the ONNX output's name.
    if (vertex != o.name() && !names_.count(o.name()) && entryOf_.count(vertex)) {
      const size_t index = entryOf_.at(vertex);
      entries_[index].name = o.name();
      for (auto& e : entries_) std::replace(e.inputs.begin(), e.inputs.end(), vertex, o.name());
      std::replace(outputs.begin(), outputs.end(), vertex, o.name());
      for (auto& [tensor, value] : values_)
        if (value.vertex == vertex) value.vertex = o.name();
      entryOf_.erase(vertex);
      entryOf_[o.name()] = index;
      names_.insert(o.name());
      vertex = o.name();
    }
    outputs.push_back(vertex);
  }
  GraphBuilder builder = NeuralNetConfiguration::Builder().graphBuilder();
  builder.addInputs(inputNames_).setInputTypes(inputTypes_);
  for (auto& e : entries_) {
    if (e.layer) {
      const bool isOutput = std::count(outputs.begin(), outputs.end(), e.name) > 0;
      const Activation act = e.layer->activation.value_or(Activation::IDENTITY);
      if (e.dense && isOutput && (act == Activation::SOFTMAX || act == Activation::IDENTITY)) {
        const auto& d = static_cast<const DenseLayer&>(*e.layer);
        auto out = std::make_shared<OutputLayer>(OutputLayer::Builder(act == Activation::SOFTMAX
                                                                          ? LossFunction::MCXENT
                                                                          : LossFunction::MSE)
                                                     .nIn(d.nIn)
                                                     .nOut(d.nOut)
                                                     .hasBias(d.hasBias)
                                                     .activation(act)
                                                     .build());
        e.layer = out;
      }
      if (e.perStep) {
        if (!isOutput || (act != Activation::SOFTMAX && act != Activation::IDENTITY))
          throw ModelExchangeError(fmt::format(
              "ONNX import: \"{}\": a MatMul at every step of sequences is imported as an "
              "RnnOutputLayer, so it must compute a graph output (with Softmax or nothing after "
              "it)",
              e.onnxOutput));
        auto& r = static_cast<RnnOutputLayer&>(*e.layer);
        r.lossFunction = act == Activation::SOFTMAX ? LossFunction::MCXENT : LossFunction::MSE;
      }
      e.layer->frozen = !options_.trainable && !e.params.empty();
      builder.addLayer(e.name, *e.layer, e.inputs);
    } else {
      builder.addVertex(e.name, *e.vertex, e.inputs);
    }
  }
  builder.setOutputs(outputs);
  ComputationGraphConfiguration conf;
  try {
    conf = builder.build();
  } catch (const ConfigError& e) {
    throw ModelExchangeError(
        fmt::format("ONNX import: the model maps to no valid dl4cpp graph: {}", e.what()));
  }
  std::vector<float> params, state;
  for (const auto& v : conf.vertices) {
    if (!v.isLayer()) continue;
    auto it = entryOf_.find(v.name);
    const Entry* e = it == entryOf_.end() ? nullptr : &entries_[it->second];
    const auto numParams = static_cast<size_t>(v.layer->numParams());
    const auto stateSize = static_cast<size_t>(v.layer->stateSize());
    if ((e ? e->params.size() : 0) != numParams || (e ? e->state.size() : 0) != stateSize)
      throw ModelExchangeError(fmt::format(
          "ONNX import: layer \"{}\" ({}) holds {} parameters and {} state values, the model "
          "gives {} and {}",
          v.name, v.layer->typeName(), numParams, stateSize, e ? e->params.size() : 0,
          e ? e->state.size() : 0));
    if (e) {
      params.insert(params.end(), e->params.begin(), e->params.end());
      state.insert(state.end(), e->state.begin(), e->state.end());
    }
    if (e) {
      auto pads = expectedPads_.find(e->onnxOutput);
      const auto* pool = dynamic_cast<const SubsamplingLayer*>(v.layer.get());
      if (pads != expectedPads_.end() && pool) {
        const WindowGeometry& g = pool->geometry;
        if (std::vector<int64_t>{g.padTop, g.padLeft, g.padBottom, g.padRight} !=
            pads->second.second)
          fail(pads->second.first,
               "uneven padding other than Same mode's (dl4cpp pads pooling windows evenly)");
      }
    }
    // What the builder resolved must be what the node computes: the output shape (of the tensor
    // the layer's entry computes last, after what folded into it).
    const Value* produced = nullptr;
    if (auto out = e ? values_.find(e->onnxOutput) : values_.end(); out != values_.end())
      produced = &out->second;
    else
      for (const auto& [tensor, value] : values_)
        if (value.vertex == v.name) produced = &value;
    if (produced && !sameType(produced->type, v.outputType))
      throw ModelExchangeError(
          fmt::format("ONNX import: layer \"{}\" ({}) resolves to another "
                      "output shape than its ONNX node computes",
                      v.name, v.layer->typeName()));
  }
  ComputationGraph graph(std::move(conf));
  graph.init();
  if (!params.empty()) graph.setParams(Tensor::fromVector(graph.params().shape(), params));
  if (!state.empty()) graph.setLayerState(Tensor::fromVector(graph.layerState().shape(), state));
  return graph;
}

}  // namespace

ComputationGraph importModel(const std::filesystem::path& path, const ImportOptions& options) {
  const ::onnx::ModelProto model = parse(path);
  return Importer(model, options).run();
}

ComputationGraph importModelFromBytes(std::span<const std::byte> bytes, const std::string& name,
                                      const ImportOptions& options) {
  const ::onnx::ModelProto model = parseBytes(bytes, name);
  return Importer(model, options).run();
}

void importModelFile(const std::filesystem::path& onnxPath, const std::filesystem::path& modelFile,
                     const ImportOptions& options) {
  ComputationGraph graph = importModel(onnxPath, options);
  ModelSerializer::writeModel(graph, modelFile, false);
}

}  // namespace dl4cpp::onnx
