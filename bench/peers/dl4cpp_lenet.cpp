// dl4cpp's side of the peer benchmark: the LeNet of samples/LenetConfiguration.h (or, with
// --network batchnorm, the network of samples/BatchNormConfiguration.h, with --network vgg that of
// samples/VggConfiguration.h, with --network resnet the residual ComputationGraph of
// samples/ResidualConfiguration.h, with --network resnet50 the zoo's ResNet50) under the protocol
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

peers::PeerResult run(const peers::PeerOptions& options) {
  peers::PeerResult result;
  if (options.network == "resnet50") {
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
