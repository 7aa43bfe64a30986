#pragma once
// What the server-request fuzz target does with one input, shared with the CTest that replays the
// committed corpus (test/samples/server/ServerRequestCorpusTest.cpp), so both exercise the same
// path.
//
// An input is what a client sends on one connection: any bytes, any number of requests. They go to
// an InferenceServer on loopback (a small model behind it, and small limits, so that inputs of a
// few KB reach every limit); the client then closes its sending side and reads until the server
// closes. That runs everything the server does with client bytes: the head scanning of the
// connection poller, httplib's parsing, the checks made before a body is read, reading bodies
// within their budget (chunked or not), JSON and PNG decoding, and the answers.
//
// The contract under test, beyond what the sanitizers check: the server closes the connection
// within seconds; it sends a sequence of whole HTTP/1.1 answers; no status outside those
// InferenceServer.h documents (no 500); every error answer carries a JSON object
// {"error": "..."} in valid UTF-8 and is the last answer on its connection. A violation is
// thrown as std::logic_error (under libFuzzer: a crash).
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <vector>

#include "server/InferenceServer.h"
#include "ui/http/RawHttp.h"

namespace dl4cpp::fuzz {

// The limits of the fuzzed server: small, so that short inputs cross them.
inline samples::server::ServerLimits fuzzedServerLimits() {
  samples::server::ServerLimits limits;
  limits.maxHeadBytes = 2048;
  limits.maxHeaderLines = 16;
  limits.maxBodyBytes = 8192;  // a JSON image of 784 grey levels takes at most ~3 KB
  limits.maxFramingBytes = 1024;
  limits.requestTimeout = std::chrono::seconds(2);
  limits.idleTimeout = std::chrono::seconds(2);
  limits.lingerTimeout = std::chrono::milliseconds(200);
  limits.maxLingerBytes = 64 * 1024;
  limits.httpThreads = 2;
  return limits;
}

// An InferenceServer for 784-value inputs (one softmax layer: cheap) on a free loopback port.
class FuzzedServer {
 public:
  FuzzedServer()
      : model_(NeuralNetConfiguration::Builder()
                   .seed(7)
                   .list()
                   .layer(OutputLayer::Builder(LossFunction::MCXENT)
                              .nOut(10)
                              .activation(Activation::SOFTMAX)
                              .build())
                   .setInputType(InputType::feedForward(784))
                   .build(),
               Device::cpu(), 1) {
    model_.init();
    inference_ = std::make_unique<parallel::ParallelInference>(
        parallel::ParallelInference::Builder(model_).workers(1).threadsPerWorker(1).build());
    server_ = std::make_unique<samples::server::InferenceServer>(
        *inference_, samples::server::PixelRange::UNIT, nlohmann::json{{"model", "fuzz"}},
        fuzzedServerLimits());
    port_ = server_->bind("127.0.0.1", 0);
    serving_ = std::thread([this] { server_->serve(); });
  }
  ~FuzzedServer() {
    server_->stop();
    serving_.join();
    inference_->shutdown();
  }
  FuzzedServer(const FuzzedServer&) = delete;
  FuzzedServer& operator=(const FuzzedServer&) = delete;

  int port() const { return port_; }

 private:
  MultiLayerNetwork model_;
  std::unique_ptr<parallel::ParallelInference> inference_;
  std::unique_ptr<samples::server::InferenceServer> server_;
  std::thread serving_;
  int port_ = 0;
};

// Checks one answer against the contract; `last`: no answer follows it on the connection.
inline void checkAnswer(const testutil::RawAnswer& answer, bool last) {
  static const std::set<int> documented = {100, 200, 400, 404, 405, 408, 411,
                                           413, 414, 415, 416, 431, 501, 503};
  if (!documented.count(answer.status))
    throw std::logic_error(fmt::format("undocumented status {}: {}", answer.status, answer.head));
  if (answer.status < 400) return;
  if (!last)
    throw std::logic_error(fmt::format("an answer follows the error answer {}", answer.status));
  // A HEAD request's answer has no body; an answer compressed for the client is not JSON text.
  if ((answer.body.empty() && answer.header("Content-Length") != "0") ||
      answer.header("Content-Encoding"))
    return;
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(answer.body);
  } catch (const nlohmann::json::exception& e) {
    throw std::logic_error(
        fmt::format("error answer {} is not JSON ({}): {}", answer.status, e.what(), answer.body));
  }
  if (!json.is_object() || !json.contains("error") || !json["error"].is_string() ||
      json["error"].get<std::string>().empty())
    throw std::logic_error(
        fmt::format("error answer {} has no reason: {}", answer.status, answer.body));
}

// Sends `input` on a new connection and checks what comes back; returns the answers' statuses.
inline std::vector<int> exchange(const FuzzedServer& server, std::string_view input) {
  using namespace std::chrono_literals;
  static std::atomic<uint32_t> exchanges{0};
  const uint32_t source = (127u << 24) | (1u << 16) | (exchanges++ % 0xfffe + 1);  // 127.1.0.1 on
  testutil::RawConnection connection(server.port(), source);
  connection.send(input, 5s);
  connection.finishSending();
  if (!connection.readUntilClosed(8s))
    throw std::logic_error("the server kept the connection open");
  std::vector<testutil::RawAnswer> answers;
  try {
    answers = testutil::parseAnswers(connection.received(), true);
  } catch (const std::runtime_error& e) {
    throw std::logic_error(fmt::format("not a sequence of HTTP answers ({}): {}", e.what(),
                                       connection.received().substr(0, 400)));
  }
  std::vector<int> statuses;
  for (size_t i = 0; i < answers.size(); ++i) {
    checkAnswer(answers[i], i + 1 == answers.size());
    statuses.push_back(answers[i].status);
  }
  return statuses;
}

}  // namespace dl4cpp::fuzz
