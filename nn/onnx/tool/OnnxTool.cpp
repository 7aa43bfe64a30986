// dl4cpp-onnx: ONNX exchange from the command line (docs/onnx.md).
//
//   dl4cpp-onnx export MODEL.dl4cpp OUT.onnx [--without-normalizer]
//
// Exports the network or graph saved in MODEL.dl4cpp (ModelSerializer's format) to OUT.onnx; a
// normalizer saved with the network becomes the ONNX model's leading nodes unless
// --without-normalizer. Exit status 0 on success, 1 when the export fails (the message names the
// layer, vertex or file), 2 for a bad command line.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "nn/onnx/OnnxExport.h"

namespace {

constexpr const char* kUsage =
    "usage: dl4cpp-onnx export MODEL.dl4cpp OUT.onnx [--without-normalizer]\n"
    "  Exports a dl4cpp model file (a network or a graph) to ONNX (opset 17). A normalizer saved\n"
    "  with the network becomes the ONNX model's leading nodes unless --without-normalizer.\n";

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && (args[0] == "-h" || args[0] == "--help")) {
    std::cout << kUsage;
    return 0;
  }
  const bool withoutNormalizer = args.size() == 4 && args[3] == "--without-normalizer";
  if (args.empty() || args[0] != "export" || (args.size() != 3 && !withoutNormalizer)) {
    std::cerr << kUsage;
    return 2;
  }
  try {
    dl4cpp::onnx::exportModelFile(args[1], args[2], !withoutNormalizer);
  } catch (const std::exception& e) {
    std::cerr << "dl4cpp-onnx: " << e.what() << "\n";
    return 1;
  }
  std::cout << "dl4cpp-onnx: wrote " << args[2] << "\n";
  return 0;
}
