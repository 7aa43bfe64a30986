#include "nn/onnx/GraphWriter.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "nn/core/Error.h"

namespace dl4cpp::onnx {

namespace {

// ONNX's raw_data is little-endian; the values are copied as they are on a little-endian host and
// byte-swapped on a big-endian one.
template <typename T>
std::string littleEndianBytes(std::span<const T> values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  if constexpr (std::endian::native == std::endian::big) {
    for (size_t i = 0; i < values.size(); ++i)
      std::reverse(bytes.begin() + i * sizeof(T), bytes.begin() + (i + 1) * sizeof(T));
  }
  return bytes;
}

void setShape(::onnx::ValueInfoProto& info, const std::string& name,
              const std::vector<int64_t>& dimsAfterBatch) {
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(::onnx::TensorProto::FLOAT);
  auto* shape = tensor->mutable_shape();
  shape->add_dim()->set_dim_param("N");
  for (int64_t d : dimsAfterBatch) {
    if (d < 0)
      shape->add_dim()->set_dim_param("T");  // sequences of any length
    else
      shape->add_dim()->set_dim_value(d);
  }
}

}  // namespace

void GraphWriter::reserve(const std::string& name) {
  if (!used_.insert(name).second)
    throw ModelExchangeError(fmt::format(
        "ONNX export: the name \"{}\" is used twice (graph inputs and outputs need their own)",
        name));
}

std::string GraphWriter::fresh(const std::string& base) {
  if (used_.insert(base).second) return base;
  for (int i = 1;; ++i) {
    std::string candidate = fmt::format("{}_{}", base, i);
    if (used_.insert(candidate).second) return candidate;
  }
}

std::string GraphWriter::floats(const std::string& base, const std::vector<int64_t>& shape,
                                std::span<const float> values) {
  auto* t = graph_.add_initializer();
  std::string name = fresh(base);
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : shape) t->add_dims(d);
  t->set_raw_data(littleEndianBytes(values));
  return name;
}

std::string GraphWriter::int64s(const std::string& base, const std::vector<int64_t>& values) {
  auto* t = graph_.add_initializer();
  std::string name = fresh(base);
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  t->set_raw_data(littleEndianBytes(std::span<const int64_t>(values)));
  return name;
}

std::string GraphWriter::node(const std::string& op, const std::vector<std::string>& inputs,
                              const std::string& base, const std::vector<Attr>& attrs) {
  std::string output = fresh(base);
  nodeTo(op, inputs, output, attrs);
  return output;
}

void GraphWriter::nodeTo(const std::string& op, const std::vector<std::string>& inputs,
                         const std::string& output, const std::vector<Attr>& attrs) {
  auto* n = graph_.add_node();
  n->set_op_type(op);
  n->set_name(output);
  for (const auto& in : inputs) n->add_input(in);
  n->add_output(output);
  for (const auto& a : attrs) {
    auto* attr = n->add_attribute();
    attr->set_name(a.name);
    switch (a.kind) {
      case Attr::Kind::Int:
        attr->set_type(::onnx::AttributeProto::INT);
        attr->set_i(a.i);
        break;
      case Attr::Kind::Float:
        attr->set_type(::onnx::AttributeProto::FLOAT);
        attr->set_f(a.f);
        break;
      case Attr::Kind::Ints:
        attr->set_type(::onnx::AttributeProto::INTS);
        for (int64_t v : a.ints) attr->add_ints(v);
        break;
      case Attr::Kind::String:
        attr->set_type(::onnx::AttributeProto::STRING);
        attr->set_s(a.s);
        break;
      case Attr::Kind::Strings:
        attr->set_type(::onnx::AttributeProto::STRINGS);
        for (const std::string& v : a.strings) attr->add_strings(v);
        break;
    }
  }
}

void GraphWriter::addInput(const std::string& name, const std::vector<int64_t>& dims) {
  setShape(*graph_.add_input(), name, dims);
}

void GraphWriter::addOutput(const std::string& name, const std::vector<int64_t>& dims) {
  setShape(*graph_.add_output(), name, dims);
}

std::vector<int64_t> dimsAfterBatch(const InputType& type) {
  if (type.kind == InputType::Kind::Convolutional) return {type.channels, type.height, type.width};
  if (type.kind == InputType::Kind::Recurrent)
    return {type.size, type.length > 0 ? type.length : -1};
  return {type.flatSize()};
}

}  // namespace dl4cpp::onnx
