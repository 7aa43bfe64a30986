#pragma once
// What the ONNX importer fuzz target does with one input, shared with the CTest that replays the
// committed corpus (test/nn/onnx/OnnxImportCorpusTest.cpp), so both exercise the same path.
//
// Each input is imported with dl4cpp::onnx::importModelFromBytes, the entry point importModel
// reads a file through (protobuf parse with the nesting limit, ONNX's checker, the operator
// mapping, the graph builder).
//
// The contract under test: only dl4cpp::Error may escape, and what imports is whole: a graph whose
// parameter buffer matches its configuration, and which computes an output for a batch of one
// example (zeros) of each input type without an error. Any other exception is rethrown (under
// libFuzzer: an uncaught exception, a crash); memory errors are the sanitizers' to report.
#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "nn/core/Error.h"
#include "nn/graph/ComputationGraph.h"
#include "nn/onnx/OnnxImport.h"

namespace dl4cpp::fuzz {

// Models with an input or activation of more than this many values per example are imported but
// not run: the forward pass of a (legitimately) large model would only slow the fuzzer down.
inline constexpr int64_t kMaxRunValues = int64_t{1} << 16;

// Imports `bytes`; a dl4cpp::Error is an accepted outcome. Returns whether it imported.
inline bool importOnnxInput(std::span<const std::byte> bytes) {
  std::optional<ComputationGraph> graph;
  try {
    graph.emplace(onnx::importModelFromBytes(bytes, "<fuzz input>"));
  } catch (const Error&) {
    return false;
  }
  const auto& conf = graph->getConfiguration();
  if (graph->params().numel() != conf.numParams())
    throw std::logic_error("an imported graph's parameters do not match its configuration");
  // A model may rightly need more memory than a fuzzer should spend (a Pad of 2^24 on each side
  // is a valid model of 2^50 values per example; the allocation is refused with a dl4cpp error):
  // run only those whose every activation is small.
  for (const auto& v : conf.vertices)
    if (v.outputType.flatSize() > kMaxRunValues) return true;
  std::vector<Tensor> inputs;
  for (const InputType& type : conf.networkInputTypes) {
    if (type.flatSize() > kMaxRunValues) return true;
    Tensor x(type.shape(1, 3));  // 3 time steps where the input is sequences of any length
    x.fill(0.0f);
    inputs.push_back(std::move(x));
  }
  std::vector<Tensor> out;
  try {
    out = graph->output(inputs);
  } catch (const Error& e) {
    throw std::logic_error(std::string("an imported graph cannot compute its output: ") + e.what());
  }
  if (out.size() != conf.networkOutputs.size())
    throw std::logic_error("an imported graph computes another number of outputs");
  return true;
}

}  // namespace dl4cpp::fuzz
