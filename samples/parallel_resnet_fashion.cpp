// A small residual network (ResNet-style: conv-BN-ReLU stem, three residual blocks joined by
// ElementWiseVertex Add, projection shortcuts where the shape changes, global average pooling;
// samples/ResidualConfiguration.h) built as a ComputationGraph and trained by ParallelWrapper on
// Fashion-MNIST image folders with augmentation (samples/AugmentationPipeline.h); and, for
// comparison, the same network trained as a single model on the same data for the same epochs.
//   parallel_resnet_fashion [--data-dir DIR] [--workers 2] [--epochs 2] [--averaging-frequency 3]
//                           [--single 1] [--per-class 0] [--augment 1] [--save PATH]
// DIR holds train/<class>/ and test/<class>/ (scripts/make-fashion-png.sh writes Fashion-MNIST so).
// Graph replicas train on the CPU.
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "AugmentationPipeline.h"
#include "ResidualConfiguration.h"
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
      {{"data-dir", "folder with train/<class>/ and test/<class>/ (default " +
                        samples::fashionPngDir() + ", written by scripts/make-fashion-png.sh)"},
       {"epochs", "training epochs (default 2)"},
       {"batch", "global minibatch: examples per step across all workers (default 128)"},
       {"workers", "model replicas training in parallel (default 2)"},
       {"averaging-frequency", "local iterations between averagings (default 3)"},
       {"decode-threads", "threads decoding and augmenting images (default 2)"},
       {"augment", "1 = flip, rotate, translate, brightness/contrast; 0 = none (default 1)"},
       {"per-class", "use at most N training images of each class, 0 = all (default 0)"},
       {"single", "1 = also train a single model the same way and compare (default 1)"},
       {"seed", "shuffle and augmentation seed (default 42)"},
       {"min-accuracy", "exit with status 1 when test accuracy is below this (default 0)"},
       {"save", "write the trained model to this file"}});
  const std::filesystem::path dir = options.getString("data-dir", samples::fashionPngDir());
  const int epochs = static_cast<int>(options.getInt("epochs", 2));
  const int workers = static_cast<int>(options.getInt("workers", 2));
  const int globalBatch = static_cast<int>(options.getInt("batch", 128));
  const int decodeThreads = static_cast<int>(options.getInt("decode-threads", 2));
  const uint64_t seed = static_cast<uint64_t>(options.getInt("seed", 42));
  if (epochs < 1 || workers < 1 || globalBatch < 1 || decodeThreads < 0)
    throw std::invalid_argument(
        "--epochs, --workers and --batch must be >= 1, --decode-threads >= 0");
  const int workerBatch = (globalBatch + workers - 1) / workers;

  LabeledFileSplit trainFiles(dir / "train");
  if (const int64_t perClass = options.getInt("per-class", 0); perClass > 0)
    trainFiles = BalancedPathFilter(seed, perClass).filter(trainFiles);
  const LabeledFileSplit testFiles(dir / "test", trainFiles.labels(),
                                   LabeledFileSplit::defaultImageExtensions());
  const auto augmentation =
      options.getInt("augment", 1) != 0 ? samples::augmentationPipeline() : nullptr;
  const ImageRecordReader trainReader(28, 28, 1, trainFiles, augmentation);
  const ImageRecordReader testReader(28, 28, 1, testFiles);
  auto scaler = std::make_shared<ImagePreProcessingScaler>();  // [0, 255] -> [0, 1]
  const ImageDataSetIterator::Options decode{.decodeThreads = decodeThreads,
                                             .prefetchBatches = std::max(8, 2 * decodeThreads),
                                             .seed = seed};
  // The wrapper's workers take minibatches of workerBatch; the single model the global one.
  ImageDataSetIterator train(trainReader, workerBatch, decode);
  ImageDataSetIterator singleTrain(trainReader, globalBatch, decode);
  ImageDataSetIterator test(testReader, globalBatch, decode);
  for (DataSetIterator* it :
       {static_cast<DataSetIterator*>(&train), static_cast<DataSetIterator*>(&singleTrain),
        static_cast<DataSetIterator*>(&test)})
    it->setPreProcessor(scaler);
  std::cout << fmt::format(
      "{}: {} training, {} test images; {} decode thread(s), augmentation {}\n", dir.string(),
      trainFiles.size(), testFiles.size(), decodeThreads, augmentation ? "on" : "off");

  ComputationGraph model(samples::residualConfiguration());
  model.init();
  std::cout << model.summary() << fmt::format("{} parameters\n", model.numParams())
            << samples::cpuIsaLine();
  auto wrapper = parallel::ParallelWrapper::Builder(model)
                     .workers(workers)
                     .averagingFrequency(static_cast<int>(options.getInt("averaging-frequency", 3)))
                     .prefetchBuffer(24)
                     .reportScoreAfterAveraging(true)
                     .devices({Device::cpu()})
                     .build();
  std::cout << fmt::format("ParallelWrapper: {} workers x {} thread(s), minibatch {} each\n",
                           wrapper.workers(), wrapper.threadsPerWorker(), workerBatch);
  double parallelSeconds = 0;
  Evaluation parallelEval(10);
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    wrapper.fit(train);
    const double seconds = secondsSince(start);
    parallelSeconds += seconds;
    parallelEval = model.evaluate(test);
    std::cout << fmt::format(
        "epoch {}: {:.2f} s, {:.0f} samples/s, data wait {:.2f}% of wall time, averaged score "
        "{:.4f}, test accuracy {:.2f}%\n",
        epoch + 1, seconds, static_cast<double>(train.totalExamples()) / seconds,
        100 * wrapper.statistics().dataWaitShare(), model.score(), 100 * parallelEval.accuracy());
  }

  const std::string savePath = options.getString("save", "");
  if (!savePath.empty()) samples::saveModel(model, savePath);

  if (options.getInt("single", 1) != 0) {
    // The same network and seed on one model with the same cores, the global minibatch.
    ComputationGraph single(samples::residualConfiguration());
    single.init();
    double singleSeconds = 0;
    double singleAccuracy = 0;
    for (int epoch = 0; epoch < epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      single.fit(singleTrain);
      const double seconds = secondsSince(start);
      singleSeconds += seconds;
      singleAccuracy = single.evaluate(test).accuracy();
      std::cout << fmt::format(
          "single model epoch {}: {:.2f} s, {:.0f} samples/s, score {:.4f}, test accuracy "
          "{:.2f}%\n",
          epoch + 1, seconds, static_cast<double>(singleTrain.totalExamples()) / seconds,
          single.score(), 100 * singleAccuracy);
    }
    std::cout << fmt::format(
        "after {} epoch(s): ParallelWrapper {:.2f}% in {:.1f} s, single model {:.2f}% in {:.1f} "
        "s; difference {:+.2f} points\n",
        epochs, 100 * parallelEval.accuracy(), parallelSeconds, 100 * singleAccuracy, singleSeconds,
        100 * (parallelEval.accuracy() - singleAccuracy));
  }
  return samples::reportEvaluation(parallelEval, options.getDouble("min-accuracy", 0.0));
}

int main(int argc, char** argv) {
  return samples::runSample("parallel_resnet_fashion", [&] { return run(argc, argv); });
}
