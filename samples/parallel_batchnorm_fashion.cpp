// The network of MATLAB's custom parallel-training example (conv -> batch norm -> ReLU, three
// times, then a softmax output; BatchNormConfiguration.h) on Fashion-MNIST (Debian's
// dataset-fashion-mnist), trained by ParallelWrapper with the batch-normalisation statistics
// pooled across workers at every averaging, and, for comparison, by a single model on the same
// data for the same epochs.
//   parallel_batchnorm_fashion [--workers 2] [--epochs 3] [--averaging-frequency 3] [--single 1]
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "BatchNormConfiguration.h"
#include "SampleSupport.h"

using namespace dl4cpp;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int run(int argc, char** argv) {
  const samples::SampleOptions options(
      argc, argv,
      {{"epochs", "training epochs (default 3)"},
       {"batch", "global minibatch: examples per step across all workers (default 128)"},
       {"workers", "model replicas training in parallel (default 2)"},
       {"averaging-frequency", "local iterations between averagings (default 3)"},
       {"device", "cpu | cuda (default cuda when a GPU is present)"},
       {"single", "1 = also train a single model the same way and compare (default 1)"},
       {"data-dir",
        "Fashion-MNIST directory (default " + MnistDataSetIterator::fashionMnistDirectory() + ")"},
       {"train-examples", "use only the first N training examples (default: all 60000)"},
       {"test-examples", "use only the first N test examples (default: all 10000)"},
       {"min-accuracy", "exit with status 1 when test accuracy is below this (default 0)"},
       {"save", "write the trained model to this file"}});
  const int epochs = static_cast<int>(options.getInt("epochs", 3));
  const int workers = static_cast<int>(options.getInt("workers", 2));
  const int globalBatch = static_cast<int>(options.getInt("batch", 128));
  if (epochs < 1 || workers < 1 || globalBatch < 1)
    throw std::invalid_argument("--epochs, --workers and --batch must be >= 1");
  const int workerBatch = (globalBatch + workers - 1) / workers;
  const std::string dir =
      options.getString("data-dir", MnistDataSetIterator::fashionMnistDirectory());
  const int trainExamples = static_cast<int>(options.getInt("train-examples", 0));
  const int testExamples = static_cast<int>(options.getInt("test-examples", 0));
  const int64_t seed = 123;
  const auto devices = samples::devicesFromOption(options.getString("device", ""));

  MultiLayerNetwork model(samples::batchNormConfiguration());
  model.init();
  std::cout << model.summary() << samples::cpuIsaLine();

  MnistDataSetIterator train(workerBatch, trainExamples, false, true, true, seed, dir);
  MnistDataSetIterator test(globalBatch, testExamples, false, false, false, seed, dir);
  auto wrapper = parallel::ParallelWrapper::Builder(model)
                     .workers(workers)
                     .averagingFrequency(static_cast<int>(options.getInt("averaging-frequency", 3)))
                     .prefetchBuffer(24)
                     .reportScoreAfterAveraging(true)
                     .devices(devices)
                     .build();
  std::cout << fmt::format("ParallelWrapper: {} workers x {} thread(s) on {}, minibatch {} each\n",
                           wrapper.workers(), wrapper.threadsPerWorker(),
                           wrapper.devices().front().toString(), workerBatch);
  const auto parallelStart = std::chrono::steady_clock::now();
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    wrapper.fit(train);
    const double seconds = secondsSince(start);
    std::cout << fmt::format("epoch {}: {:.2f} s, {:.0f} samples/s, averaged score {:.4f}\n",
                             epoch + 1, seconds, double(train.totalExamples()) / seconds,
                             model.score());
  }
  const double parallelSeconds = secondsSince(parallelStart);
  const Evaluation parallelEval = model.evaluate(test);

  const std::string savePath = options.getString("save", "");
  if (!savePath.empty()) samples::saveModel(model, savePath);

  if (options.getInt("single", 1) != 0) {
    // The same network, seed, data order and global minibatch, on one model with the same cores.
    MultiLayerNetwork single(samples::batchNormConfiguration(), devices.front());
    single.init();
    MnistDataSetIterator singleTrain(globalBatch, trainExamples, false, true, true, seed, dir);
    const auto start = std::chrono::steady_clock::now();
    single.fit(singleTrain, epochs);
    const double singleSeconds = secondsSince(start);
    const double singleAccuracy = single.evaluate(test).accuracy();
    std::cout << fmt::format(
        "after {} epoch(s): ParallelWrapper {:.2f}% in {:.1f} s, single model {:.2f}% in {:.1f} "
        "s; difference {:+.2f} points\n",
        epochs, 100 * parallelEval.accuracy(), parallelSeconds, 100 * singleAccuracy, singleSeconds,
        100 * (parallelEval.accuracy() - singleAccuracy));
  }
  return samples::reportEvaluation(parallelEval, options.getDouble("min-accuracy", 0.0));
}

int main(int argc, char** argv) {
  return samples::runSample("parallel_batchnorm_fashion", [&] { return run(argc, argv); });
}
