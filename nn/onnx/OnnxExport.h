#pragma once
// ONNX export: a trained MultiLayerNetwork or ComputationGraph as an ONNX model (opset 17), which
// ONNX Runtime and every other ONNX serving stack can run (docs/onnx.md).
//
//   dl4cpp::onnx::exportModel(network, "lenet.onnx");
//   dl4cpp::onnx::exportModel(network, "lenet.onnx", {.normalizer = normalizer.get()});
//   dl4cpp::onnx::exportModelFile("lenet.dl4cpp", "lenet.onnx");   // what dl4cpp-onnx export does
//
// The ONNX model computes what output() computes in inference mode: the same layers with the
// trained parameters, batch normalisation with its running statistics, dropout as the identity.
// It has one float input per network input, (N, values) for rows and flat images
// (InputType::convolutionalFlat, reshaped inside to (N, C, H, W) as dl4cpp reads them) or
// (N, C, H, W) for images, named "input" for a network and by the graph's input names for a
// graph; and one output per network output ("output" for a network, the output vertices' names
// for a graph). The batch dimension is symbolic ("N").
//
// Errors, each naming the layer or vertex: ModelExchangeError for a layer or vertex
// the exporter cannot express (a layer or vertex type of the user's own) and for a model ONNX's
// checker rejects (every file is checked before it is written); ConfigError for a model that is
// not initialised; the output-path and write errors of writeFileAtomically (the file is written
// atomically). Built with DL4CPP_WITH_ONNX (library dl4cpp::dl4cpp_onnx; ONNX and protobuf stay
// private to it).
#include <filesystem>

namespace dl4cpp {

class MultiLayerNetwork;
class ComputationGraph;
class DataNormalization;

namespace onnx {

// The ONNX operator set the exported models import.
inline constexpr int kOpsetVersion = 17;

struct ExportOptions {
  // The normalizer the network's features go through before the network (the one saved in its
  // model file), exported as leading nodes so that the ONNX model takes raw features. Null: the
  // ONNX model takes features as the network does. A graph takes one only with one input.
  const DataNormalization* normalizer = nullptr;
};

void exportModel(const MultiLayerNetwork& model, const std::filesystem::path& path,
                 const ExportOptions& options = {});
void exportModel(const ComputationGraph& model, const std::filesystem::path& path,
                 const ExportOptions& options = {});

// Exports the model saved in `modelFile` (ModelSerializer's format: a network or a graph) to
// `path`. withNormalizer: a normalizer saved in the file becomes the leading nodes (a file
// without one exports the network alone). The model file's errors are ModelSerializer's.
void exportModelFile(const std::filesystem::path& modelFile, const std::filesystem::path& path,
                     bool withNormalizer = true);

}  // namespace onnx
}  // namespace dl4cpp
