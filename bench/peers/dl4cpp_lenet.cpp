// dl4cpp's side of the peer benchmark: the LeNet of samples/LenetConfiguration.h (or, with
// --network batchnorm, the network of samples/BatchNormConfiguration.h, with --network vgg that of
// samples/VggConfiguration.h, with --network resnet the residual ComputationGraph of
// samples/ResidualConfiguration.h, with --network resnet50 the zoo's ResNet50, with --network
// charlstm the character LSTM of samples/CharLstmConfiguration.h, with --network lenetgraph
// LeNet's layers as a chain ComputationGraph, which must train as fast as the network) under the
// protocol
// of PeerProtocol.h (one JSON line on stdout), the yardstick for libtorch_lenet.
//   dl4cpp_lenet [--threads 1] [--network lenet] [--data-dir DIR] [--train-examples N]
//                [--test-examples N]
// The batches come from MnistDataSetIterator(128, ..., shuffle, seed 123), drained into memory
// before the clock starts; training is model.fit(batch) over them, as MultiLayerNetwork::fit
// does over an iterator. ResNet50 trains on PeerProtocol.h's synthetic batches.
#include <dl4cpp/config.h>
#include <dl4cpp/dl4cpp.h>

#include <vector>

#include "BatchNormConfiguration.h"
#include "CharCorpus.h"
#include "CharLstmConfiguration.h"
#include "LenetConfiguration.h"
#include "PeerProtocol.h"
#include "ResidualConfiguration.h"
#include "VggConfiguration.h"

using namespace dl4cpp;

namespace {

std::vector<DataSet> drain(MnistDataSetIterator& iterator, peers::LabelOrderHash* hash) {
  std::vector<DataSet> batches;
  while (iterator.hasNext()) {
    DataSet batch = iterator.next();
    if (hash) {
      const int64_t classes = batch.labels.dim(1);
      const float* l = batch.labels.data();
      for (int64_t r = 0; r < batch.numExamples(); ++r)
        for (int64_t c = 0; c < classes; ++c)
          if (l[r * classes + c] == 1.0f) hash->add(static_cast<int>(c));
    }
    batches.push_back(std::move(batch));
  }
  return batches;
}

// One timed epoch of model.fit over `train`, then the accuracy on `test`.
template <typename Net>
void trainAndEvaluate(Net& model, const std::vector<DataSet>& train,
                      const std::vector<DataSet>& test, int64_t classes,
                      peers::PeerResult& result) {
  result.epochSeconds = peers::timeEpoch([&] {
    for (const DataSet& b : train) model.fit(b);
  });
  Evaluation eval(classes);
  for (const DataSet& b : test) eval.eval(b.labels, model.outputSingle(b.features));
  result.testAccuracy = eval.accuracy();
  result.threads = model.numThreads();
}

// ResNet-50 at 224x224 on the synthetic batches: one warm-up step, then the timed steps.
peers::PeerResult runResNet50(const peers::PeerOptions& options) {
  using peers::PeerOptions;
  const int steps = options.resNet50Steps();
  constexpr int64_t n = PeerOptions::kResNet50Batch, side = PeerOptions::kResNet50Side,
                    classes = PeerOptions::kResNet50Classes;
  peers::LabelOrderHash orderHash;
  std::vector<DataSet> batches;
  std::vector<int64_t> labels(n);
  for (int step = 0; step <= steps; ++step) {
    Tensor f(Shape{n, 3, side, side}), l(Shape{n, classes});
    peers::syntheticImageNetBatch(step, f.data(), labels.data());
    l.fill(0);
    for (int64_t r = 0; r < n; ++r) {
      l.data()[r * classes + labels[r]] = 1;
      if (step > 0) orderHash.add(static_cast<int>(labels[r]));
    }
    batches.emplace_back(f, l);
  }
  ComputationGraph model(ResNet50::builder().seed(PeerOptions::kSeed).build().conf(), Device::cpu(),
                         options.threads);
  model.init();
  model.fit(batches.front());  // warm-up, untimed
  const std::vector<DataSet> timed(batches.begin() + 1, batches.end());
  peers::PeerResult result;
  trainAndEvaluate(model, timed, {batches.front()}, classes, result);
  result.trainExamples = static_cast<int64_t>(steps) * n;
  result.epochOrderHash = orderHash.value();
  return result;
}

// The layers of `conf` as a chain graph: the same resolved layers, seed and input type.
ComputationGraphConfiguration chainGraph(const MultiLayerConfiguration& conf) {
  auto b = NeuralNetConfiguration::Builder().seed(conf.seed).graphBuilder();
  b.addInputs("input").setInputTypes(conf.inputType);
  std::string previous = "input";
  for (size_t i = 0; i < conf.layers.size(); ++i) {
    const std::string name = "layer" + std::to_string(i);
    b.addLayer(name, *conf.layers[i], previous);
    previous = name;
  }
  return b.setOutputs(previous).build();
}

// One-hot batches (n, V, kSteps) of CharCorpus windows: features the first kSteps characters,
// labels the last kSteps.
std::vector<DataSet> charBatches(const std::vector<std::vector<int>>& windows, int64_t v,
                                 peers::LabelOrderHash* hash) {
  constexpr int64_t steps = peers::CharCorpus::kSteps;
  std::vector<DataSet> batches;
  for (size_t first = 0; first < windows.size(); first += peers::CharCorpus::kBatch) {
    const auto n =
        static_cast<int64_t>(std::min<size_t>(peers::CharCorpus::kBatch, windows.size() - first));
    Tensor f(Shape{n, v, steps}), l(Shape{n, v, steps});
    f.fill(0);
    l.fill(0);
    for (int64_t r = 0; r < n; ++r) {
      const std::vector<int>& w = windows[first + static_cast<size_t>(r)];
      if (hash) hash->add(w[0]);
      for (int64_t t = 0; t < steps; ++t) {
        f.data()[(r * v + w[static_cast<size_t>(t)]) * steps + t] = 1;
        l.data()[(r * v + w[static_cast<size_t>(t) + 1]) * steps + t] = 1;
      }
    }
    batches.emplace_back(f, l);
  }
  return batches;
}

// The character LSTM: one timed epoch, then the share of test characters predicted.
peers::PeerResult runCharLstm(const peers::PeerOptions& options) {
  const peers::CharCorpus corpus = peers::readCharCorpus(
      options.dataDir, options.trainExamples, options.testExamples, peers::PeerOptions::kSeed);
  const int64_t v = corpus.vocabulary, steps = peers::CharCorpus::kSteps;
  peers::LabelOrderHash orderHash;
  const std::vector<DataSet> train = charBatches(corpus.train, v, &orderHash);
  const std::vector<DataSet> test = charBatches(corpus.test, v, nullptr);
  MultiLayerNetwork model(
      samples::charLstmConfiguration(v, 1, peers::CharCorpus::kUnits, peers::PeerOptions::kSeed),
      Device::cpu(), options.threads);
  model.init();
  peers::PeerResult result;
  result.epochSeconds = peers::timeEpoch([&] {
    for (const DataSet& b : train) model.fit(b);
  });
  int64_t right = 0, total = 0;
  for (const DataSet& b : test) {
    const Tensor out = model.output(b.features).toHost();
    const float* o = out.data();
    const float* l = b.labels.data();
    for (int64_t r = 0; r < b.numExamples(); ++r)
      for (int64_t t = 0; t < steps; ++t) {
        int64_t best = 0, truth = 0;
        for (int64_t c = 0; c < v; ++c) {
          if (o[(r * v + c) * steps + t] > o[(r * v + best) * steps + t]) best = c;
          if (l[(r * v + c) * steps + t] == 1) truth = c;
        }
        right += best == truth ? 1 : 0;
        ++total;
      }
  }
  result.testAccuracy = static_cast<double>(right) / static_cast<double>(total);
  result.threads = model.numThreads();
  result.trainExamples = static_cast<int64_t>(corpus.train.size());
  result.epochOrderHash = orderHash.value();
  return result;
}

peers::PeerResult run(const peers::PeerOptions& options) {
  peers::PeerResult result;
  if (options.network == "charlstm") {
    result = runCharLstm(options);
  } else if (options.network == "resnet50") {
    result = runResNet50(options);
  } else {
    const int batch = peers::PeerOptions::kBatch;
    const auto seed = static_cast<int64_t>(peers::PeerOptions::kSeed);
    MnistDataSetIterator trainIterator(batch, options.trainExamples, false, true, true, seed,
                                       options.dataDir);
    MnistDataSetIterator testIterator(batch, options.testExamples, false, false, false, seed,
                                      options.dataDir);
    peers::LabelOrderHash orderHash;
    const std::vector<DataSet> train = drain(trainIterator, &orderHash);
    const std::vector<DataSet> test = drain(testIterator, nullptr);
    if (options.network == "resnet") {
      ComputationGraph model(
          samples::residualConfiguration(peers::PeerOptions::kSeed,
                                         InputType::convolutionalFlat(28, 28, 1)),
          Device::cpu(), options.threads);
      model.init();
      trainAndEvaluate(model, train, test, MnistDataSetIterator::kNumClasses, result);
    } else if (options.network == "lenetgraph") {
      ComputationGraph model(chainGraph(samples::lenetConfiguration()), Device::cpu(),
                             options.threads);
      model.init();
      trainAndEvaluate(model, train, test, MnistDataSetIterator::kNumClasses, result);
    } else {
      MultiLayerNetwork model(options.network == "lenet"       ? samples::lenetConfiguration()
                              : options.network == "batchnorm" ? samples::batchNormConfiguration()
                                                               : samples::vggConfiguration(),
                              Device::cpu(), options.threads);
      model.init();
      trainAndEvaluate(model, train, test, MnistDataSetIterator::kNumClasses, result);
    }
    result.trainExamples = trainIterator.totalExamples();
    result.epochOrderHash = orderHash.value();
  }
  result.library = "dl4cpp";
  result.network = options.network;
  result.version = DL4CPP_VERSION;
  return result;
}

}  // namespace

int main(int argc, char** argv) { return peers::runPeer("dl4cpp_lenet", argc, argv, run); }
