#pragma once
// The HTTP front of mnist_inference_server, kept apart from main() so tests can run it on a free
// loopback port:
//   GET  /health   200 {"status":"ok", "pixel_range": "0-1" or "0-255", ...model description}
//   POST /predict  200 {"class": k, "probabilities": [10 numbers]}
// Every other answer is a JSON object {"error": reason}, and every client mistake a 4xx:
//   400 malformed request or body (PredictionRequest.h)  404 unknown path  405 wrong method
//   408 request not whole within requestTimeout          411 POST body without a length
//   413 body over maxBodyBytes   415 compressed body   416 malformed Range   431 head too large
//   501 Transfer-Encoding other than chunked
//   503 the inference queue is full, or the server is shutting down, or at its connection limit
//       with a request under way on every connection (else the longest idle one gives way)
// After an error answer the connection is closed. The limits on what a client may cost are in
// ServerLimits.h (ui/), the connection handling that enforces them, which the training page shares,
// in ui/http/BoundedHttpServer.h.
// Requests are answered by limits.httpThreads threads (those without a body by threads of their
// own); each calls ParallelInference::output, which batches concurrent requests (BATCHED mode)
// across those threads.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "parallel/ParallelInference.h"
#include "server/PixelRange.h"
#include "ui/ServerLimits.h"

namespace dl4cpp::http {
class BoundedHttpServer;
}

namespace samples::server {

using dl4cpp::ServerLimits;

class InferenceServer {
 public:
  // `pixelRange`: the scale of the pixels handed to the model (PixelRange.h). `description`: a
  // JSON object merged into /health's answer (model, workers, mode).
  InferenceServer(dl4cpp::parallel::ParallelInference& inference, PixelRange pixelRange,
                  nlohmann::json description, const ServerLimits& limits);
  ~InferenceServer();
  InferenceServer(const InferenceServer&) = delete;
  InferenceServer& operator=(const InferenceServer&) = delete;

  // Binds to host:port (port 0 = any free port) and returns the port; throws std::runtime_error
  // when the address cannot be bound.
  int bind(const std::string& host, int port);
  // Answers requests until stop() is called (from any thread), then returns once the requests
  // being answered are done; a client cannot delay that beyond ServerLimits::writeTimeout.
  void serve();
  void stop();

 private:
  std::unique_ptr<dl4cpp::http::BoundedHttpServer> http_;
};

}  // namespace samples::server
