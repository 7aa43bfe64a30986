#pragma once
// What the samples share: command-line flags (--name value pairs, with a clear error for anything
// unknown or malformed), the evaluation report, and main()'s error handling.
#include <dl4cpp/config.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "nn/api/Model.h"
#include "nn/backend/cpu/CpuIsa.h"
#include "nn/core/AtomicFile.h"
#include "nn/core/OutputPath.h"
#include "nn/eval/Evaluation.h"
#include "nn/tensor/Device.h"
#include "nn/util/ModelSerializer.h"
#include "parallel/LearningRateScaling.h"

namespace samples {

// Where scripts/make-fashion-png.sh writes the Fashion-MNIST image folders by default:
// $DL4CPP_DATA_DIR/fashion-png, else ~/.dl4cpp/data/fashion-png.
inline std::string fashionPngDir() {
  const char* base = std::getenv("DL4CPP_DATA_DIR");
  if (base && *base) return std::string(base) + "/fashion-png";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.dl4cpp/data/fashion-png";
}

// The line that says which CPU kernels this process runs (DL4CPP_MAX_CPU_ISA caps the level).
inline std::string cpuIsaLine() {
  return fmt::format("CPU ISA level: {} (this processor: {})\n",
                     dl4cpp::cpuIsaName(dl4cpp::cpuIsa()),
                     dl4cpp::cpuIsaName(dl4cpp::nativeCpuIsa()));
}

// --device cpu|cuda: the default is cuda when this build and machine have a GPU, else cpu.
inline std::vector<dl4cpp::Device> devicesFromOption(const std::string& name) {
  const int gpus = dl4cpp::cudaDeviceCount();
  const std::string chosen = name.empty() ? (gpus > 0 ? "cuda" : "cpu") : name;
  if (chosen == "cpu") return {dl4cpp::Device::cpu()};
  if (chosen != "cuda") throw std::invalid_argument("--device must be cpu or cuda, not " + chosen);
  if (gpus == 0)
    throw std::invalid_argument(DL4CPP_HAVE_CUDA ? "--device cuda: no CUDA device is visible"
                                                 : "--device cuda: this build has no CUDA backend");
  return dl4cpp::defaultDevices();  // every visible GPU
}

// --lr-scaling linear|sqrt|none (ParallelWrapper::Builder::learningRateScaling).
inline dl4cpp::parallel::LearningRateScaling learningRateScalingFromOption(
    const std::string& name) {
  using dl4cpp::parallel::LearningRateScaling;
  if (name == "linear") return LearningRateScaling::LINEAR;
  if (name == "sqrt") return LearningRateScaling::SQRT;
  if (name == "none") return LearningRateScaling::NONE;
  throw std::invalid_argument("learning-rate scaling must be linear, sqrt or none, not " + name);
}

// The flags that name a file a program writes, with what the file is (for messages), and the one
// that names a folder it writes files into.
inline const std::map<std::string, std::string_view> kOutputFileFlags = {
    {"save", "the model file (--save)"},
    {"report", "the HTML report (--report)"},
    {"json", "the JSON results (--json)"},
    {"svg", "the SVG chart (--svg)"}};
inline constexpr std::string_view kOutputFolderFlag = "out";

class SampleOptions {
 public:
  // `known`: flag name -> help text. The output paths given (kOutputFileFlags, --out) are checked
  // here, before any work (dl4cpp::checkOutputPath / checkOutputDirectory): a path that cannot be
  // written (a missing or read-only folder, a directory, FIFO or device such as /dev/null) fails
  // at once with OutputPathError, instead of after training.
  SampleOptions(int argc, char** argv, std::map<std::string, std::string> known)
      : known_(std::move(known)) {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        printHelp(argv[0]);
        std::exit(0);
      }
      if (arg.rfind("--", 0) != 0 || !known_.count(arg.substr(2)))
        throw std::invalid_argument("unknown argument '" + arg + "' (see --help)");
      if (i + 1 >= argc) throw std::invalid_argument("missing value after " + arg);
      values_[arg.substr(2)] = argv[++i];
    }
    checkOutputPaths();
  }

  std::string getString(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
  }
  long getInt(const std::string& name, long fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (end == it->second.c_str() || *end != '\0')
      throw std::invalid_argument("--" + name + " expects an integer, got '" + it->second + "'");
    return v;
  }
  double getDouble(const std::string& name, double fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0')
      throw std::invalid_argument("--" + name + " expects a number, got '" + it->second + "'");
    return v;
  }

 private:
  void checkOutputPaths() const {
    for (const auto& [flag, what] : kOutputFileFlags)
      if (const auto it = values_.find(flag); it != values_.end())
        dl4cpp::checkOutputPath(it->second, what);
    if (const auto it = values_.find(std::string(kOutputFolderFlag)); it != values_.end())
      dl4cpp::checkOutputDirectory(it->second, "the output folder (--out)");
  }
  void printHelp(const char* program) const {
    std::cout << "usage: " << program << " [options]\n";
    for (const auto& [name, help] : known_) std::cout << "  --" << name << "  " << help << "\n";
  }
  std::map<std::string, std::string> known_;
  std::map<std::string, std::string> values_;
};

// Writes `text` to `path` under the library's output-path rule (nn/core/OutputPath.h), atomically:
// a link is written through, a directory, FIFO or device is refused (OutputPathError), an existing
// file keeps its mode.
inline void writeTextFile(const std::string& path, const std::string& text, std::string_view what) {
  dl4cpp::writeFileAtomically(path, std::as_bytes(std::span(text.data(), text.size())), what);
}

// Writes `json` to the file named by --json, when given (the benchmarks' machine-readable output);
// a file that cannot be written is an error, not a silently missing result.
inline void writeJsonIfRequested(const SampleOptions& options, const std::string& json) {
  const std::string path = options.getString("json", "");
  if (path.empty()) return;
  writeTextFile(path, json, kOutputFileFlags.at("json"));
  std::cout << "\nwrote " << path << "\n";
}

// Prints the evaluation; the exit status is 1 when accuracy is below `minAccuracy`, else 0.
// --save PATH: writes the trained model (with updater state, so training can continue) and
// reads it back as the process that loads it (e.g. an inference server) will, checking that the
// copy holds exactly the trained parameters.
inline void saveModel(const dl4cpp::Model& model, const std::string& path) {
  model.save(path, true);
  const std::unique_ptr<dl4cpp::Model> loaded = dl4cpp::ModelSerializer::restoreModel(path);
  if (loaded->params().toVector() != model.params().toVector() ||
      loaded->updaterState().toVector() != model.updaterState().toVector())
    throw dl4cpp::DataMismatchError("the model read back from " + path +
                                    " differs from the trained one");
  std::cout << "saved the model to " << path << " (" << std::filesystem::file_size(path)
            << " bytes; read back: identical parameters and updater state)\n";
}

inline int reportEvaluation(const dl4cpp::Evaluation& eval, double minAccuracy) {
  std::cout << eval.stats() << "\n";
  if (eval.accuracy() >= minAccuracy) return 0;
  std::cerr << fmt::format("test accuracy {:.4f} is below --min-accuracy {:.4f}\n", eval.accuracy(),
                           minAccuracy);
  return 1;
}

// Runs a sample; an exception becomes a one-line message and exit status 2.
template <typename Run>
int runSample(const char* name, Run&& run) {
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace samples
