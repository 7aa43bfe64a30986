#include "server/InferenceServer.h"

#include <httplib.h>

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "server/PredictionRequest.h"

namespace samples::server {
namespace {

constexpr size_t kMaxBodyBytes = 1 << 20;

void answer(httplib::Response& response, int status, const nlohmann::json& body) {
  response.status = status;
  response.set_content(body.dump(), "application/json");
}

void answerError(httplib::Response& response, int status, const std::string& reason) {
  answer(response, status, {{"error", reason}});
}

nlohmann::json prediction(const dl4cpp::Tensor& probabilities) {
  const std::vector<float> p = probabilities.toVector();
  const auto best = std::max_element(p.begin(), p.end());
  return {{"class", best - p.begin()}, {"probabilities", p}};
}

}  // namespace

InferenceServer::InferenceServer(dl4cpp::parallel::ParallelInference& inference,
                                 std::string description, int httpThreads)
    : http_(std::make_unique<httplib::Server>()) {
  if (httpThreads < 1)
    throw std::invalid_argument(fmt::format("httpThreads must be >= 1, got {}", httpThreads));
  const auto threads = static_cast<size_t>(httpThreads);
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http_->set_payload_max_length(kMaxBodyBytes);
  // Answers are small writes: without TCP_NODELAY, Nagle's algorithm holds each one until the
  // client's delayed ACK, about 40 ms per request on keep-alive connections (measured under wrk).
  http_->set_tcp_nodelay(true);

  nlohmann::json health = nlohmann::json::parse(description);
  health["status"] = "ok";
  http_->Get("/health", [health](const httplib::Request&, httplib::Response& response) {
    answer(response, 200, health);
  });

  http_->Post("/predict", [&inference](const httplib::Request& request, httplib::Response& response) {
    std::vector<float> pixels;
    try {
      pixels = pixelsFromRequest(request.get_header_value("Content-Type"), request.body);
    } catch (const RequestError& e) {
      answerError(response, 400, e.what());
      return;
    }
    try {
      const dl4cpp::Tensor features =
          dl4cpp::Tensor::fromVector(dl4cpp::Shape{1, kImagePixels}, pixels);
      answer(response, 200, prediction(inference.output(features)));
    } catch (const dl4cpp::parallel::QueueFullError& e) {
      answerError(response, 503, e.what());
    } catch (const dl4cpp::parallel::InferenceShutDownError& e) {
      answerError(response, 503, e.what());
    }
  });

  // Anything else a handler throws is the server's fault: 500 with the reason, never a crash.
  http_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& response, std::exception_ptr error) {
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          answerError(response, 500, e.what());
        } catch (...) {
          answerError(response, 500, "unknown error");
        }
      });
}

InferenceServer::~InferenceServer() { stop(); }

int InferenceServer::bind(const std::string& host, int port) {
  if (port == 0) {
    const int bound = http_->bind_to_any_port(host);
    if (bound <= 0) throw std::runtime_error(fmt::format("cannot bind to {} (any port)", host));
    return bound;
  }
  if (!http_->bind_to_port(host, port))
    throw std::runtime_error(fmt::format("cannot bind to {}:{}", host, port));
  return port;
}

void InferenceServer::serve() { http_->listen_after_bind(); }

void InferenceServer::stop() { http_->stop(); }

}  // namespace samples::server
