#pragma once
// The HTTP front of mnist_inference_server, kept apart from main() so tests can run it on a free
// loopback port:
//   GET  /health   200 {"status":"ok", ...model description}
//   POST /predict  200 {"class": k, "probabilities": [10 numbers]}
//                  400 {"error": reason}   malformed request (see PredictionRequest.h)
//                  413                     body over 1 MiB
//                  503 {"error": reason}   the inference queue is full or shutting down
// Requests are answered by httplib's thread pool; each handler calls ParallelInference::output,
// which batches concurrent requests (BATCHED mode) across the pool's threads.
#include <memory>
#include <string>

#include <dl4cpp/parallel/ParallelInference.h>

namespace httplib {
class Server;
}

namespace samples::server {

class InferenceServer {
 public:
  // `description`: a JSON object (as text) merged into /health's answer (model, workers, mode).
  // `httpThreads`: threads answering connections (requests wait in ParallelInference's queue).
  InferenceServer(dl4cpp::parallel::ParallelInference& inference, std::string description,
                  int httpThreads);
  ~InferenceServer();
  InferenceServer(const InferenceServer&) = delete;
  InferenceServer& operator=(const InferenceServer&) = delete;

  // Binds to host:port (port 0 = any free port) and returns the port; throws std::runtime_error
  // when the address cannot be bound.
  int bind(const std::string& host, int port);
  // Answers requests until stop() is called (from any thread).
  void serve();
  void stop();

 private:
  std::unique_ptr<httplib::Server> http_;
};

}  // namespace samples::server
