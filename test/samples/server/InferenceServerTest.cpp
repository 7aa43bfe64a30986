#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "LenetConfiguration.h"
#include "TempDir.h"
#include "samples/server/PngTestUtil.h"
#include "server/InferenceServer.h"
#include "server/PredictionRequest.h"
#include "server/ServedModel.h"
#include "ui/http/RawHttpChecks.h"

using namespace dl4cpp;
using namespace std::chrono_literals;
using dl4cpp::parallel::ParallelInference;
using samples::server::InferenceServer;
using samples::server::kImagePixels;
using samples::server::PixelRange;
using samples::server::ServerLimits;
using testutil::parseAnswers;
using testutil::RawConnection;
using Clock = std::chrono::steady_clock;

namespace {

// A LeNet (untrained: the server does not care) served on a free loopback port for one test.
struct RunningServer {
  MultiLayerNetwork model{samples::lenetConfiguration(), Device::cpu(), 1};
  std::unique_ptr<ParallelInference> inference;
  std::unique_ptr<InferenceServer> server;
  std::thread serving;
  int port = 0;

  explicit RunningServer(ServerLimits limits = smallLimits(),
                         nlohmann::json description = {{"model", "test"}}) {
    model.init();
    start(ParallelInference::Builder(model), PixelRange::UNIT, limits, std::move(description));
  }
  // Serves the model of a file as mnist_inference_server does (loadServedModel, the normalizer
  // saved in it included, and the pixel range choosePixelRange makes of `requested`, the
  // --pixel-range flag); `model` gets its parameters.
  explicit RunningServer(const std::filesystem::path& modelFile,
                         std::optional<PixelRange> requested = {}) {
    const dl4cpp::ModelAndNormalizer served = samples::server::loadServedModel(modelFile);
    model.init();
    model.setParams(served.model.params());
    const auto pixels = samples::server::choosePixelRange(requested, served.normalizer.get());
    start(ParallelInference::Builder(served), pixels.range, smallLimits(),
          {{"model", modelFile.string()}, {"pixel_range_chosen_by", pixels.chosenBy}});
  }
  void start(ParallelInference::Builder builder, PixelRange pixelRange, const ServerLimits& limits,
             nlohmann::json description) {
    inference = std::make_unique<ParallelInference>(builder.workers(2).threadsPerWorker(1).build());
    server =
        std::make_unique<InferenceServer>(*inference, pixelRange, std::move(description), limits);
    port = server->bind("127.0.0.1", 0);
    serving = std::thread([this] { server->serve(); });
  }
  ~RunningServer() {
    if (serving.joinable()) stop();
    inference->shutdown();
  }
  // Returns how long serve() took to return after stop().
  std::chrono::milliseconds stop() {
    const auto start = Clock::now();
    server->stop();
    serving.join();
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(30, 0);
    return c;
  }
  static ServerLimits smallLimits() {
    ServerLimits limits;
    limits.httpThreads = 4;
    return limits;
  }
};

std::vector<unsigned char> testImage() {
  std::vector<unsigned char> grey(kImagePixels);
  for (int i = 0; i < kImagePixels; ++i)
    grey[static_cast<size_t>(i)] = static_cast<unsigned char>((i * 37) % 256);
  return grey;
}

// The features the server makes of `grey`: grey levels / 255.
std::vector<float> scaledPixels(const std::vector<unsigned char>& grey) {
  std::vector<float> features(kImagePixels);
  for (int i = 0; i < kImagePixels; ++i)
    features[static_cast<size_t>(i)] = static_cast<float>(grey[static_cast<size_t>(i)] / 255.0);
  return features;
}

std::string jsonBody(const std::vector<unsigned char>& grey) {
  nlohmann::json body;
  body["pixels"] = grey;
  return body.dump();
}

std::string predictRequest(const std::string& body, const std::string& type = "application/json") {
  return "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// The one answer to `request`, sent on a fresh connection; the server must close after it when
// it is an error.
testutil::RawAnswer answerTo(const RunningServer& running, const std::string& request) {
  return testutil::answerOnFreshConnection(running.port, request, 10s, 5s);
}

std::string errorOf(const testutil::RawAnswer& answer) { return testutil::errorReasonOf(answer); }

// The answers of POST /predict to `grey` sent as JSON and as a PNG, each checked to be a 200.
std::vector<nlohmann::json> predictionsFor(const RunningServer& running,
                                           const std::vector<unsigned char>& grey) {
  auto client = running.client();
  std::vector<nlohmann::json> answers;
  for (const auto& [body, type] : {std::pair{jsonBody(grey), "application/json"},
                                   std::pair{testutil::encodePng(grey, 28, 28), "image/png"}}) {
    CAPTURE(type);
    auto response = client.Post("/predict", body, type);
    REQUIRE(response);
    REQUIRE(response->status == 200);
    answers.push_back(nlohmann::json::parse(response->body));
  }
  return answers;
}

nlohmann::json healthOf(const RunningServer& running) {
  auto response = running.client().Get("/health");
  REQUIRE(response);
  REQUIRE(response->status == 200);
  return nlohmann::json::parse(response->body);
}

long health(const RunningServer& running) {
  auto client = running.client();
  client.set_read_timeout(5, 0);
  const auto response = client.Get("/health");
  return response ? response->status : -1;
}

// How long GET /health takes on a server with 2 HTTP threads while `clients` connections have sent
// `partial` (the start of a request they never finish); 1 hour when it is not answered.
Clock::duration healthAnswersWhileStalled(const std::string& partial, int clients) {
  ServerLimits limits = RunningServer::smallLimits();
  limits.httpThreads = 2;
  RunningServer running(limits);
  std::vector<std::unique_ptr<RawConnection>> stalled;
  for (int i = 0; i < clients; ++i) {
    stalled.push_back(std::make_unique<RawConnection>(running.port));
    stalled.back()->send(partial);
  }
  std::this_thread::sleep_for(200ms);  // the server has read what they sent
  const auto start = Clock::now();
  const bool answered = health(running) == 200;
  return answered ? Clock::now() - start : Clock::duration(1h);
}

}  // namespace

TEST_SUITE("samples") {
  TEST_CASE("InferenceServer: /health answers with the description") {
    RunningServer running;
    auto response = running.client().Get("/health");
    REQUIRE(response);
    CHECK(response->status == 200);
    const auto health = nlohmann::json::parse(response->body);
    CHECK(health["status"] == "ok");
    CHECK(health["model"] == "test");
    CHECK(health["pixel_range"] == "0-1");
  }

  TEST_CASE(
      "InferenceServer: a description holding quotes, backslashes and bytes that are not UTF-8") {
    // A model path is any bytes; /health must stay valid JSON (the path was once pasted in).
    RunningServer running(RunningServer::smallLimits(),
                          {{"model", "/models/a \"b\" \\c\xff.dl4cpp"}});
    auto response = running.client().Get("/health");
    REQUIRE(response);
    CHECK(response->status == 200);
    CHECK(nlohmann::json::parse(response->body)["model"] ==
          "/models/a \"b\" \\c\xef\xbf\xbd.dl4cpp");
  }

  TEST_CASE("InferenceServer: JSON and PNG requests give the model's own probabilities") {
    RunningServer running;
    const std::vector<unsigned char> grey = testImage();
    const std::vector<float> expected =
        running.model.output(Tensor::fromVector(Shape{1, kImagePixels}, scaledPixels(grey)))
            .toVector();
    const auto expectedClass =
        std::max_element(expected.begin(), expected.end()) - expected.begin();

    for (const nlohmann::json& answer : predictionsFor(running, grey)) {
      CHECK(answer["class"] == expectedClass);
      const auto probabilities = answer["probabilities"].get<std::vector<float>>();
      REQUIRE(probabilities.size() == expected.size());
      for (size_t k = 0; k < expected.size(); ++k)
        CHECK(probabilities[k] == doctest::Approx(expected[k]).epsilon(1e-5));
    }
  }

  TEST_CASE(
      "InferenceServer: a model saved with a normalizer answers with the network's output on the "
      "normalized input, bit for bit") {
    // Fitted per channel on images of grey levels / 255 (as MnistDataSetIterator gives them).
    const std::vector<unsigned char> grey = testImage();
    const std::vector<float> features = scaledPixels(grey);
    std::vector<float> training;
    for (int i = 0; i < 4 * kImagePixels; ++i)
      training.push_back(static_cast<float>((i * 13) % 256) / 255.0f);
    ListDataSetIterator images(DataSet(Tensor::fromVector(Shape{4, 1, 28, 28}, training), Tensor()),
                               2);
    NormalizerStandardize normalizer;
    normalizer.fit(images);
    MultiLayerNetwork trained(samples::lenetConfiguration(), Device::cpu(), 1);
    trained.init();
    testutil::TempDir dir;
    ModelSerializer::writeModel(trained, dir / "lenet.dl4cpp", false, &normalizer);

    RunningServer running(dir / "lenet.dl4cpp");
    DataSet normalized(Tensor::fromVector(Shape{1, 1, 28, 28}, features), Tensor());
    normalizer.transform(normalized);
    const std::vector<float> expected =
        running.model.output(normalized.features.reshape(Shape{1, kImagePixels})).toVector();
    const std::vector<float> unnormalized =
        running.model.output(Tensor::fromVector(Shape{1, kImagePixels}, features)).toVector();
    CHECK(expected != unnormalized);  // the normalizer makes a difference

    for (const nlohmann::json& answer : predictionsFor(running, grey))
      CHECK(answer["probabilities"].get<std::vector<float>>() == expected);
  }

  TEST_CASE(
      "InferenceServer: a model saved with an ImagePreProcessingScaler is served grey levels, "
      "giving the network's output on levels / 255 bit for bit, unless --pixel-range says 0-1") {
    // As parallel_image_folders saves it: trained on ImageRecordReader's grey levels, which the
    // scaler maps to [0, 1]. The server once handed it levels / 255, which the scaler scaled again.
    const std::vector<unsigned char> grey = testImage();
    std::vector<float> levelsOver255(kImagePixels), scaledTwice(kImagePixels);
    for (size_t i = 0; i < grey.size(); ++i) {
      levelsOver255[i] = static_cast<float>(grey[i]) / 255.0f;
      scaledTwice[i] = scaledPixels(grey)[i] / 255.0f;
    }
    MultiLayerNetwork trained(samples::lenetConfiguration(), Device::cpu(), 1);
    trained.init();
    const ImagePreProcessingScaler scaler;
    testutil::TempDir dir;
    ModelSerializer::writeModel(trained, dir / "folders.dl4cpp", false, &scaler);
    auto output = [&trained](const std::vector<float>& features) {
      return trained.output(Tensor::fromVector(Shape{1, kImagePixels}, features)).toVector();
    };
    const std::vector<float> expected = output(levelsOver255);
    const std::vector<float> wrong = output(scaledTwice);
    CHECK(expected != wrong);  // the range makes a difference

    struct Served {
      std::optional<PixelRange> requested;
      std::string range, chosenBy;
      std::vector<float> probabilities;
    };
    for (const Served& c :
         {Served{std::nullopt, "0-255", "the model file's ImagePreProcessingScaler", expected},
          Served{PixelRange::LEVELS, "0-255", "--pixel-range", expected},
          Served{PixelRange::UNIT, "0-1", "--pixel-range", wrong}}) {
      CAPTURE(c.range);
      CAPTURE(c.chosenBy);
      RunningServer running(dir / "folders.dl4cpp", c.requested);
      const nlohmann::json health = healthOf(running);
      CHECK(health["pixel_range"] == c.range);
      CHECK(health["pixel_range_chosen_by"] == c.chosenBy);
      for (const nlohmann::json& answer : predictionsFor(running, grey))
        CHECK(answer["probabilities"].get<std::vector<float>>() == c.probabilities);
    }
  }

  TEST_CASE(
      "InferenceServer: served 0-255 without a normalizer, the network gets the grey levels") {
    MultiLayerNetwork trained(samples::lenetConfiguration(), Device::cpu(), 1);
    trained.init();
    testutil::TempDir dir;
    trained.save(dir / "plain.dl4cpp", false);
    const std::vector<unsigned char> grey = testImage();
    const std::vector<float> levels(grey.begin(), grey.end());
    const std::vector<float> expected =
        trained.output(Tensor::fromVector(Shape{1, kImagePixels}, levels)).toVector();

    RunningServer running(dir / "plain.dl4cpp", PixelRange::LEVELS);
    CHECK(healthOf(running)["pixel_range"] == "0-255");
    for (const nlohmann::json& answer : predictionsFor(running, grey))
      CHECK(answer["probabilities"].get<std::vector<float>>() == expected);
  }

  TEST_CASE(
      "InferenceServer: keep-alive and pipelined requests are answered in order on one "
      "connection") {
    RunningServer running;
    RawConnection connection(running.port);
    const std::string health = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
    connection.send(health + predictRequest(jsonBody(testImage())) + health);
    REQUIRE(connection.readAnswers(3, 10s));
    const auto answers = parseAnswers(connection.received(), false);
    REQUIRE(answers.size() == 3);
    CHECK(answers[0].status == 200);
    CHECK(nlohmann::json::parse(answers[1].body).contains("probabilities"));
    CHECK(answers[2].status == 200);
    connection.send(health);  // still open
    CHECK(connection.readAnswers(4, 10s));
  }

  TEST_CASE(
      "InferenceServer: malformed requests get 400 with a reason, and the server keeps serving") {
    RunningServer running;
    auto client = running.client();
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"{\"pixels\": [1, 2, 3]}", "application/json"},
        {"not json at all", "application/json"},
        {"\x89PNG garbage", "image/png"},
        {"1,2,3", "text/csv"}};
    for (const auto& [body, type] : bad) {
      CAPTURE(body);
      auto response = client.Post("/predict", body, type);
      REQUIRE(response);
      CHECK(response->status == 400);
      CHECK(!nlohmann::json::parse(response->body)["error"].get<std::string>().empty());
    }
    auto good = client.Post("/predict", jsonBody(testImage()), "application/json");
    REQUIRE(good);
    CHECK(good->status == 200);
  }

  TEST_CASE(
      "InferenceServer: bytes that are not UTF-8, overflowing numbers and PNG as JSON are 400s "
      "whose reason is valid JSON") {
    RunningServer running;
    const std::string png = testutil::encodePng(testImage(), 28, 28);
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"{\"pixels\": [\"\xff\xfe\"]}", "application/json"},  // in a string
        {"{\"pix\xc3\x28\": 1}", "application/json"},          // in a key
        {jsonBody(testImage()), "application/\xff\xfejson"},   // in the Content-Type
        {"{\"pixels\": [1e999]}", "application/json"},         // a number beyond double
        {png, "application/json"}};
    for (const auto& [body, type] : bad) {
      CAPTURE(body.substr(0, 16));
      const auto answer = answerTo(running, predictRequest(body, type));
      CHECK(answer.status == 400);
      CHECK(!errorOf(answer).empty());
    }
    CHECK(errorOf(answerTo(running, predictRequest("{\"pixels\": [1e999]}"))).find("1e999") !=
          std::string::npos);
  }

  TEST_CASE(
      "InferenceServer: unknown paths, wrong methods, compressed or unframed bodies are refused "
      "before the body is read") {
    RunningServer running;
    const std::string gzipBody(100, 'x');
    const std::vector<std::pair<std::string, int>> refused = {
        {"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", 404},
        {"DELETE /predict HTTP/1.1\r\nHost: x\r\n\r\n", 405},
        {"PRI /health HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 405},
        {"POST /predict HTTP/1.1\r\nContent-Type: application/json\r\n\r\n", 411},
        {"POST /predict HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n", 413},
        {"POST /predict HTTP/1.1\r\nContent-Length: 12x\r\n\r\n", 400},
        {"POST /predict HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
        {"POST /predict HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
        {"POST /predict HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: 100\r\n\r\n" +
             gzipBody,
         415},
        {"GET /health HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", 400},
        {"GARBAGE\r\n\r\n", 400}};
    for (const auto& [request, status] : refused) {
      CAPTURE(request);
      const auto answer = answerTo(running, request);
      CHECK(answer.status == status);
      CHECK(!errorOf(answer).empty());
      CHECK(answer.header("Connection") == "close");
    }
    CHECK(answerTo(running, "DELETE /predict HTTP/1.1\r\n\r\n").header("Allow") == "POST");
  }

  TEST_CASE("InferenceServer: Expect: 100-continue is refused at once for a body over the limit") {
    RunningServer running;
    RawConnection connection(running.port);
    connection.send(
        "POST /predict HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n"
        "Expect: 100-continue\r\n\r\n");
    REQUIRE(connection.readAnswers(1, 5s));
    const auto answers = parseAnswers(connection.received(), false);
    CHECK(answers[0].status == 413);
  }

  TEST_CASE("InferenceServer: a chunked body is bounded like one with a Content-Length") {
    // It was once buffered whole (400 MiB): the server must stop reading at the limit, answer 413
    // and close, while the client still has most of its 64 MiB to send.
    RunningServer running;
    RawConnection connection(running.port);
    connection.send(
        "POST /predict HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: "
        "chunked\r\n\r\n");
    const std::string chunk = "10000\r\n" + std::string(0x10000, '1') + "\r\n";
    std::string body;
    for (int i = 0; i < 1024; ++i) body += chunk;
    const size_t sent = connection.send(body, 20s);
    CHECK(sent < body.size() / 2);
    CHECK(connection.readUntilClosed(5s));
    const auto answers = parseAnswers(connection.received(), true);
    REQUIRE(answers.size() == 1);
    CHECK(answers[0].status == 413);
    CHECK(health(running) == 200);
  }

  TEST_CASE(
      "InferenceServer: a body over the limit in small chunks, and one with endless chunk framing, "
      "are 413") {
    RunningServer running;
    std::string
        overLimit;  // 1 MiB + 16 bytes of data in 4 KiB chunks: framing within its allowance
    for (int i = 0; i < 257; ++i) overLimit += "1000\r\n" + std::string(0x1000, '1') + "\r\n";
    overLimit += "0\r\n\r\n";
    const std::string head =
        "POST /predict HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: "
        "chunked\r\n\r\n";
    CHECK(answerTo(running, head + overLimit).status == 413);
    // A chunk-size line that never ends (httplib reads such lines whole, without a limit).
    RawConnection connection(running.port);
    const size_t sent = connection.send(head + "1;" + std::string(32 << 20, 'x'), 20s);
    CHECK(sent < (32u << 20));
    CHECK(connection.readUntilClosed(5s));
    CHECK(parseAnswers(connection.received(), true).at(0).status == 413);
  }

  TEST_CASE("InferenceServer: too many header lines, and a header line that never ends, are 431") {
    RunningServer running;
    std::string manyHeaders = "GET /health HTTP/1.1\r\n";
    for (int i = 0; i < (4 << 20); ++i) manyHeaders += "X-A: b\r\n";  // 32 MiB
    RawConnection many(running.port);
    CHECK(many.send(manyHeaders + "\r\n", 20s) < manyHeaders.size());
    CHECK(many.readUntilClosed(5s));
    CHECK(parseAnswers(many.received(), true).at(0).status == 431);

    RawConnection endless(running.port);
    const std::string line = "GET /health HTTP/1.1\r\nX-A: " + std::string(32 << 20, 'b');
    CHECK(endless.send(line, 20s) < line.size());
    CHECK(endless.readUntilClosed(5s));
    CHECK(parseAnswers(endless.received(), true).at(0).status == 431);

    std::string fewHeaders = "GET /health HTTP/1.1\r\n";
    for (int i = 0; i < 100; ++i) fewHeaders += "X-A: b\r\n";
    CHECK(answerTo(running, fewHeaders + "\r\n").status == 200);
  }

  TEST_CASE("InferenceServer: clients sending their heads slowly hold no HTTP thread") {
    CHECK(healthAnswersWhileStalled("POST /predict HTTP/1.1\r\nHost: x\r\n", 8) < 1s);
  }

  TEST_CASE(
      "InferenceServer: requests without a body are answered while slow bodies hold every HTTP "
      "thread") {
    CHECK(healthAnswersWhileStalled(predictRequest(jsonBody(testImage())).substr(0, 200), 4) < 1s);
  }

  TEST_CASE(
      "InferenceServer: a client trickling its head or its body is cut off at the request timeout "
      "with 408") {
    ServerLimits limits = RunningServer::smallLimits();
    limits.requestTimeout = 600ms;
    RunningServer running(limits);
    for (const std::string& request :
         {std::string("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ") + std::string(100, 'a'),
          predictRequest(jsonBody(testImage()))}) {
      RawConnection connection(running.port);
      const size_t head =
          request.find("\r\n\r\n") == std::string::npos ? 0 : request.find("\r\n\r\n") + 4;
      connection.send(request.substr(0, head));
      const auto start = Clock::now();
      // One byte every 50 ms: each arrives well within any per-read timeout.
      for (size_t i = head;
           i < request.size() && !connection.closedByServer() && Clock::now() - start < 5s; ++i) {
        connection.send(request.substr(i, 1));
        std::this_thread::sleep_for(50ms);
      }
      CHECK(connection.readUntilClosed(2s));
      CHECK(Clock::now() - start < 2s);
      const auto answers = parseAnswers(connection.received(), true);
      REQUIRE(answers.size() == 1);
      CHECK(answers[0].status == 408);
      CHECK(!errorOf(answers[0]).empty());
    }
  }

  TEST_CASE(
      "InferenceServer: stop() returns promptly whatever slow or silent clients are connected") {
    ServerLimits limits = RunningServer::smallLimits();
    limits.httpThreads = 2;
    RunningServer running(limits);
    RawConnection idle(running.port);
    RawConnection partialHead(running.port);
    partialHead.send("POST /predict HTTP/1.1\r\nHost: x\r\n");
    std::vector<std::unique_ptr<RawConnection>> partialBodies;
    for (int i = 0; i < 3; ++i) {  // more than the HTTP threads
      partialBodies.push_back(std::make_unique<RawConnection>(running.port));
      partialBodies.back()->send(predictRequest(jsonBody(testImage())).substr(0, 200));
    }
    std::this_thread::sleep_for(200ms);  // the partial bodies are being read
    CHECK(running.stop() < 1s);
    CHECK(idle.readUntilClosed(1s));
    CHECK(partialHead.readUntilClosed(1s));
    for (auto& c : partialBodies) CHECK(c->readUntilClosed(1s));
  }

  TEST_CASE(
      "InferenceServer: connections beyond maxConnections are answered 503 and closed while every "
      "open one has a request under way") {
    ServerLimits limits = RunningServer::smallLimits();
    limits.maxConnections = 3;
    RunningServer running(limits);
    std::vector<std::unique_ptr<RawConnection>> open;
    for (int i = 0; i < 3; ++i) {
      open.push_back(std::make_unique<RawConnection>(running.port));
      open.back()->send("GET /health HTTP/1.1\r\n");  // idle ones would give way (the next test)
    }
    std::this_thread::sleep_for(200ms);  // the server has read the starts of the heads
    RawConnection extra(running.port);
    CHECK(extra.readUntilClosed(2s));
    CHECK(parseAnswers(extra.received(), true).at(0).status == 503);
    open.clear();
    std::this_thread::sleep_for(100ms);
    CHECK(health(running) == 200);
  }

  TEST_CASE("InferenceServer: at maxConnections, a new connection replaces the longest idle one") {
    ServerLimits limits = RunningServer::smallLimits();
    limits.maxConnections = 3;
    RunningServer running(limits);
    std::vector<std::unique_ptr<RawConnection>> idle;
    for (int i = 0; i < 3; ++i) {
      idle.push_back(std::make_unique<RawConnection>(running.port));
      std::this_thread::sleep_for(50ms);  // accepted in this order
    }
    CHECK(health(running) == 200);
    CHECK(idle[0]->readUntilClosed(2s));
    CHECK_FALSE(idle[2]->closedByServerNow());
  }

  TEST_CASE("InferenceServer: concurrent clients all get answers equal to a single request's") {
    RunningServer running;
    const std::string body = jsonBody(testImage());
    auto reference = running.client().Post("/predict", body, "application/json");
    REQUIRE(reference);
    const auto expected =
        nlohmann::json::parse(reference->body)["probabilities"].get<std::vector<float>>();
    std::vector<std::thread> callers;
    std::atomic<int> matching{0};
    for (int t = 0; t < 6; ++t)
      callers.emplace_back([&] {
        auto client = running.client();
        for (int r = 0; r < 10; ++r) {
          auto response = client.Post("/predict", body, "application/json");
          if (!response || response->status != 200) continue;
          const auto p =
              nlohmann::json::parse(response->body)["probabilities"].get<std::vector<float>>();
          bool same = p.size() == expected.size();
          for (size_t k = 0; same && k < p.size(); ++k)
            same = std::abs(p[k] - expected[k]) <= 1e-5f;
          if (same) ++matching;
        }
      });
    for (auto& c : callers) c.join();
    CHECK(matching == 60);
  }
}
