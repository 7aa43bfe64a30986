// dl4cpp's side of the peer benchmark: the LeNet of samples/LenetConfiguration.h (or, with
// --network batchnorm, the network of samples/BatchNormConfiguration.h, with --network vgg that of
// samples/VggConfiguration.h) under the protocol of PeerProtocol.h (one JSON line on stdout), the
// yardstick for libtorch_lenet.
//   dl4cpp_lenet [--threads 1] [--network lenet] [--data-dir DIR] [--train-examples N]
//                [--test-examples N]
// The batches come from MnistDataSetIterator(128, ..., shuffle, seed 123), drained into memory
// before the clock starts; training is model.fit(batch) over them, as MultiLayerNetwork::fit
// does over an iterator.
#include <dl4cpp/config.h>
#include <dl4cpp/dl4cpp.h>

#include <vector>

#include "BatchNormConfiguration.h"
#include "LenetConfiguration.h"
#include "PeerProtocol.h"
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

peers::PeerResult run(const peers::PeerOptions& options) {
  const int batch = peers::PeerOptions::kBatch;
  const auto seed = static_cast<int64_t>(peers::PeerOptions::kSeed);
  MnistDataSetIterator trainIterator(batch, options.trainExamples, false, true, true, seed,
                                     options.dataDir);
  MnistDataSetIterator testIterator(batch, options.testExamples, false, false, false, seed,
                                    options.dataDir);
  peers::LabelOrderHash orderHash;
  const std::vector<DataSet> train = drain(trainIterator, &orderHash);
  const std::vector<DataSet> test = drain(testIterator, nullptr);

  MultiLayerNetwork model(options.network == "lenet"       ? samples::lenetConfiguration()
                          : options.network == "batchnorm" ? samples::batchNormConfiguration()
                                                           : samples::vggConfiguration(),
                          Device::cpu(), options.threads);
  model.init();

  peers::PeerResult result;
  result.epochSeconds = peers::timeEpoch([&] {
    for (const DataSet& b : train) model.fit(b);
  });
  Evaluation eval(MnistDataSetIterator::kNumClasses);
  for (const DataSet& b : test) eval.eval(b.labels, model.output(b.features));
  result.library = "dl4cpp";
  result.network = options.network;
  result.version = DL4CPP_VERSION;
  result.threads = model.numThreads();
  result.trainExamples = trainIterator.totalExamples();
  result.testAccuracy = eval.accuracy();
  result.epochOrderHash = orderHash.value();
  return result;
}

}  // namespace

int main(int argc, char** argv) { return peers::runPeer("dl4cpp_lenet", argc, argv, run); }
