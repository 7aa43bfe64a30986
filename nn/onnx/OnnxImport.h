#pragma once
// ONNX import: an ONNX model (opsets 11 to 17) as a trainable ComputationGraph (docs/onnx.md).
//
//   ComputationGraph graph = dl4cpp::onnx::importModel("resnet.onnx");
//   ComputationGraph frozen = dl4cpp::onnx::importModel("resnet.onnx", {.trainable = false});
//   dl4cpp::onnx::importModelFile("resnet.onnx", "resnet.dl4cpp");  // what dl4cpp-onnx import does
//
// The graph is built through the graph builder, so it is an ordinary graph (JSON, model files,
// ParallelWrapper); the ONNX initializers become its parameters (and a BatchNormalization's
// mean and variance its layer state). Each ONNX operator maps onto one dl4cpp layer or vertex
// (docs/onnx.md lists them); an activation right after a Gemm, MatMul(+Add), Conv or
// BatchNormalization becomes that layer's activation, and a Gemm (or MatMul + Add) whose Softmax,
// or which itself, is a graph output becomes an OutputLayer (MCXENT or MSE) so the model can be
// trained as it is. The vertex computing a graph output is named after it.
//
// Errors: ModelExchangeError naming the node, its operator and the reason for an operator,
// opset, attribute or tensor the importer cannot map exactly (never a different model), and for
// a file that is not an ONNX model (garbage, truncated, too large or too deeply nested for the
// limits below, or rejected by ONNX's checker); the reading errors of readWholeFile (a missing
// file: DataNotFoundError). Built with DL4CPP_WITH_ONNX (library dl4cpp::dl4cpp_onnx).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace dl4cpp {

class ComputationGraph;

namespace onnx {

// The operator sets the importer reads (of the default ONNX domain).
inline constexpr int kMinImportOpset = 11;
inline constexpr int kMaxImportOpset = 17;
// The largest ONNX file read (protobuf's limit for one message is 2 GiB).
inline constexpr uint64_t kMaxImportBytes = uint64_t{1} << 31;
// Protobuf's nesting limit while parsing (an ONNX model the importer maps nests 6 deep; ONNX's
// subgraphs, If and Loop, are not imported).
inline constexpr int kMaxImportNesting = 32;

struct ImportOptions {
  // false: every imported layer is frozen (its parameters are not updated by fit()).
  bool trainable = true;
};

ComputationGraph importModel(const std::filesystem::path& path, const ImportOptions& options = {});

// The same from the bytes of an ONNX file (in memory); `name` stands for the file in messages.
ComputationGraph importModelFromBytes(std::span<const std::byte> bytes, const std::string& name,
                                      const ImportOptions& options = {});

// Imports the ONNX model at `onnxPath` and saves it as a dl4cpp model file at `modelFile`.
void importModelFile(const std::filesystem::path& onnxPath, const std::filesystem::path& modelFile,
                     const ImportOptions& options = {});

}  // namespace onnx
}  // namespace dl4cpp
