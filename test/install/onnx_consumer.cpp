// Built by scripts/check-install.sh against an installed dl4cpp with its "onnx" component: proves
// that dl4cpp::dl4cpp_onnx links from outside (ONNX and protobuf found by the package config) and
// that a network exports to an ONNX file.
#include <dl4cpp/dl4cpp.h>
#include <dl4cpp/nn/onnx/OnnxExport.h>

#include <cstdio>
#include <exception>
#include <filesystem>

int main() {
  using namespace dl4cpp;
  try {
    MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                              .list()
                              .layer(DenseLayer::Builder().nIn(4).nOut(3).build())
                              .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                         .nOut(2)
                                         .activation(Activation::SOFTMAX)
                                         .build())
                              .build());
    net.init();
    const std::filesystem::path file =
        std::filesystem::temp_directory_path() / "dl4cpp-onnx-consumer.onnx";
    onnx::exportModel(net, file);
    const auto bytes = std::filesystem::file_size(file);
    std::filesystem::remove(file);
    std::printf("dl4cpp onnx consumer: exported %llu bytes\n",
                static_cast<unsigned long long>(bytes));
    return bytes > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnx consumer: %s\n", e.what());
    return 1;
  }
}
