// Inference speed of dl4cpp's forward pass against ONNX Runtime's on the same model: LeNet
// (samples/LenetConfiguration.h, a MultiLayerNetwork of flat 28x28 images) and the residual
// network (samples/ResidualConfiguration.h, a ComputationGraph), each exported with
// dl4cpp::onnx::exportModel and run by both at batch 1 and 64 on one thread. The weights are
// init()'s (speed does not depend on their values). dl4cpp's side times, in this process, the
// model's output() and a ParallelInference of 1 worker of 1 thread serving the same batches one
// request after another (what a service calls: queue hand-off and worker included); ONNX
// Runtime's (npm's onnxruntime-node, bench/onnx_inference_ort.js) times session.run inside node,
// so neither the process start nor the model load is measured. Each reports the median
// milliseconds per batch after a warm-up.
//   bench_onnx_inference [--runs 200] [--runs-64 30] [--warmup 10]
//                        [--ort-dir ~/.dl4cpp/onnxruntime] [--node node]
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "LenetConfiguration.h"
#include "Median.h"
#include "ResidualConfiguration.h"
#include "SampleSupport.h"
#include "nn/onnx/OnnxExport.h"
#include "nn/tensor/Random.h"

using namespace dl4cpp;
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string model;  // "lenet" or "resnet"
  fs::path file;
  std::string input;  // the ONNX input's name
  Shape shape;        // of one batch
  int64_t batch;
};

// The median milliseconds of `run(x)` over `runs` calls after `warmup`, x a batch of `shape`.
template <typename Run>
double timeBatches(const Run& run, const Shape& shape, int warmup, int runs) {
  // Random pixels in [0, 1): zeros could let a kernel skip work a real image does not.
  Random random(5);
  Tensor x(shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = static_cast<float>(random.uniform(0, 1));
  for (int i = 0; i < warmup; ++i) (void)run(x);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    (void)run(x);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  return bench::median(ms);
}

fs::path defaultOrtDir() {
  if (const char* dir = std::getenv("DL4CPP_ONNXRUNTIME_DIR"); dir && *dir) return dir;
  if (const char* data = std::getenv("DL4CPP_DATA_DIR"); data && *data)
    return fs::path(data) / "onnxruntime";
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/") / ".dl4cpp" / "onnxruntime";
}

std::string cpuName() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

}  // namespace

int main(int argc, char** argv) try {
  const samples::SampleOptions options(
      argc, argv,
      {{"runs", "timed batches of 1 per model and side (default 200)"},
       {"runs-64", "timed batches of 64 per model and side (default 30)"},
       {"warmup", "untimed batches before timing (default 10)"},
       {"ort-dir", "folder holding node_modules/onnxruntime-node (default ~/.dl4cpp/onnxruntime)"},
       {"node", "the node executable (default node)"}});
  const int runs1 = static_cast<int>(options.getInt("runs", 200));
  const int runs64 = static_cast<int>(options.getInt("runs-64", 30));
  const int warmup = static_cast<int>(options.getInt("warmup", 10));
  const fs::path ortDir = options.getString("ort-dir", defaultOrtDir().string());
  const std::string node = options.getString("node", "node");

  const fs::path dir = fs::temp_directory_path() / fmt::format("bench_onnx_{}", ::getpid());
  fs::create_directories(dir);
  MultiLayerNetwork lenet(samples::lenetConfiguration(), Device::cpu(), 1);
  lenet.init();
  ComputationGraph resnet(samples::residualConfiguration(), Device::cpu(), 1);
  resnet.init();
  onnx::exportModel(lenet, dir / "lenet.onnx");
  onnx::exportModel(resnet, dir / "resnet.onnx");

  std::vector<Case> cases;
  for (int64_t batch : {int64_t{1}, int64_t{64}}) {
    cases.push_back({"lenet", dir / "lenet.onnx", "input", Shape{batch, 784}, batch});
    cases.push_back({"resnet", dir / "resnet.onnx", "input", Shape{batch, 1, 28, 28}, batch});
  }
  auto served = [](const Model& model) {
    return parallel::ParallelInference::Builder(model)
        .devices({Device::cpu()})
        .workers(1)
        .threadsPerWorker(1)
        .build();
  };
  parallel::ParallelInference lenetServed = served(lenet), resnetServed = served(resnet);
  std::vector<double> dl4cppMs, servedMs;
  nlohmann::json spec{{"cases", nlohmann::json::array()}};
  for (const Case& c : cases) {
    const int runs = c.batch == 1 ? runs1 : runs64;
    const bool isLenet = c.model == "lenet";
    dl4cppMs.push_back(timeBatches(
        [&](const Tensor& x) { return isLenet ? lenet.output(x) : resnet.outputSingle(x); },
        c.shape, warmup, runs));
    parallel::ParallelInference& server = isLenet ? lenetServed : resnetServed;
    servedMs.push_back(
        timeBatches([&](const Tensor& x) { return server.output(x); }, c.shape, warmup, runs));
    std::vector<int64_t> dims(c.shape.begin(), c.shape.end());
    spec["cases"].push_back({{"key", fmt::format("{}/{}", c.model, c.batch)},
                             {"model", c.file.string()},
                             {"input", c.input},
                             {"dims", dims},
                             {"warmup", warmup},
                             {"runs", runs}});
  }
  std::ofstream(dir / "spec.json") << spec.dump();
  const fs::path script = fs::path(DL4CPP_BENCH_DIR) / "onnx_inference_ort.js";
  const std::string command =
      fmt::format("NODE_PATH='{}' '{}' '{}' '{}'", (ortDir / "node_modules").string(), node,
                  script.string(), (dir / "spec.json").string());
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
    if (::pclose(pipe) != 0) throw std::runtime_error("ONNX Runtime's side failed: " + command);
  }
  const nlohmann::json ort = nlohmann::json::parse(out);
  fs::remove_all(dir);

  std::cout << fmt::format("{}, 1 thread each; median ms per batch\n\n", cpuName());
  std::cout << "| model | batch | dl4cpp output() ms | dl4cpp ParallelInference ms | ONNX Runtime "
               "ms | ParallelInference / ORT |\n"
               "|---|---:|---:|---:|---:|---:|\n";
  for (size_t i = 0; i < cases.size(); ++i) {
    const double o = ort.at(fmt::format("{}/{}", cases[i].model, cases[i].batch)).get<double>();
    std::cout << fmt::format("| {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.2f} |\n", cases[i].model,
                             cases[i].batch, dl4cppMs[i], servedMs[i], o, servedMs[i] / o);
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_onnx_inference: " << e.what() << "\n";
  return 2;
}
