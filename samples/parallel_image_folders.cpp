// LeNet trained by ParallelWrapper from folders of images labelled by their folder's name, with
// augmentation and parallel decoding: MATLAB's imageDatastore + splitEachLabel +
// augmentedImageDatastore, DL4J's ImageRecordReader + ParentPathLabelGenerator + ImageTransform.
//   parallel_image_folders [--data-dir DIR] [--epochs 2] [--workers 2] [--decode-threads 2]
//                          [--augment 1] [--per-class 0] [--save PATH]
// DIR holds train/<class>/ and test/<class>/ (scripts/make-fashion-png.sh writes Fashion-MNIST so).
// A tenth of every training class is held out for validation. The model file carries the pixel
// scaler, so a server that loads it scales its inputs the same way.
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "AugmentationPipeline.h"
#include "LenetConfiguration.h"
#include "SampleSupport.h"

using namespace dl4cpp;

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
       {"seed", "split, shuffle and augmentation seed (default 42)"},
       {"min-accuracy", "exit with status 1 when test accuracy is below this (default 0)"},
       {"save", "write the trained model, with its pixel scaler, to this file"}});
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

  // Labels from the folder names; a tenth of every class held out, at random.
  LabeledFileSplit all(dir / "train");
  if (const int64_t perClass = options.getInt("per-class", 0); perClass > 0)
    all = BalancedPathFilter(seed, perClass).filter(all);
  const std::vector<LabeledFileSplit> parts = all.splitEachLabel({0.9, 0.1}, seed);
  const LabeledFileSplit testFiles(dir / "test", all.labels(),
                                   LabeledFileSplit::defaultImageExtensions());

  const auto augmentation =
      options.getInt("augment", 1) != 0 ? samples::augmentationPipeline() : nullptr;
  const ImageRecordReader trainReader(28, 28, 1, parts[0], augmentation);
  const ImageRecordReader validationReader(28, 28, 1, parts[1]);
  const ImageRecordReader testReader(28, 28, 1, testFiles);
  auto scaler = std::make_shared<ImagePreProcessingScaler>();  // [0, 255] -> [0, 1]
  const ImageDataSetIterator::Options decode{.decodeThreads = decodeThreads,
                                             .prefetchBatches = std::max(8, 2 * decodeThreads),
                                             .seed = seed};
  ImageDataSetIterator train(trainReader, workerBatch, decode);
  ImageDataSetIterator validation(validationReader, globalBatch, decode);
  ImageDataSetIterator test(testReader, globalBatch, decode);
  for (DataSetIterator* it :
       {static_cast<DataSetIterator*>(&train), static_cast<DataSetIterator*>(&validation),
        static_cast<DataSetIterator*>(&test)})
    it->setPreProcessor(scaler);
  std::cout << fmt::format(
      "{}: classes {}\n{} training, {} validation, {} test images; {} decode thread(s), "
      "augmentation {}\n",
      dir.string(), fmt::join(all.labels(), ", "), parts[0].size(), parts[1].size(),
      testFiles.size(), decodeThreads, augmentation ? "on" : "off");

  MultiLayerNetwork model(
      samples::lenetListBuilder().setInputType(InputType::convolutional(28, 28, 1)).build());
  model.init();
  std::cout << model.summary() << samples::cpuIsaLine();
  auto wrapper = parallel::ParallelWrapper::Builder(model)
                     .workers(workers)
                     .averagingFrequency(static_cast<int>(options.getInt("averaging-frequency", 3)))
                     .reportScoreAfterAveraging(true)
                     .build();
  std::cout << fmt::format("ParallelWrapper: {} workers x {} thread(s), minibatch {} each\n",
                           wrapper.workers(), wrapper.threadsPerWorker(), workerBatch);
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    wrapper.fit(train);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const parallel::ParallelStatistics& stats = wrapper.statistics();
    std::cout << fmt::format(
        "epoch {}: {:.2f} s, {:.0f} samples/s, data wait {:.2f}% of wall time, averaged score "
        "{:.4f}, validation accuracy {:.2f}%\n",
        epoch + 1, seconds, static_cast<double>(train.totalExamples()) / seconds,
        100 * stats.dataWaitShare(), model.score(), 100 * model.evaluate(validation).accuracy());
  }

  const std::string savePath = options.getString("save", "");
  if (!savePath.empty()) {
    ModelSerializer::writeModel(model, savePath, true, scaler.get());
    std::cout << "saved the model and its pixel scaler to " << savePath << "\n";
  }
  return samples::reportEvaluation(model.evaluate(test), options.getDouble("min-accuracy", 0.0));
}

int main(int argc, char** argv) {
  return samples::runSample("parallel_image_folders", [&] { return run(argc, argv); });
}
