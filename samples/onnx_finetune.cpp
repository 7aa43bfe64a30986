// Fine-tuning an imported ONNX model in parallel (the workflow of taking a network someone else
// trained, replacing its head, and training it on your own images on several workers):
//   1. the "someone else's model": LeNet trained briefly on MNIST digits and exported to ONNX
//      (dl4cpp::onnx::exportModel), or any ONNX model of 28x28x1 images given with --onnx;
//   2. imported (dl4cpp::onnx::importModel) as a trainable ComputationGraph;
//   3. TransferLearning::GraphBuilder freezes everything up to the vertex before the output (the
//      features) and replaces the output layer with a new one for Fashion-MNIST's 10 classes;
//   4. ParallelWrapper fine-tunes it on Fashion-MNIST with --workers workers (2 by default); the
//      test accuracy is printed before (a fresh head) and after.
//   onnx_finetune [--onnx MODEL.onnx] [--pretrain-examples 8192] [--workers 2] [--epochs 1]
//                 [--train-examples 0] [--test-examples 0] [--min-accuracy 0]
// Needs DL4CPP_WITH_ONNX; MNIST ($DL4CPP_DATA_DIR/MNIST) unless --onnx is given, and Fashion-MNIST
// (Debian's dataset-fashion-mnist, or --fashion-dir).
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>

#include "LenetConfiguration.h"
#include "SampleSupport.h"
#include "nn/onnx/OnnxExport.h"
#include "nn/onnx/OnnxImport.h"

using namespace dl4cpp;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// LeNet trained for one pass over `examples` MNIST digits, exported to `path`.
void exportPretrainedLenet(const std::filesystem::path& path, int examples,
                           const std::string& dir) {
  MnistDataSetIterator mnist(64, examples, false, true, true, 7, dir);
  MultiLayerNetwork lenet(samples::lenetConfiguration());
  lenet.init();
  const auto start = std::chrono::steady_clock::now();
  lenet.fit(mnist);
  MnistDataSetIterator mnistTest(256, 1000, false, false, false, 7, dir);
  const Evaluation eval = lenet.evaluate(mnistTest);
  std::cout << fmt::format(
      "the pretrained model: LeNet, {} MNIST digits in {:.1f} s, {:.2f}% on 1000 test digits\n",
      mnist.totalExamples(), secondsSince(start), 100 * eval.accuracy());
  onnx::exportModel(lenet, path);
  std::cout << fmt::format("exported to {}\n", path.string());
}

}  // namespace

int run(int argc, char** argv) {
  const samples::SampleOptions options(
      argc, argv,
      {{"onnx", "an ONNX model of 28x28x1 images to fine-tune (default: LeNet pretrained here)"},
       {"pretrain-examples", "MNIST digits the LeNet is pretrained on (default 8192)"},
       {"mnist-dir", "MNIST directory (default $DL4CPP_DATA_DIR/MNIST or ~/.dl4cpp/data/MNIST)"},
       {"fashion-dir",
        "Fashion-MNIST directory (default " + MnistDataSetIterator::fashionMnistDirectory() + ")"},
       {"workers", "ParallelWrapper workers (default 2)"},
       {"epochs", "fine-tuning epochs (default 1)"},
       {"batch", "global minibatch, split across the workers (default 128)"},
       {"train-examples", "use only the first N Fashion-MNIST training images (default: all)"},
       {"test-examples", "use only the first N Fashion-MNIST test images (default: all)"},
       {"min-accuracy", "exit with status 1 when test accuracy is below this (default 0)"}});
  const int workers = static_cast<int>(options.getInt("workers", 2));
  const int epochs = static_cast<int>(options.getInt("epochs", 1));
  const int globalBatch = static_cast<int>(options.getInt("batch", 128));
  if (workers < 1 || epochs < 1 || globalBatch < 1)
    throw std::invalid_argument("--workers, --epochs and --batch must be >= 1");
  const int workerBatch = (globalBatch + workers - 1) / workers;

  std::filesystem::path onnxPath = options.getString("onnx", "");
  std::filesystem::path tempDir;
  if (onnxPath.empty()) {
    tempDir = std::filesystem::temp_directory_path() / fmt::format("onnx_finetune_{}", ::getpid());
    std::filesystem::create_directories(tempDir);
    onnxPath = tempDir / "lenet.onnx";
    exportPretrainedLenet(onnxPath, static_cast<int>(options.getInt("pretrain-examples", 8192)),
                          options.getString("mnist-dir", ""));
  }

  ComputationGraph imported = onnx::importModel(onnxPath);
  if (!tempDir.empty()) std::filesystem::remove_all(tempDir);
  const ComputationGraphConfiguration& conf = imported.getConfiguration();
  if (conf.networkOutputs.size() != 1)
    throw std::invalid_argument("the model must have one output");
  const std::string head = conf.networkOutputs.front();
  const auto& headVertex = conf.vertices.at(static_cast<size_t>(conf.vertexIndex(head)));
  if (headVertex.inputs.size() != 1)
    throw std::invalid_argument("the model's output vertex must read one vertex (the features)");
  const std::string features = headVertex.inputs.front();
  std::cout << fmt::format("imported {}: {} parameters; head \"{}\", features \"{}\"\n",
                           onnxPath.filename().string(), imported.numParams(), head, features);

  ComputationGraph tuned =
      TransferLearning::GraphBuilder(imported)
          .fineTuneConfiguration(FineTuneConfiguration::Builder().updater(Adam(1e-3)).build())
          .setFeatureExtractor(features)
          .removeVertexAndConnections(head)
          .addLayer("fashion",
                    OutputLayer::Builder(LossFunction::MCXENT)
                        .nOut(10)
                        .activation(Activation::SOFTMAX)
                        .build(),
                    features)
          .setOutputs("fashion")
          .build();
  std::cout << tuned.summary();

  const std::string fashionDir =
      options.getString("fashion-dir", MnistDataSetIterator::fashionMnistDirectory());
  MnistDataSetIterator train(workerBatch, static_cast<int>(options.getInt("train-examples", 0)),
                             false, true, true, 123, fashionDir);
  MnistDataSetIterator test(globalBatch, static_cast<int>(options.getInt("test-examples", 0)),
                            false, false, false, 123, fashionDir);
  std::cout << fmt::format("Fashion-MNIST test accuracy with the new head untrained: {:.2f}%\n",
                           100 * tuned.evaluate(test).accuracy());
  test.reset();

  auto wrapper = parallel::ParallelWrapper::Builder(tuned)
                     .workers(workers)
                     .averagingFrequency(3)
                     .prefetchBuffer(24)
                     .devices({Device::cpu()})
                     .build();
  std::cout << fmt::format("ParallelWrapper: {} workers x {} thread(s), minibatch {} each\n",
                           wrapper.workers(), wrapper.threadsPerWorker(), workerBatch);
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    wrapper.fit(train);
    std::cout << fmt::format("epoch {}: {} images in {:.1f} s, averaged score {:.4f}\n", epoch + 1,
                             train.totalExamples(), secondsSince(start), tuned.score());
  }
  const Evaluation eval = tuned.evaluate(test);
  std::cout << fmt::format("Fashion-MNIST test accuracy after fine-tuning the head: {:.2f}%\n",
                           100 * eval.accuracy());
  return samples::reportEvaluation(eval, options.getDouble("min-accuracy", 0.0));
}

int main(int argc, char** argv) {
  return samples::runSample("onnx_finetune", [&] { return run(argc, argv); });
}
