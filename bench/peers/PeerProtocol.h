#pragma once
// What the peer programs (dl4cpp_lenet, libtorch_lenet) share, so both follow one protocol:
// the flags, the clock, the checksum of the epoch order and the report line. Standalone (the
// standard library and POSIX only): the libtorch program does not link dl4cpp.
//
// The protocol, identical for both programs:
//   1. read MNIST and build every training and test batch in memory (features pixel/255, batch
//      128, the training set in the order of MnistDataSetIterator(128, true, 123));
//   2. build and initialise the model;
//   3. start the clock, train one epoch over the prepared batches (no warm-up: first-iteration
//      costs belong to the epoch), stop the clock;
//   4. evaluate test accuracy (not timed), then print one JSON line:
//      {"library", "version", "threads", "samples_per_s", "epoch_s", "test_accuracy",
//       "peak_rss_mib", "train_examples", "epoch_order_fnv1a"}
//    peak_rss_mib is the process's peak resident set, read after the evaluation: it includes the
//    data, alike in both programs (for the whole of MNIST about 210 MiB of prepared float batches
//    and 53 MiB of the uint8 images they were made from).
// epoch_order_fnv1a hashes the training labels in the order they were trained: equal values say
// the two programs saw the same examples in the same order (scripts/bench-peers.sh checks it).
//
// ResNet-50 (--network resnet50) is the exception: no ImageNet here, so both programs train on the
// same synthetic batches (syntheticImageNetBatch: 16 images of 3x224x224, 1000 classes), one
// untimed warm-up step (first-step allocation would otherwise weigh on a clock of a few steps),
// then train_examples / 16 timed steps (default 4); "test_accuracy" is the trained model's
// accuracy on the first batch (random data: only a sanity figure).
//
// The character LSTM (--network charlstm) trains on the text of CharCorpus.h (fortunes-min):
// one LSTM layer of 128 units and a softmax output over the characters at every step, sequences
// of 64 characters, batch 16, Adam(5e-3) with element-wise gradient clipping at 1, one epoch;
// "train_examples" counts sequences and "test_accuracy" is the share of held-out next characters
// predicted (argmax).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>

namespace peers {

struct PeerOptions {
  int threads = 1;
  // "lenet" (samples/LenetConfiguration.h, on MNIST), "batchnorm" (the conv-BN-ReLU network of
  // samples/BatchNormConfiguration.h), "vgg" (the VGG-style network of
  // samples/VggConfiguration.h) or "resnet" (the residual network of
  // samples/ResidualConfiguration.h), all three on Fashion-MNIST; or "resnet50" (the zoo's
  // ResNet50, 224x224, on synthetic batches of 16); or "charlstm" (CharCorpus.h's LSTM on
  // fortunes-min).
  std::string network = "lenet";
  std::string dataDir;     // the MNIST (Fashion-MNIST, fortunes-min) directory
  int trainExamples = 0;   // the first N examples of the training file; 0 = all
  int testExamples = 0;    // the first N examples of the test file; 0 = all
  double minAccuracy = 0;  // exit status 1 below this test accuracy

  static constexpr int kBatch = 128;
  static constexpr uint64_t kSeed = 123;
  // ResNet-50's minibatch, image side and classes, and its timed steps when --train-examples is 0.
  static constexpr int kResNet50Batch = 16;
  static constexpr int kResNet50Side = 224;
  static constexpr int kResNet50Classes = 1000;
  static constexpr int kResNet50Steps = 4;

  // The timed steps of resnet50: train-examples / 16, at least 1.
  int resNet50Steps() const {
    return trainExamples == 0 ? kResNet50Steps : std::max(1, trainExamples / kResNet50Batch);
  }
};

// Synthetic batch `step` of ResNet-50's run, the same in both programs: features (16, 3, 224,
// 224) in [0, 1) from splitmix64 seeded by the step, labels (16) spread over the 1000 classes.
inline void syntheticImageNetBatch(int step, float* features, int64_t* labels) {
  constexpr int64_t n = PeerOptions::kResNet50Batch;
  constexpr int64_t values = n * 3 * PeerOptions::kResNet50Side * PeerOptions::kResNet50Side;
  uint64_t state = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(step + 1);
  for (int64_t i = 0; i < values; ++i) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    features[i] = static_cast<float>(z >> 40) / static_cast<float>(1 << 24);
  }
  for (int64_t r = 0; r < n; ++r)
    labels[r] = ((static_cast<int64_t>(step) * n + r) * 7919) % PeerOptions::kResNet50Classes;
}

// The default MNIST directory of MnistDataSetIterator::defaultDataDirectory("MNIST").
inline std::string defaultMnistDirectory() {
  namespace fs = std::filesystem;
  const char* root = std::getenv("DL4CPP_DATA_DIR");
  if (root != nullptr && *root != '\0') return (fs::path(root) / "MNIST").string();
  const char* home = std::getenv("HOME");
  const fs::path base = (home != nullptr && *home != '\0') ? fs::path(home) : fs::path();
  return (base / ".dl4cpp" / "data" / "MNIST").string();
}

inline PeerOptions parsePeerOptions(int argc, char** argv) {
  const std::map<std::string, std::string> known{
      {"threads", "CPU threads for training and evaluation (default 1)"},
      {"network",
       "lenet (on MNIST) | lenetgraph (LeNet as a chain ComputationGraph, dl4cpp only) | batchnorm "
       "(conv-BN-ReLU x3) | vgg (3x3 pad-1 convolutions 32-64 "
       "channels, VGG-style) | resnet (residual blocks, BN, global average pooling), all three on "
       "Fashion-MNIST | resnet50 (ResNet-50 at 224x224, batch 16, synthetic data) | charlstm "
       "(a character LSTM on fortunes-min) (default lenet)"},
      {"data-dir",
       "MNIST directory (default $DL4CPP_DATA_DIR/MNIST or ~/.dl4cpp/data/MNIST; for batchnorm "
       "vgg and resnet Debian's Fashion-MNIST, /usr/share/datasets/fashion-mnist; for charlstm "
       "fortunes-min's /usr/share/games/fortunes)"},
      {"train-examples",
       "use only the first N training examples (default: all 60000; resnet50: N / 16 steps, "
       "default 4; charlstm: N sequences)"},
      {"test-examples", "use only the first N test examples (default: all 10000)"},
      {"min-accuracy", "exit with status 1 when test accuracy is below this (default 0)"}};
  std::map<std::string, std::string> values;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << "usage: " << argv[0] << " [options]\n"
                << "Trains a network (LeNet on MNIST by default) for one epoch and prints one JSON "
                   "line.\n";
      for (const auto& [name, help] : known) std::cout << "  --" << name << "  " << help << "\n";
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0 || !known.count(arg.substr(2)))
      throw std::invalid_argument("unknown argument '" + arg + "' (see --help)");
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + arg);
    values[arg.substr(2)] = argv[++i];
  }
  auto number = [&](const std::string& name, double fallback, bool integer) {
    auto it = values.find(name);
    if (it == values.end()) return fallback;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0' || (integer && v != static_cast<long>(v)))
      throw std::invalid_argument("--" + name + " expects " +
                                  (integer ? "an integer" : "a number") + ", got '" + it->second +
                                  "'");
    return v;
  };
  PeerOptions o;
  o.threads = static_cast<int>(number("threads", 1, true));
  o.trainExamples = static_cast<int>(number("train-examples", 0, true));
  o.testExamples = static_cast<int>(number("test-examples", 0, true));
  o.minAccuracy = number("min-accuracy", 0, false);
  if (auto network = values.find("network"); network != values.end()) o.network = network->second;
  if (o.network != "lenet" && o.network != "batchnorm" && o.network != "vgg" &&
      o.network != "resnet" && o.network != "resnet50" && o.network != "charlstm" &&
      o.network != "lenetgraph")
    throw std::invalid_argument(
        "--network must be lenet, lenetgraph, batchnorm, vgg, resnet, resnet50 or charlstm, got '" +
        o.network + "'");
  auto dir = values.find("data-dir");
  o.dataDir = dir != values.end()                                 ? dir->second
              : o.network == "lenet" || o.network == "lenetgraph" ? defaultMnistDirectory()
              : o.network == "charlstm"                           ? "/usr/share/games/fortunes"
                                        : "/usr/share/datasets/fashion-mnist";
  if (o.threads < 1)
    throw std::invalid_argument("--threads must be >= 1, got " + std::to_string(o.threads));
  if (o.trainExamples < 0 || o.testExamples < 0)
    throw std::invalid_argument("--train-examples and --test-examples must be >= 0");
  return o;
}

// FNV-1a over a sequence of class labels, fed one at a time.
class LabelOrderHash {
 public:
  void add(int label) {
    hash_ ^= static_cast<uint8_t>(label);
    hash_ *= 0x100000001b3ull;
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

// The process's peak resident set so far (Linux reports ru_maxrss in KiB).
inline double peakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

struct PeerResult {
  std::string library;  // "dl4cpp" or "libtorch"
  std::string network;  // PeerOptions::network
  std::string version;
  int threads = 0;
  int64_t trainExamples = 0;
  double epochSeconds = 0;
  double testAccuracy = 0;
  uint64_t epochOrderHash = 0;
};

// samples_per_s has three decimals: ResNet-50 trains under one sample per second.
inline void printResult(const PeerResult& r) {
  char line[512];
  std::snprintf(line, sizeof line,
                "{\"library\": \"%s\", \"network\": \"%s\", \"version\": \"%s\", \"threads\": %d, "
                "\"samples_per_s\": "
                "%.3f, \"epoch_s\": %.3f, "
                "\"test_accuracy\": %.4f, \"peak_rss_mib\": %.1f, \"train_examples\": %lld, "
                "\"epoch_order_fnv1a\": \"%016llx\"}",
                r.library.c_str(), r.network.c_str(), r.version.c_str(), r.threads,
                static_cast<double>(r.trainExamples) / r.epochSeconds, r.epochSeconds,
                r.testAccuracy, peakRssMiB(), static_cast<long long>(r.trainExamples),
                static_cast<unsigned long long>(r.epochOrderHash));
  std::cout << line << std::endl;
}

// Seconds taken by `trainEpoch()`, on a monotonic clock.
template <typename TrainEpoch>
double timeEpoch(TrainEpoch&& trainEpoch) {
  const auto start = std::chrono::steady_clock::now();
  trainEpoch();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs a peer program: prints its result; exit status 1 below --min-accuracy, 2 on an exception.
template <typename Run>
int runPeer(const char* name, int argc, char** argv, Run&& run) {
  try {
    const PeerOptions options = parsePeerOptions(argc, argv);
    const PeerResult result = run(options);
    printResult(result);
    if (result.testAccuracy >= options.minAccuracy) return 0;
    std::cerr << name << ": test accuracy " << result.testAccuracy << " is below --min-accuracy "
              << options.minAccuracy << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace peers
