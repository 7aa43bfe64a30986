// Serves predictions of a trained MNIST model over HTTP on loopback: train and save with
//   lenet_mnist --save lenet.dl4cpp
// then
//   mnist_inference_server --model lenet.dl4cpp [--port 8080] [--workers 2] [--mode batched]
//                          [--pixel-range 0-1|0-255]
// or serve an ONNX model (one trained elsewhere, or dl4cpp-onnx export lenet.dl4cpp lenet.onnx),
// imported with dl4cpp::onnx::importModel (built with DL4CPP_WITH_ONNX):
//   mnist_inference_server --model lenet.onnx
// An ONNX file carries no dl4cpp normalizer (an exported model has its normalizer inside as
// nodes), so it is served in the 0-1 range unless --pixel-range says otherwise.
//   curl -s localhost:8080/health
//   curl -s -H 'Content-Type: image/png' --data-binary @digit.png localhost:8080/predict
// The request formats and answers are described in server/InferenceServer.h, the limits on what a
// client may cost in server/ServerLimits.h. A normalizer saved in the model file is applied to
// every request's features before the network (server/ServedModel.h); /health says whether there
// is one ("normalized").
// The pixels are handed to the model (and its normalizer) in the range it was trained on
// (server/PixelRange.h): grey level / 255 for MnistDataSetIterator's data (lenet_mnist), the grey
// levels 0..255 for ImageRecordReader's (parallel_image_folders). --pixel-range says which; without
// it, a model file whose normalizer is an ImagePreProcessingScaler of 8-bit pixels is served
// levels, any other level / 255 (choosePixelRange). The start-up line and /health ("pixel_range",
// "pixel_range_chosen_by") say which range is in use and why.
// SIGINT or SIGTERM stops accepting connections, completes the requests being answered (abandoning
// clients still sending theirs) and exits with status 0.
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <iostream>
#include <optional>
#include <thread>

#include "SampleSupport.h"
#include "server/InferenceServer.h"
#include "server/PixelRange.h"
#include "server/ServedModel.h"

using namespace dl4cpp;
using dl4cpp::parallel::InferenceMode;
using dl4cpp::parallel::ParallelInference;

namespace {

InferenceMode parseMode(const std::string& mode) {
  if (mode == "batched") return InferenceMode::BATCHED;
  if (mode == "sequential") return InferenceMode::SEQUENTIAL;
  throw std::invalid_argument("--mode must be 'batched' or 'sequential', got '" + mode + "'");
}

// Blocks SIGINT/SIGTERM in this thread and every thread started after it, so that only the
// waiter thread below receives them (and can call stop(), which is not async-signal-safe).
sigset_t blockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

}  // namespace

int run(int argc, char** argv) {
  const samples::SampleOptions options(
      argc, argv,
      {{"model",
        "model file written by lenet_mnist --save, or an ONNX model (.onnx) of one 28x28x1 "
        "input (required)"},
       {"host", "address to listen on (default 127.0.0.1)"},
       {"port", "TCP port, 0 = any free port (default 8080)"},
       {"device",
        "cpu | cuda: workers on the CPU or on every visible GPU (default cuda when a GPU is "
        "present)"},
       {"workers", "inference workers, each with its own model replica (default 0 = automatic)"},
       {"threads-per-worker", "CPU threads per worker (default 0 = cores / workers)"},
       {"mode", "batched (gather concurrent requests) or sequential (default batched)"},
       {"pixel-range",
        "0-1 (grey level / 255, as MnistDataSetIterator) or 0-255 (grey levels as they are, as "
        "ImageRecordReader): the scale the model was trained on (default 0-255 for a model "
        "file with an ImagePreProcessingScaler, else 0-1)"},
       {"batch-limit", "most examples in one batched forward pass (default 32)"},
       {"queue-limit", "most requests waiting for a worker before 503 (default 64)"},
       {"http-threads", "threads answering requests whose head has arrived (default 16)"},
       {"max-connections",
        "connections open at once; a new one replaces the longest idle, or is answered 503 when "
        "none is idle (default 512)"},
       {"request-timeout-ms",
        "a request must arrive whole within this of its first byte (default 10000)"},
       {"idle-timeout-ms", "an idle keep-alive connection is closed after this (default 5000)"}});
  const std::string modelPath = options.getString("model", "");
  if (modelPath.empty()) throw std::invalid_argument("--model is required (see --help)");
  const InferenceMode mode = parseMode(options.getString("mode", "batched"));
  std::optional<samples::server::PixelRange> requestedRange;
  if (const std::string range = options.getString("pixel-range", ""); !range.empty())
    requestedRange = samples::server::parsePixelRange(range);
  samples::server::ServerLimits limits;
  limits.httpThreads = static_cast<int>(options.getInt("http-threads", limits.httpThreads));
  limits.maxConnections = static_cast<size_t>(
      options.getInt("max-connections", static_cast<long>(limits.maxConnections)));
  limits.requestTimeout = std::chrono::milliseconds(
      options.getInt("request-timeout-ms", limits.requestTimeout.count()));
  limits.idleTimeout =
      std::chrono::milliseconds(options.getInt("idle-timeout-ms", limits.idleTimeout.count()));

  const sigset_t stopSignals = blockStopSignals();
  // One of the two holds the model served: a dl4cpp model file (with its normalizer) or an
  // imported ONNX graph.
  std::optional<ModelAndNormalizer> served;
  std::optional<ComputationGraph> imported;
  if (samples::server::isOnnxModelPath(modelPath))
    imported.emplace(samples::server::loadServedOnnxModel(modelPath));
  else
    served.emplace(samples::server::loadServedModel(modelPath));
  const DataNormalization* normalizer = served ? served->normalizer.get() : nullptr;
  const samples::server::PixelRangeChoice pixels =
      samples::server::choosePixelRange(requestedRange, normalizer);
  auto builder =
      (served ? ParallelInference::Builder(*served) : ParallelInference::Builder(*imported))
          .inferenceMode(mode)
          .batchLimit(static_cast<int>(options.getInt("batch-limit", 32)))
          .queueLimit(static_cast<int>(options.getInt("queue-limit", 64)))
          .queueFullPolicy(parallel::QueueFullPolicy::FAIL)
          .devices(samples::devicesFromOption(options.getString("device", "")));
  if (const long workers = options.getInt("workers", 0); workers != 0)
    builder.workers(static_cast<int>(workers));
  if (const long threads = options.getInt("threads-per-worker", 0); threads != 0)
    builder.threadsPerWorker(static_cast<int>(threads));
  ParallelInference inference = builder.build();

  const nlohmann::json description = {
      {"model", modelPath},
      {"format", imported ? "onnx" : "dl4cpp"},
      {"parameters", served ? served->model.numParams() : imported->numParams()},
      {"normalized", normalizer != nullptr},
      {"mode", options.getString("mode", "batched")},
      {"workers", inference.workers()},
      {"pixel_range_chosen_by", pixels.chosenBy}};
  samples::server::InferenceServer server(inference, pixels.range, description, limits);
  const std::string host = options.getString("host", "127.0.0.1");
  const int port = server.bind(host, static_cast<int>(options.getInt("port", 8080)));
  std::cout << fmt::format(
                   "serving {} on http://{}:{} ({} worker(s) on {}, {} mode, pixels {} chosen by "
                   "{})\n",
                   modelPath, host, port, inference.workers(),
                   inference.devices().front().toString(), options.getString("mode", "batched"),
                   samples::server::pixelRangeName(pixels.range), pixels.chosenBy)
            << std::flush;

  std::jthread stopper([&server, stopSignals] {
    int signal = 0;
    sigwait(&stopSignals, &signal);
    server.stop();
  });
  server.serve();
  inference.shutdown();
  std::cout << "stopped\n";
  // serve() can also end without a signal (listen failure): wake the waiter so it can be joined.
  pthread_kill(stopper.native_handle(), SIGTERM);
  return 0;
}

int main(int argc, char** argv) {
  return samples::runSample("mnist_inference_server", [&] { return run(argc, argv); });
}
