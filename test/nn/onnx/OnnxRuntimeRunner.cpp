#include "nn/onnx/OnnxRuntimeRunner.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "TestPaths.h"
#include "nn/tensor/Shape.h"

namespace testutil {

namespace {

namespace fs = std::filesystem;

fs::path onnxRuntimeFolder() {
  if (const char* dir = std::getenv("DL4CPP_ONNXRUNTIME_DIR"); dir && *dir) return dir;
  if (const char* data = std::getenv("DL4CPP_DATA_DIR"); data && *data)
    return fs::path(data) / "onnxruntime";
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/") / ".dl4cpp" / "onnxruntime";
}

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Raw float32, little-endian (the machines the tests run on are).
void writeFloats(const fs::path& path, const dl4cpp::Tensor& t) {
  const std::vector<float> values = t.toVector();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

dl4cpp::Tensor readOutput(const fs::path& dir, size_t index) {
  std::string dims = readText(dir / (std::to_string(index) + ".json"));
  for (char& c : dims)
    if (c == '[' || c == ']' || c == ',') c = ' ';
  std::istringstream parse(dims);
  dl4cpp::Shape shape;
  for (int64_t d; parse >> d;) shape.push(d);
  const std::string bytes = readText(dir / (std::to_string(index) + ".bin"));
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return dl4cpp::Tensor::fromVector(shape, values);
}

}  // namespace

std::optional<std::string> onnxRuntimeMissing() {
  if (std::system("command -v node >/dev/null 2>&1") != 0) return "node is not installed";
  const fs::path package = onnxRuntimeFolder() / "node_modules" / "onnxruntime-node";
  if (!fs::exists(package / "package.json"))
    return "onnxruntime-node is not installed in " + package.parent_path().parent_path().string() +
           " (scripts/install-deps.sh installs it)";
  return std::nullopt;
}

bool skippedWithoutOnnxRuntime() {
  const auto missing = onnxRuntimeMissing();
  if (missing) std::cout << "skipped: ONNX Runtime cannot run: " << *missing << "\n";
  return missing.has_value();
}

std::vector<dl4cpp::Tensor> runInOnnxRuntime(const fs::path& model,
                                             const std::vector<OrtInput>& inputs,
                                             const std::vector<std::string>& outputNames,
                                             const fs::path& workDir) {
  std::ostringstream spec;
  spec << "{\"model\": " << jsonString(model.string()) << ", \"inputs\": [";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const fs::path file = workDir / ("input" + std::to_string(i) + ".bin");
    writeFloats(file, inputs[i].value);
    spec << (i ? ", " : "") << "{\"name\": " << jsonString(inputs[i].name) << ", \"dims\": [";
    for (int d = 0; d < inputs[i].value.rank(); ++d)
      spec << (d ? ", " : "") << inputs[i].value.shape()[d];
    spec << "], \"file\": " << jsonString(file.string()) << "}";
  }
  spec << "], \"outputs\": [";
  for (size_t i = 0; i < outputNames.size(); ++i)
    spec << (i ? ", " : "") << jsonString(outputNames[i]);
  spec << "], \"outDir\": " << jsonString(workDir.string()) << "}";
  const fs::path specFile = workDir / "spec.json";
  std::ofstream(specFile) << spec.str();

  const fs::path log = workDir / "ort.log";
  const std::string command =
      "NODE_PATH=" + quoted((onnxRuntimeFolder() / "node_modules").string()) + " node " +
      quoted(testutil::ortScript().string()) + " " + quoted(specFile.string()) + " 2>" +
      quoted(log.string());
  if (std::system(command.c_str()) != 0)
    throw std::runtime_error("ONNX Runtime failed on " + model.string() + ": " + readText(log));
  std::vector<dl4cpp::Tensor> outputs;
  for (size_t i = 0; i < outputNames.size(); ++i) outputs.push_back(readOutput(workDir, i));
  return outputs;
}

}  // namespace testutil
