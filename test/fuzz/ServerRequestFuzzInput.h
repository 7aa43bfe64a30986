#pragma once
// What the server-request fuzz target does with one input, shared with the CTest that replays the
// committed corpus (test/samples/server/ServerRequestCorpusTest.cpp), so both exercise the same
// path.
//
// An input is what a client sends on one connection: any bytes, any number of requests. They go to
// both HTTP servers of the project on loopback, each on a connection of its own: an
// InferenceServer (a small model behind it) and the training page (UIServer), both with small
// limits, so that inputs of a few KB reach every limit; the client then closes its sending side
// and reads until the server closes. That runs everything the servers do with client bytes: the
// head scanning of the connection poller they share, httplib's parsing, the checks made before a
// body is read, reading bodies within their budget (chunked or not), JSON and PNG decoding, the
// page's refusals, and the answers.
//
// The contract under test, beyond what the sanitizers check: the server closes the connection
// within seconds; it sends a sequence of whole HTTP/1.1 answers; no status outside those its
// header documents (InferenceServer.h, UIServer.h; no 500); every error answer carries a JSON
// object {"error": "..."} in valid UTF-8 and is the last answer on its connection. A violation is
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
#include "ui/UIServer.h"
#include "ui/http/RawHttp.h"

namespace dl4cpp::fuzz {

// The limits of the fuzzed inference server: small, so that short inputs cross them.
inline ServerLimits fuzzedServerLimits() {
  ServerLimits limits;
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

// The fuzzed page's: its own, with the head and time bounds cut as the inference server's.
inline ServerLimits fuzzedPageLimits() {
  ServerLimits limits = UIServer::defaultLimits();
  const ServerLimits small = fuzzedServerLimits();
  limits.maxHeadBytes = small.maxHeadBytes;
  limits.maxHeaderLines = small.maxHeaderLines;
  limits.requestTimeout = small.requestTimeout;
  limits.idleTimeout = small.idleTimeout;
  limits.lingerTimeout = small.lingerTimeout;
  limits.maxLingerBytes = small.maxLingerBytes;
  return limits;
}

// A StatsStorage holding a little of every kind of record, for the page to show.
inline std::shared_ptr<StatsStorage> fuzzedPageStorage() {
  auto storage = std::make_shared<StatsStorage>();
  storage->setLayerNames({"0: OutputLayer"});
  IterationRecord r;
  r.iteration = 1;
  r.score = 2.3;
  r.examples = 16;
  r.examplesPerSecond = 100;
  r.learningRates = {0.1};
  storage->addIteration(r);
  storage->addValidation(1, 0, 0.5);
  return storage;
}

// An InferenceServer for 784-value inputs (one softmax layer: cheap) and a training page, each on
// a free loopback port.
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
    page_ = std::make_unique<UIServer>(fuzzedPageStorage(), 0, UIServer::kDefaultHost,
                                       fuzzedPageLimits());
  }
  ~FuzzedServer() {
    server_->stop();
    serving_.join();
    inference_->shutdown();
  }
  FuzzedServer(const FuzzedServer&) = delete;
  FuzzedServer& operator=(const FuzzedServer&) = delete;

  int port() const { return port_; }
  int pagePort() const { return page_->port(); }

 private:
  MultiLayerNetwork model_;
  std::unique_ptr<parallel::ParallelInference> inference_;
  std::unique_ptr<samples::server::InferenceServer> server_;
  std::thread serving_;
  int port_ = 0;
  std::unique_ptr<UIServer> page_;
};

// The statuses each server may answer (InferenceServer.h, UIServer.h).
inline const std::set<int>& inferenceStatuses() {
  static const std::set<int> documented = {100, 200, 400, 404, 405, 408, 411,
                                           413, 414, 415, 416, 431, 501, 503};
  return documented;
}
inline const std::set<int>& pageStatuses() {
  static const std::set<int> documented = {100, 200, 400, 404, 405, 408, 413, 414, 416, 431, 503};
  return documented;
}

// Checks one answer against the contract; `last`: no answer follows it on the connection.
inline void checkAnswer(const testutil::RawAnswer& answer, bool last,
                        const std::set<int>& documented) {
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

// Sends `input` on a new connection to `port` and checks what comes back against `documented`;
// returns the answers' statuses.
inline std::vector<int> exchangeWith(int port, std::string_view input,
                                     const std::set<int>& documented) {
  using namespace std::chrono_literals;
  static std::atomic<uint32_t> exchanges{0};
  const uint32_t source = (127u << 24) | (1u << 16) | (exchanges++ % 0xfffe + 1);  // 127.1.0.1 on
  testutil::RawConnection connection(port, source);
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
    checkAnswer(answers[i], i + 1 == answers.size(), documented);
    statuses.push_back(answers[i].status);
  }
  return statuses;
}

// The statuses each server answered one input with.
struct Exchanged {
  std::vector<int> inference, page;
};

// Sends `input` to both servers, each on a connection of its own, and checks both.
inline Exchanged exchange(const FuzzedServer& server, std::string_view input) {
  Exchanged exchanged;
  try {
    exchanged.inference = exchangeWith(server.port(), input, inferenceStatuses());
  } catch (const std::logic_error& e) {
    throw std::logic_error(std::string("inference server: ") + e.what());
  }
  try {
    exchanged.page = exchangeWith(server.pagePort(), input, pageStatuses());
  } catch (const std::logic_error& e) {
    throw std::logic_error(std::string("training page: ") + e.what());
  }
  return exchanged;
}

}  // namespace dl4cpp::fuzz
