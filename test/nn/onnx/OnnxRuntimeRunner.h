#pragma once
// Runs an exported ONNX model in ONNX Runtime for the export tests: npm's onnxruntime-node
// (installed by scripts/install-deps.sh, its libonnxruntime.so for x64 and arm64 Linux) driven by
// node through test/nn/onnx/ort_run.js, tensors passing as raw float32 files.
//
// Where ONNX Runtime is looked for: $DL4CPP_ONNXRUNTIME_DIR, else
// ${DL4CPP_DATA_DIR:-$HOME/.dl4cpp}/onnxruntime (a folder holding node_modules/onnxruntime-node).
// A test that finds no node or no onnxruntime-node prints "skipped: ..." (which CTest reports as a
// skip, test/CMakeLists.txt) and returns.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nn/tensor/Tensor.h"

namespace testutil {

struct OrtInput {
  std::string name;
  dl4cpp::Tensor value;
};

// Why ONNX Runtime cannot run here, or nullopt when it can.
std::optional<std::string> onnxRuntimeMissing();

// Prints the skip line and returns true when ONNX Runtime cannot run here.
bool skippedWithoutOnnxRuntime();

// The outputs `outputNames` of the ONNX model at `model` for `inputs`, each with the shape ONNX
// Runtime gives it. Files go to `workDir`. Throws std::runtime_error with ONNX Runtime's message
// when it fails.
std::vector<dl4cpp::Tensor> runInOnnxRuntime(const std::filesystem::path& model,
                                             const std::vector<OrtInput>& inputs,
                                             const std::vector<std::string>& outputNames,
                                             const std::filesystem::path& workDir);

}  // namespace testutil
