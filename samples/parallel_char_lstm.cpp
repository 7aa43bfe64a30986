// A character-level language model (DL4J's GravesLSTMCharModellingExample): LSTM layers and a
// softmax RnnOutputLayer (MCXENT) predict the next character of a text at every step, from
// CharacterIterator's one-hot sequences. The model is trained by ParallelWrapper (parameter
// averaging) and, for comparison, the same network as a single model on the same data. After
// every epoch both models' loss per character is printed, with text each generates from a seed
// prefix. The default text is Debian's fortunes-min (/usr/share/games/fortunes/fortunes).
//   parallel_char_lstm [--text FILE] [--epochs 20] [--workers 2] [--sequence-length 64]
//                      [--batch 16] [--seed 12345] [--single 1]
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <random>

#include "CharLstmConfiguration.h"
#include "SampleSupport.h"

using namespace dl4cpp;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The mean loss per character over `data`: the network's score is the loss summed over the
// steps of a sequence (mean over sequences), so divided by the steps it is the cross-entropy of
// one next-character prediction in nats (ln V for a uniform guess).
double lossPerCharacter(MultiLayerNetwork& model, const std::vector<DataSet>& data) {
  double sum = 0;
  int64_t examples = 0;
  for (const DataSet& batch : data) {
    const int64_t n = batch.numExamples();
    sum += model.score(batch) * static_cast<double>(n) /
           static_cast<double>(batch.features.shape()[2]);
    examples += n;
  }
  // score() includes the regularisation terms; this network has none.
  return sum / static_cast<double>(examples);
}

// Generates `length` characters after `prefix`, each drawn from the softmax of the network's
// output at the last step. rnnTimeStep keeps the LSTM's state between calls (DL4J's
// GravesLSTMCharModellingExample does the same): the prefix runs once, then each new character
// is one step, so generating costs O(length) steps.
std::string generate(MultiLayerNetwork& model, const CharacterIterator& text,
                     const std::string& prefix, int length, std::mt19937_64& rng) {
  const int64_t v = text.totalOutcomes();
  auto oneHot = [&](const std::vector<int>& indices) {
    const auto t = static_cast<int64_t>(indices.size());
    std::vector<float> values(static_cast<size_t>(v * t), 0.0f);
    for (int64_t s = 0; s < t; ++s)
      values[static_cast<size_t>(indices[static_cast<size_t>(s)] * t + s)] = 1.0f;
    return Tensor::fromVector({1, v, t}, values);
  };
  std::vector<int> indices;
  for (char c : prefix) indices.push_back(text.convertCharacterToIndex(c));
  model.rnnClearPreviousState();
  Tensor out = model.rnnTimeStep(oneHot(indices));
  std::string generated;
  for (int i = 0; i < length; ++i) {
    const int64_t t = out.dim(2);
    std::vector<double> probabilities(static_cast<size_t>(v));
    for (int64_t c = 0; c < v; ++c)
      probabilities[static_cast<size_t>(c)] = out.data()[c * t + (t - 1)];
    std::discrete_distribution<int> draw(probabilities.begin(), probabilities.end());
    const int next = draw(rng);
    generated += text.convertIndexToCharacter(next);
    if (i + 1 < length) out = model.rnnTimeStep(oneHot({next}));
  }
  model.rnnClearPreviousState();
  return generated;
}

void printSample(const std::string& who, const std::string& prefix, const std::string& text) {
  std::cout << "  " << who << " sample:\n    " << prefix;
  for (char c : text) std::cout << (c == '\n' ? std::string("\n    ") : std::string(1, c));
  std::cout << "\n";
}

}  // namespace

int run(int argc, char** argv) {
  const samples::SampleOptions options(
      argc, argv,
      {{"text", "the text file to model (default /usr/share/games/fortunes/fortunes)"},
       {"epochs", "training epochs (default 20)"},
       {"workers", "model replicas training in parallel (default 2)"},
       {"sequence-length", "characters per training sequence (default 64)"},
       {"batch", "global minibatch: sequences per step across all workers (default 16)"},
       {"seed", "seed of the weights, the data order and the sampling (default 12345)"},
       {"single", "1 = also train the same network as a single model and compare (default 1)"},
       {"layers", "LSTM layers (default 1)"},
       {"units", "units per LSTM layer (default 128)"},
       {"averaging-frequency", "local iterations between averagings (default 2)"},
       {"prefix", "the seed text of the generated samples (default \"The \")"},
       {"sample-length", "characters generated after each epoch (default 200)"},
       {"max-loss",
        "exit with status 1 when the final loss per character is above this "
        "(default: no limit)"}});
  const std::string textPath = options.getString("text", "/usr/share/games/fortunes/fortunes");
  const int epochs = static_cast<int>(options.getInt("epochs", 20));
  const int workers = static_cast<int>(options.getInt("workers", 2));
  const int length = static_cast<int>(options.getInt("sequence-length", 64));
  const int globalBatch = static_cast<int>(options.getInt("batch", 16));
  const int64_t seed = options.getInt("seed", 12345);
  const bool single = options.getInt("single", 1) != 0;
  const int layers = static_cast<int>(options.getInt("layers", 1));
  const int units = static_cast<int>(options.getInt("units", 128));
  const int sampleLength = static_cast<int>(options.getInt("sample-length", 200));
  const std::string prefix = options.getString("prefix", "The ");
  const double maxLoss = options.getDouble("max-loss", INFINITY);
  if (epochs < 1 || workers < 1 || length < 1 || globalBatch < 1 || layers < 1 || units < 1)
    throw std::invalid_argument(
        "--epochs, --workers, --sequence-length, --batch, --layers and --units must be >= 1");
  if (sampleLength < 0) throw std::invalid_argument("--sample-length must be >= 0");
  if (prefix.empty()) throw std::invalid_argument("--prefix must not be empty");
  const int workerBatch = (globalBatch + workers - 1) / workers;

  // The fortune file's separator lines ("%") are dropped; every character of the default set
  // (DL4J's getDefaultCharacterSet) is kept.
  CharacterIterator::Options textOptions;
  textOptions.validCharacters = CharacterIterator::getDefaultCharacterSet();
  textOptions.seed = static_cast<uint64_t>(seed);
  textOptions.commentChars = "%";
  CharacterIterator train(textPath, workerBatch, length, textOptions);
  const int64_t characters = train.totalOutcomes();
  for (char c : prefix) train.convertCharacterToIndex(c);  // a prefix outside the set: ConfigError

  // The loss is measured on the same fixed sequences for both models (a fixed draw of the
  // training text: this is the training loss, the text being too small to hold data out).
  std::vector<DataSet> lossData;
  {
    CharacterIterator::Options fixed = textOptions;
    fixed.seed = static_cast<uint64_t>(seed) + 1;
    CharacterIterator lossText(textPath, 64, length, fixed);
    for (int64_t n = 0; lossText.hasNext() && n < 256; n += lossData.back().numExamples())
      lossData.push_back(lossText.next());
  }

  MultiLayerNetwork model(samples::charLstmConfiguration(characters, layers, units, seed));
  model.init();
  std::cout << model.summary() << samples::cpuIsaLine();
  std::cout << fmt::format(
      "text {}: {} characters kept, {} distinct valid characters, {} sequences of {} per epoch; "
      "a uniform guess scores ln {} = {:.4f} per character\n",
      textPath, train.characterIndices().size(), characters, train.totalExamples(), length,
      characters, std::log(static_cast<double>(characters)));

  std::optional<MultiLayerNetwork> singleModel;
  std::optional<CharacterIterator> singleTrain;
  if (single) {
    singleModel.emplace(samples::charLstmConfiguration(characters, layers, units, seed));
    singleModel->init();
    singleTrain.emplace(textPath, globalBatch, length, textOptions);
  }

  auto wrapper = parallel::ParallelWrapper::Builder(model)
                     .workers(workers)
                     .averagingFrequency(static_cast<int>(options.getInt("averaging-frequency", 2)))
                     .prefetchBuffer(8)
                     .reportScoreAfterAveraging(false)
                     .build();
  std::cout << fmt::format("ParallelWrapper: {} workers x {} thread(s), minibatch {} each",
                           wrapper.workers(), wrapper.threadsPerWorker(), workerBatch);
  if (single) std::cout << fmt::format("; single model: minibatch {}", globalBatch);
  std::cout << "\n";

  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  double parallelSeconds = 0, singleSeconds = 0, parallelLoss = 0, singleLoss = 0;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    auto start = std::chrono::steady_clock::now();
    wrapper.fit(train);
    const double seconds = secondsSince(start);
    parallelSeconds += seconds;
    parallelLoss = lossPerCharacter(model, lossData);
    std::cout << fmt::format("epoch {}: ParallelWrapper {:.1f} s, loss per character {:.4f}",
                             epoch + 1, seconds, parallelLoss);
    if (single) {
      start = std::chrono::steady_clock::now();
      singleModel->fit(*singleTrain);
      const double s = secondsSince(start);
      singleSeconds += s;
      singleLoss = lossPerCharacter(*singleModel, lossData);
      std::cout << fmt::format("; single model {:.1f} s, loss per character {:.4f}", s, singleLoss);
    }
    std::cout << "\n";
    printSample("ParallelWrapper", prefix, generate(model, train, prefix, sampleLength, rng));
    if (single)
      printSample("single model", prefix, generate(*singleModel, train, prefix, sampleLength, rng));
    std::cout.flush();
  }
  std::cout << fmt::format(
      "after {} epoch(s): ParallelWrapper loss per character {:.4f} in {:.1f} s", epochs,
      parallelLoss, parallelSeconds);
  if (single)
    std::cout << fmt::format(", single model {:.4f} in {:.1f} s", singleLoss, singleSeconds);
  std::cout << "\n";
  if (parallelLoss > maxLoss) {
    std::cerr << fmt::format("loss per character {:.4f} is above --max-loss {:.4f}\n", parallelLoss,
                             maxLoss);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  return samples::runSample("parallel_char_lstm", [&] { return run(argc, argv); });
}
