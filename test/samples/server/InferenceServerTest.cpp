#include <doctest/doctest.h>

#include <httplib.h>

#include <thread>

#include <dl4cpp/dl4cpp.h>
#include <nlohmann/json.hpp>

#include "LenetConfiguration.h"
#include "samples/server/PngTestUtil.h"
#include "server/InferenceServer.h"
#include "server/PredictionRequest.h"

using namespace dl4cpp;
using dl4cpp::parallel::ParallelInference;
using samples::server::InferenceServer;
using samples::server::kImagePixels;

namespace {

// A LeNet (untrained: the server does not care) served on a free loopback port for one test.
struct RunningServer {
  MultiLayerNetwork model{samples::lenetConfiguration(), Device::cpu(), 1};
  std::unique_ptr<ParallelInference> inference;
  std::unique_ptr<InferenceServer> server;
  std::thread serving;
  int port = 0;

  RunningServer() {
    model.init();
    inference = std::make_unique<ParallelInference>(
        ParallelInference::Builder(model).workers(2).threadsPerWorker(1).build());
    server = std::make_unique<InferenceServer>(*inference, R"({"model": "test"})", 4);
    port = server->bind("127.0.0.1", 0);
    serving = std::thread([this] { server->serve(); });
  }
  ~RunningServer() {
    server->stop();
    serving.join();
    inference->shutdown();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(30, 0);
    return c;
  }
};

std::vector<unsigned char> testImage() {
  std::vector<unsigned char> grey(kImagePixels);
  for (int i = 0; i < kImagePixels; ++i) grey[static_cast<size_t>(i)] = static_cast<unsigned char>((i * 37) % 256);
  return grey;
}

std::string jsonBody(const std::vector<unsigned char>& grey) {
  nlohmann::json body;
  body["pixels"] = grey;
  return body.dump();
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
  }

  TEST_CASE("InferenceServer: JSON and PNG requests give the model's own probabilities") {
    RunningServer running;
    const std::vector<unsigned char> grey = testImage();
    std::vector<float> features(kImagePixels);
    for (int i = 0; i < kImagePixels; ++i) features[static_cast<size_t>(i)] = static_cast<float>(grey[static_cast<size_t>(i)] / 255.0);
    const std::vector<float> expected =
        running.model.output(Tensor::fromVector(Shape{1, kImagePixels}, features)).toVector();
    const auto expectedClass = std::max_element(expected.begin(), expected.end()) - expected.begin();

    auto client = running.client();
    for (const auto& [body, type] :
         {std::pair{jsonBody(grey), "application/json"},
          std::pair{testutil::encodePng(grey, 28, 28, PNG_FORMAT_GRAY), "image/png"}}) {
      CAPTURE(type);
      auto response = client.Post("/predict", body, type);
      REQUIRE(response);
      REQUIRE(response->status == 200);
      const auto answer = nlohmann::json::parse(response->body);
      CHECK(answer["class"] == expectedClass);
      const auto probabilities = answer["probabilities"].get<std::vector<float>>();
      REQUIRE(probabilities.size() == expected.size());
      for (size_t k = 0; k < expected.size(); ++k) CHECK(probabilities[k] == doctest::Approx(expected[k]).epsilon(1e-5));
    }
  }

  TEST_CASE("InferenceServer: malformed requests get 400 with a reason, and the server keeps serving") {
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

  TEST_CASE("InferenceServer: concurrent clients all get answers equal to a single request's") {
    RunningServer running;
    const std::string body = jsonBody(testImage());
    auto reference = running.client().Post("/predict", body, "application/json");
    REQUIRE(reference);
    const auto expected = nlohmann::json::parse(reference->body)["probabilities"].get<std::vector<float>>();
    std::vector<std::thread> callers;
    std::atomic<int> matching{0};
    for (int t = 0; t < 6; ++t)
      callers.emplace_back([&] {
        auto client = running.client();
        for (int r = 0; r < 10; ++r) {
          auto response = client.Post("/predict", body, "application/json");
          if (!response || response->status != 200) continue;
          const auto p = nlohmann::json::parse(response->body)["probabilities"].get<std::vector<float>>();
          bool same = p.size() == expected.size();
          for (size_t k = 0; same && k < p.size(); ++k) same = std::abs(p[k] - expected[k]) <= 1e-5f;
          if (same) ++matching;
        }
      });
    for (auto& c : callers) c.join();
    CHECK(matching == 60);
  }
}
