#include "nn/onnx/OnnxExport.h"

#include <dl4cpp/config.h>
#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nn/core/AtomicFile.h"
#include "nn/core/Error.h"
#include "nn/core/OutputPath.h"
#include "nn/graph/ComputationGraph.h"
#include "nn/multilayer/MultiLayerNetwork.h"
#include "nn/onnx/GraphWriter.h"
#include "nn/onnx/LayerExport.h"
#include "nn/onnx/NormalizerExport.h"
#include "nn/onnx/VertexExport.h"
#include "nn/util/ModelSerializer.h"

namespace dl4cpp::onnx {

namespace {

constexpr std::string_view kOnnxFile = "an ONNX model";

::onnx::ModelProto newModel() {
  ::onnx::ModelProto model;
  model.set_ir_version(::onnx::IR_VERSION);
  model.set_producer_name("dl4cpp");
  model.set_producer_version(DL4CPP_VERSION);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpsetVersion);
  model.mutable_graph()->set_name("dl4cpp");
  return model;
}

// ONNX's checker, then its shape inference in strict mode (what onnx.checker's full_check adds):
// a file either passes both or is not written.
void check(const ::onnx::ModelProto& model) {
  try {
    ::onnx::checker::check_model(model);
    ::onnx::ModelProto inferred = model;
    ::onnx::shape_inference::InferShapes(inferred, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(true, 1, false));
  } catch (const std::exception& e) {
    throw ModelExchangeError(
        fmt::format("ONNX export: ONNX's checker rejects the model: {}", e.what()));
  }
}

void write(const ::onnx::ModelProto& model, const std::filesystem::path& path) {
  check(model);
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    throw ModelExchangeError(fmt::format(
        "ONNX export: {}: the model does not fit in one protobuf message (2 GiB)", path.string()));
  writeFileAtomically(path, std::as_bytes(std::span<const char>(bytes.data(), bytes.size())),
                      kOnnxFile);
}

std::span<const float> hostValues(const std::vector<float>& values) { return values; }

std::string layerName(const std::string& configured, size_t index, const Layer& layer) {
  return configured.empty() ? fmt::format("layer{}_{}", index, layer.typeName()) : configured;
}

}  // namespace

void exportModel(const MultiLayerNetwork& model, const std::filesystem::path& path,
                 const ExportOptions& options) {
  if (!model.isInitialized())
    throw ConfigError("ONNX export: the network has no parameters (call init() first)");
  checkOutputPath(path, kOnnxFile);
  const MultiLayerConfiguration& conf = model.getConfiguration();
  ::onnx::ModelProto proto = newModel();
  GraphWriter g(*proto.mutable_graph());
  g.reserve("input");
  g.reserve("output");
  g.addInput("input", dimsAfterBatch(conf.inputType));
  Value value{"input", conf.inputType};
  if (options.normalizer) value = exportNormalizer(g, *options.normalizer, conf.inputType, value);

  const std::vector<float> params = model.params().toVector();
  const std::vector<float> state = model.layerState().toVector();
  size_t paramOffset = 0, stateOffset = 0;
  for (size_t i = 0; i < conf.layers.size(); ++i) {
    const Layer& layer = *conf.layers[i];
    const auto numParams = static_cast<size_t>(layer.numParams());
    const auto stateSize = static_cast<size_t>(layer.stateSize());
    const LayerToExport l{layer,
                          layerName(layer.name, i, layer),
                          conf.preProcessors[i],
                          conf.layerInputTypes[i],
                          conf.layerOutputTypes[i],
                          hostValues(params).subspan(paramOffset, numParams),
                          hostValues(state).subspan(stateOffset, stateSize)};
    value = exportLayer(g, l, value);
    paramOffset += numParams;
    stateOffset += stateSize;
  }
  g.nodeTo("Identity", {value.name}, "output");
  g.addOutput("output", dimsAfterBatch(conf.outputType));
  write(proto, path);
}

void exportModel(const ComputationGraph& model, const std::filesystem::path& path,
                 const ExportOptions& options) {
  if (!model.isInitialized())
    throw ConfigError("ONNX export: the graph has no parameters (call init() first)");
  const ComputationGraphConfiguration& conf = model.getConfiguration();
  if (options.normalizer && conf.networkInputs.size() != 1)
    throw ConfigError(
        fmt::format("ONNX export: a normalizer applies to a graph of one input; this one has {}",
                    conf.networkInputs.size()));
  checkOutputPath(path, kOnnxFile);
  ::onnx::ModelProto proto = newModel();
  GraphWriter g(*proto.mutable_graph());
  for (const auto& name : conf.networkInputs) g.reserve(name);
  for (const auto& name : conf.networkOutputs)
    if (std::find(conf.networkInputs.begin(), conf.networkInputs.end(), name) ==
        conf.networkInputs.end())
      g.reserve(name);

  std::map<std::string, Value> values;
  for (size_t i = 0; i < conf.networkInputs.size(); ++i) {
    const std::string& name = conf.networkInputs[i];
    g.addInput(name, dimsAfterBatch(conf.networkInputTypes[i]));
    Value v{name, conf.networkInputTypes[i]};
    if (options.normalizer) v = exportNormalizer(g, *options.normalizer, v.type, v);
    values[name] = v;
  }

  const std::vector<float> params = model.params().toVector();
  const std::vector<float> state = model.layerState().toVector();
  size_t paramOffset = 0, stateOffset = 0;
  for (const auto& vertex : conf.vertices) {
    std::vector<Value> inputs;
    for (const auto& in : vertex.inputs) inputs.push_back(values.at(in));
    if (vertex.isLayer()) {
      const Layer& layer = *vertex.layer;
      const auto numParams = static_cast<size_t>(layer.numParams());
      const auto stateSize = static_cast<size_t>(layer.stateSize());
      // The builder merges a layer's several inputs in a vertex of their own.
      if (inputs.size() != 1)
        throw ModelExchangeError(fmt::format("ONNX export: layer \"{}\" reads {} inputs, not one",
                                             vertex.name, inputs.size()));
      const LayerToExport l{layer,
                            vertex.name,
                            vertex.preProcessor,
                            vertex.layerInputType,
                            vertex.outputType,
                            hostValues(params).subspan(paramOffset, numParams),
                            hostValues(state).subspan(stateOffset, stateSize)};
      values[vertex.name] = exportLayer(g, l, inputs[0]);
      paramOffset += numParams;
      stateOffset += stateSize;
    } else {
      values[vertex.name] = exportVertex(g, *vertex.vertex, vertex.name, vertex.outputType, inputs);
    }
  }
  for (const auto& name : conf.networkOutputs) {
    const Value& v = values.at(name);
    if (v.name != name) g.nodeTo("Identity", {v.name}, name);
    g.addOutput(name, dimsAfterBatch(v.type));
  }
  write(proto, path);
}

void exportModelFile(const std::filesystem::path& modelFile, const std::filesystem::path& path,
                     bool withNormalizer) {
  // The file's configuration says which kind it holds; the network reader refuses a graph's file
  // with a ConfigError naming the format, and the other way round.
  const std::vector<std::byte> bytes = readWholeFile(modelFile, "a model file");
  std::optional<ModelAndNormalizer> network;
  try {
    network.emplace(
        ModelSerializer::restoreModelAndNormalizerFromBytes(bytes, false, modelFile.string()));
  } catch (const ConfigError& asNetwork) {
    std::optional<ComputationGraph> graph;
    try {
      graph.emplace(
          ModelSerializer::restoreComputationGraphFromBytes(bytes, false, modelFile.string()));
    } catch (const ConfigError& asGraph) {
      throw ConfigError(fmt::format("{} is neither a network ({}) nor a graph ({})",
                                    modelFile.string(), asNetwork.what(), asGraph.what()));
    }
    exportModel(*graph, path);
    return;
  }
  exportModel(network->model, path,
              {.normalizer = withNormalizer ? network->normalizer.get() : nullptr});
}

}  // namespace dl4cpp::onnx
