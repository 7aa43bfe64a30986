// dl4cpp-onnx: ONNX exchange from the command line (docs/onnx.md).
//
//   dl4cpp-onnx export MODEL.dl4cpp OUT.onnx [--without-normalizer]
//   dl4cpp-onnx import IN.onnx OUT.dl4cpp [--frozen]
//
// export: the network or graph saved in MODEL.dl4cpp (ModelSerializer's format) to OUT.onnx; a
// normalizer saved with the network becomes the ONNX model's leading nodes unless
// --without-normalizer. import: the ONNX model IN.onnx as a graph saved in OUT.dl4cpp, its layers
// frozen with --frozen. Exit status 0 on success, 1 when the conversion fails (the message names
// the layer, vertex, node or file), 2 for a bad command line.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "nn/onnx/OnnxExport.h"
#include "nn/onnx/OnnxImport.h"

namespace {

constexpr const char* kUsage =
    "usage: dl4cpp-onnx export MODEL.dl4cpp OUT.onnx [--without-normalizer]\n"
    "       dl4cpp-onnx import IN.onnx OUT.dl4cpp [--frozen]\n"
    "  export: a dl4cpp model file (a network or a graph) to ONNX (opset 17). A normalizer saved\n"
    "  with the network becomes the ONNX model's leading nodes unless --without-normalizer.\n"
    "  import: an ONNX model (opsets 11 to 17) to a dl4cpp model file holding a graph, its\n"
    "  layers frozen with --frozen.\n";

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && (args[0] == "-h" || args[0] == "--help")) {
    std::cout << kUsage;
    return 0;
  }
  const bool isExport = !args.empty() && args[0] == "export";
  const bool isImport = !args.empty() && args[0] == "import";
  const std::string flag = isExport ? "--without-normalizer" : "--frozen";
  const bool flagged = args.size() == 4 && args[3] == flag;
  if ((!isExport && !isImport) || (args.size() != 3 && !flagged)) {
    std::cerr << kUsage;
    return 2;
  }
  try {
    if (isExport)
      dl4cpp::onnx::exportModelFile(args[1], args[2], !flagged);
    else
      dl4cpp::onnx::importModelFile(args[1], args[2], {.trainable = !flagged});
  } catch (const std::exception& e) {
    std::cerr << "dl4cpp-onnx: " << e.what() << "\n";
    return 1;
  }
  std::cout << "dl4cpp-onnx: wrote " << args[2] << "\n";
  return 0;
}
