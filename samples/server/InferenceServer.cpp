#include "server/InferenceServer.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "server/HttpAnswer.h"
#include "server/PredictionRequest.h"
#include "server/RequestCheck.h"
#include "ui/http/BoundedHttpServer.h"

namespace samples::server {
namespace {

using dl4cpp::http::BoundedHttpServer;

void answerJson(httplib::Response& response, int status, std::string json) {
  response.status = status;
  response.set_content(std::move(json), "application/json");
}

void answerError(httplib::Response& response, int status, std::string_view reason) {
  answerJson(response, status, errorJson(reason));
}

// httplib sets the Content-Length of the answers of handlers, but not of those it writes when it
// refuses a request itself (without one, the client reads the body up to the connection's close).
void setContentLength(httplib::Response& response) {
  response.set_header("Content-Length", std::to_string(response.body.size()));
}

// The reasons for the refusals httplib makes itself, before any handler runs.
std::string httplibRefusal(int status) {
  switch (status) {
    case 400:
      return "malformed request line, headers or body framing";
    case 414:
      return "the request target is too long";
    case 416:
      return "malformed Range header";
    default:
      return fmt::format("request refused ({})", status);
  }
}

nlohmann::json prediction(const dl4cpp::Tensor& probabilities) {
  const std::vector<float> p = probabilities.toVector();
  const auto best = std::max_element(p.begin(), p.end());
  return {{"class", best - p.begin()}, {"probabilities", p}};
}

// The body of a POST /predict, at most `maxBytes` after chunked decoding.
struct Body {
  std::string bytes;
  bool tooLarge = false;
  bool whole = false;
};

Body readBody(const httplib::ContentReader& read, size_t maxBytes) {
  Body body;
  body.whole = read([&](const char* data, size_t length) {
    body.tooLarge = body.bytes.size() + length > maxBytes;
    if (!body.tooLarge) body.bytes.append(data, length);
    return !body.tooLarge;
  });
  return body;
}

}  // namespace

InferenceServer::InferenceServer(dl4cpp::parallel::ParallelInference& inference,
                                 PixelRange pixelRange, nlohmann::json description,
                                 const ServerLimits& limits)
    : http_(std::make_unique<BoundedHttpServer>(limits)) {
  description["status"] = "ok";
  description["pixel_range"] = pixelRangeName(pixelRange);
  const std::string health =
      description.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  http_->Get("/health", [health](const httplib::Request&, httplib::Response& response) {
    answerJson(response, 200, health);
  });

  const size_t maxBodyBytes = limits.maxBodyBytes;
  http_->Post("/predict", [&inference, pixelRange, maxBodyBytes](
                              const httplib::Request& request, httplib::Response& response,
                              const httplib::ContentReader& read) {
    const Body body = readBody(read, maxBodyBytes);
    if (body.tooLarge)
      return answerError(response, 413, fmt::format("the body exceeds {} bytes", maxBodyBytes));
    if (!body.whole)
      return answerError(response, 400,
                         "the body could not be read whole (malformed chunked "
                         "encoding, or the client closed the connection)");
    std::vector<float> pixels;
    try {
      pixels = pixelsFromRequest(request.get_header_value("Content-Type"), body.bytes, pixelRange);
    } catch (const RequestError& e) {
      return answerError(response, 400, e.what());
    }
    try {
      const dl4cpp::Tensor features =
          dl4cpp::Tensor::fromVector(dl4cpp::Shape{1, kImagePixels}, pixels);
      answerJson(response, 200,
                 prediction(inference.output(features))
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    } catch (const dl4cpp::parallel::QueueFullError& e) {
      answerError(response, 503, e.what());
    } catch (const dl4cpp::parallel::InferenceShutDownError& e) {
      answerError(response, 503, e.what());
    }
  });

  // Everything is checked that can be before a body is read, so that a refused body is never
  // read, decompressed or buffered. The same check answers "Expect: 100-continue".
  auto refuse = [maxBodyBytes](const httplib::Request& request, httplib::Response& response) {
    const auto refusal = checkRequestHead(request, maxBodyBytes);
    if (!refusal) return false;
    if (!refusal->allow.empty()) response.set_header("Allow", refusal->allow);
    answerError(response, refusal->status, refusal->reason);
    return true;
  };
  http_->set_pre_routing_handler(
      [refuse](const httplib::Request& request, httplib::Response& response) {
        return refuse(request, response) ? httplib::Server::HandlerResponse::Handled
                                         : httplib::Server::HandlerResponse::Unhandled;
      });
  http_->set_expect_100_continue_handler(
      [refuse](const httplib::Request& request, httplib::Response& response) {
        if (!refuse(request, response)) return 100;
        setContentLength(response);  // httplib writes this answer as it writes its own refusals
        return response.status;
      });

  // httplib's own refusals (malformed request line, ...) get a JSON reason too. Unhandled keeps
  // httplib from applying a Range header to the answer.
  http_->set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& response) {
        if (response.body.empty()) {
          answerError(response, response.status, httplibRefusal(response.status));
          setContentLength(response);
        }
        return httplib::Server::HandlerResponse::Unhandled;
      }));
  // After any error answer the connection closes: whatever of the request was not read (a refused
  // body, a malformed chunk) must not be taken for the next request.
  http_->set_post_routing_handler([](const httplib::Request&, httplib::Response& response) {
    if (response.status < 400 || response.get_header_value("Connection") == "close") return;
    response.headers.erase("Keep-Alive");
    response.set_header("Connection", "close");
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
  const int bound = http_->bind(host, port);
  if (bound <= 0)
    throw std::runtime_error(port == 0 ? fmt::format("cannot bind to {} (any port)", host)
                                       : fmt::format("cannot bind to {}:{}", host, port));
  return bound;
}

void InferenceServer::serve() { http_->serve(); }

void InferenceServer::stop() { http_->stop(); }

}  // namespace samples::server
