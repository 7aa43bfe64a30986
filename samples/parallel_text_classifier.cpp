// A text classifier (DL4J's sequence-classification examples): which of Debian's fortunes-min
// files (fortunes, literature, riddles) a fortune comes from, read character by character.
// Each fortune is a sequence of character indices; an EmbeddingSequenceLayer turns them into
// vectors, an LSTM reads them, a GlobalPoolingLayer takes the maximum over time and a softmax
// OutputLayer names the file. Fortunes have different lengths: a batch is padded to its longest
// and the features mask marks the padding, which the LSTM and the pooling skip. Trained by
// ParallelWrapper; every fifth fortune of each file is held out for testing. Prints the test
// accuracy after every epoch, and the majority-class baseline.
//   parallel_text_classifier [--dir /usr/share/games/fortunes] [--epochs 8] [--workers 2]
//                            [--batch 32] [--max-length 256] [--seed 12345] [--min-accuracy A]
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "SampleSupport.h"

using namespace dl4cpp;

namespace {

const std::array<std::string, 3> kCategories{"fortunes", "literature", "riddles"};

// Index 0 for any character outside the set; 1..95 printable ASCII; then newline and tab.
constexpr int64_t kVocabulary = 98;
int64_t characterIndex(unsigned char c) {
  if (c >= 32 && c <= 126) return 1 + (c - 32);
  if (c == '\n') return 96;
  if (c == '\t') return 97;
  return 0;
}

struct Example {
  std::vector<float> indices;
  int label = 0;
};

// The fortunes of one file: its entries are separated by lines holding only "%".
std::vector<std::string> readFortunes(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw DataNotFoundError(path +
                            ": cannot be read; install Debian's fortunes-min package "
                            "(scripts/install-deps.sh does)");
  std::vector<std::string> entries;
  std::string line, current;
  auto flush = [&] {
    while (!current.empty() && (current.back() == '\n' || current.back() == ' '))
      current.pop_back();
    if (!current.empty()) entries.push_back(current);
    current.clear();
  };
  while (std::getline(in, line)) {
    if (line == "%") {
      flush();
      continue;
    }
    current += line + "\n";
  }
  flush();
  return entries;
}

// A batch of examples as one DataSet: indices (N, 1, T) padded to the longest, labels (N, 3),
// the features mask (N, T).
DataSet makeBatch(const std::vector<const Example*>& batch) {
  const auto n = static_cast<int64_t>(batch.size());
  int64_t t = 1;
  for (const Example* e : batch) t = std::max<int64_t>(t, static_cast<int64_t>(e->indices.size()));
  Tensor x(Shape{n, 1, t}), labels(Shape{n, 3}), mask(Shape{n, t});
  for (int64_t i = 0; i < n; ++i) {
    const Example& e = *batch[static_cast<size_t>(i)];
    for (size_t s = 0; s < e.indices.size(); ++s) {
      x.data()[i * t + static_cast<int64_t>(s)] = e.indices[s];
      mask.data()[i * t + static_cast<int64_t>(s)] = 1;
    }
    labels.data()[i * 3 + e.label] = 1;
  }
  return DataSet(x, labels, mask, Tensor());
}

// Minibatches of fortunes, each padded to its own longest; a training iterator visits the
// examples in a new order every epoch (drawn from the seed and the epoch alone).
class FortuneIterator : public DataSetIterator {
 public:
  FortuneIterator(std::vector<Example> examples, int batch, bool shuffle, uint64_t seed)
      : examples_(std::move(examples)), batch_(batch), shuffle_(shuffle), seed_(seed) {
    reset();
  }
  bool hasNext() override { return cursor_ < order_.size(); }
  DataSet next() override {
    std::vector<const Example*> batch;
    for (; cursor_ < order_.size() && batch.size() < static_cast<size_t>(batch_); ++cursor_)
      batch.push_back(&examples_[order_[cursor_]]);
    return makeBatch(batch);
  }
  void reset() override {
    order_.resize(examples_.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    if (shuffle_) {
      std::mt19937_64 rng(seed_ + epoch_++);
      std::shuffle(order_.begin(), order_.end(), rng);
    }
    cursor_ = 0;
  }
  int batch() const override { return batch_; }
  int64_t inputColumns() const override { return 1; }
  int totalOutcomes() const override { return 3; }
  int64_t totalExamples() const override { return static_cast<int64_t>(examples_.size()); }

 private:
  std::vector<Example> examples_;
  int batch_;
  bool shuffle_;
  uint64_t seed_;
  uint64_t epoch_ = 0;
  std::vector<size_t> order_;
  size_t cursor_ = 0;
};

MultiLayerConfiguration classifierConfiguration(int64_t embedding, int64_t units, int64_t seed) {
  return NeuralNetConfiguration::Builder()
      .seed(seed)
      .updater(Adam(5e-3))
      .gradientNormalization(GradientNormalization::ClipElementWiseAbsoluteValue)
      .gradientNormalizationThreshold(1.0)
      .list()
      .layer(EmbeddingSequenceLayer::Builder()
                 .nIn(kVocabulary)
                 .nOut(embedding)
                 .activation(Activation::IDENTITY)
                 .build())
      .layer(LSTM::Builder().nOut(units).build())
      .layer(GlobalPoolingLayer::Builder(PoolingType::MAX).build())
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::recurrent(1))
      .build();
}

}  // namespace

int run(int argc, char** argv) {
  const samples::SampleOptions options(
      argc, argv,
      {{"dir", "the folder of the fortune files (default /usr/share/games/fortunes)"},
       {"epochs", "training epochs (default 8)"},
       {"workers", "model replicas training in parallel (default 2)"},
       {"batch", "global minibatch: fortunes per step across all workers (default 32)"},
       {"max-length", "characters kept of each fortune, from its start (default 256)"},
       {"embedding", "embedding size (default 32)"},
       {"units", "LSTM units (default 64)"},
       {"seed", "seed of the weights and the data order (default 12345)"},
       {"averaging-frequency", "local iterations between averagings (default 2)"},
       {"min-accuracy",
        "exit with status 1 when the final test accuracy is below this (default 0)"}});
  const std::string dir = options.getString("dir", "/usr/share/games/fortunes");
  const int epochs = static_cast<int>(options.getInt("epochs", 8));
  const int workers = static_cast<int>(options.getInt("workers", 2));
  const int globalBatch = static_cast<int>(options.getInt("batch", 32));
  const int64_t maxLength = options.getInt("max-length", 256);
  const int64_t embedding = options.getInt("embedding", 32);
  const int64_t units = options.getInt("units", 64);
  const int64_t seed = options.getInt("seed", 12345);
  const double minAccuracy = options.getDouble("min-accuracy", 0.0);
  if (epochs < 1 || workers < 1 || globalBatch < 1 || maxLength < 1 || embedding < 1 || units < 1)
    throw std::invalid_argument(
        "--epochs, --workers, --batch, --max-length, --embedding and --units must be >= 1");
  const int workerBatch = (globalBatch + workers - 1) / workers;

  // Every fifth fortune of each file (the 5th, 10th, ...) is a test example: a fixed split.
  std::vector<Example> train, test;
  std::array<int64_t, 3> trainCounts{}, testCounts{};
  for (int c = 0; c < 3; ++c) {
    const std::vector<std::string> entries = readFortunes(dir + "/" + kCategories[c]);
    for (size_t i = 0; i < entries.size(); ++i) {
      Example e;
      e.label = c;
      const size_t length = std::min(entries[i].size(), static_cast<size_t>(maxLength));
      for (size_t k = 0; k < length; ++k)
        e.indices.push_back(
            static_cast<float>(characterIndex(static_cast<unsigned char>(entries[i][k]))));
      const bool held = i % 5 == 4;
      (held ? testCounts : trainCounts)[static_cast<size_t>(c)]++;
      (held ? test : train).push_back(std::move(e));
    }
  }
  const auto majority = static_cast<size_t>(
      std::max_element(trainCounts.begin(), trainCounts.end()) - trainCounts.begin());
  const double baseline =
      static_cast<double>(testCounts[majority]) / static_cast<double>(test.size());
  std::cout << fmt::format(
      "fortunes in {}: train {} ({} fortunes, {} literature, {} riddles), test {} ({} / {} / {}); "
      "at most {} characters each\n",
      dir, train.size(), trainCounts[0], trainCounts[1], trainCounts[2], test.size(), testCounts[0],
      testCounts[1], testCounts[2], maxLength);
  std::cout << fmt::format(
      "majority-class baseline (always \"{}\", the most common in training): test accuracy "
      "{:.4f}\n",
      kCategories[majority], baseline);

  MultiLayerNetwork model(classifierConfiguration(embedding, units, seed));
  model.init();
  std::cout << model.summary() << samples::cpuIsaLine();
  FortuneIterator trainData(std::move(train), workerBatch, true, static_cast<uint64_t>(seed));
  FortuneIterator testData(std::move(test), 64, false, 0);

  auto wrapper = parallel::ParallelWrapper::Builder(model)
                     .workers(workers)
                     .averagingFrequency(static_cast<int>(options.getInt("averaging-frequency", 2)))
                     .prefetchBuffer(8)
                     .reportScoreAfterAveraging(false)
                     .build();
  std::cout << fmt::format("ParallelWrapper: {} workers x {} thread(s), minibatch {} each\n",
                           wrapper.workers(), wrapper.threadsPerWorker(), workerBatch);
  double accuracy = 0;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    wrapper.fit(trainData);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    testData.reset();
    const Evaluation eval = model.evaluate(testData);
    accuracy = eval.accuracy();
    std::cout << fmt::format("epoch {}: {:.1f} s, test accuracy {:.4f} (baseline {:.4f})\n",
                             epoch + 1, seconds, accuracy, baseline);
    std::cout.flush();
  }
  testData.reset();
  std::cout << model.evaluate(testData).stats() << "\n";
  if (accuracy < minAccuracy) {
    std::cerr << fmt::format("test accuracy {:.4f} is below --min-accuracy {:.4f}\n", accuracy,
                             minAccuracy);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  return samples::runSample("parallel_text_classifier", [&] { return run(argc, argv); });
}
