// LeNet on MNIST with a single model: DL4J's LenetMnistExample, in C++.
//   lenet_mnist [--epochs 1] [--batch 128] [--threads 0] [--data-dir DIR] [--save PATH]
//               [--ui-port N] [--report PATH]
// Prints the network, per-epoch time and samples/s, and the test-set Evaluation; with --ui-port
// serves the live training page, with --report writes the HTML report.
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "LenetConfiguration.h"
#include "SampleSupport.h"
#include "TrainingUi.h"

using namespace dl4cpp;

int run(int argc, char** argv) {
  const samples::SampleOptions options(
      argc, argv,
      samples::withTrainingUiFlags(
          {{"epochs", "training epochs (default 1)"},
           {"batch", "minibatch size (default 128)"},
           {"threads", "CPU threads for the model, 0 = all cores (default 0)"},
           {"device", "cpu | cuda (default cuda when a GPU is present, else cpu)"},
           {"data-dir", "MNIST directory (default $DL4CPP_DATA_DIR/MNIST or ~/.dl4cpp/data/MNIST)"},
           {"train-examples", "use only the first N training examples (default: all 60000)"},
           {"test-examples", "use only the first N test examples (default: all 10000)"},
           {"min-accuracy", "exit with status 1 when test accuracy is below this (default 0)"},
           {"progress", "1 = progress bar on stderr, 0 = off (default 1)"},
           {"save", "write the trained model to this file (MultiLayerNetwork::load reads it)"}}));
  const int epochs = static_cast<int>(options.getInt("epochs", 1));
  const int batch = static_cast<int>(options.getInt("batch", 128));
  const int threads = static_cast<int>(options.getInt("threads", 0));
  const std::string dir = options.getString("data-dir", "");
  const int trainExamples = static_cast<int>(options.getInt("train-examples", 0));
  const int testExamples = static_cast<int>(options.getInt("test-examples", 0));
  const double minAccuracy = options.getDouble("min-accuracy", 0.0);
  if (epochs < 1 || batch < 1 || threads < 0)
    throw std::invalid_argument("--epochs and --batch must be >= 1, --threads >= 0");

  const int64_t seed = 123;
  MnistDataSetIterator mnistTrain(batch, trainExamples, false, true, true, seed, dir);
  MnistDataSetIterator mnistTest(batch, testExamples, false, false, false, seed, dir);

  const Device device = samples::devicesFromOption(options.getString("device", "")).front();
  MultiLayerNetwork model(samples::lenetConfiguration(), device, threads);
  model.init();
  std::cout << model.summary() << samples::cpuIsaLine();
  std::cout << fmt::format("training on {} examples, batch {}, on {} ({} thread(s))\n",
                           mnistTrain.totalExamples(), batch, device.toString(),
                           model.numThreads());
  if (options.getInt("progress", 1) != 0)
    model.setListeners(
        {std::make_shared<ProgressListener>(), std::make_shared<ScoreIterationListener>(100)});
  samples::TrainingUi ui(options);
  if (ui.enabled()) model.addListeners({ui.listener()});

  double totalSeconds = 0;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    model.fit(mnistTrain);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    totalSeconds += seconds;
    std::cout << fmt::format("epoch {}: {:.2f} s, {:.0f} samples/s, score {:.4f}\n", epoch + 1,
                             seconds, static_cast<double>(mnistTrain.totalExamples()) / seconds,
                             model.score());
    ui.afterEpoch(model, mnistTest);
  }
  std::cout << fmt::format("training: {} epoch(s) in {:.2f} s, {:.0f} samples/s\n", epochs,
                           totalSeconds,
                           static_cast<double>(mnistTrain.totalExamples()) * epochs / totalSeconds);

  const std::string savePath = options.getString("save", "");
  if (!savePath.empty()) samples::saveModel(model, savePath);

  const int status = samples::reportEvaluation(ui.evaluation(model, mnistTest), minAccuracy);
  ui.finish();
  return status;
}

int main(int argc, char** argv) {
  return samples::runSample("lenet_mnist", [&] { return run(argc, argv); });
}
