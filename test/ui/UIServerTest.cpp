// The training page's server: its routes, live data, shutdown with a connection open, bad ports.
#include <dl4cpp/nn/Error.h>
#include <dl4cpp/ui/StatsJson.h>
#include <dl4cpp/ui/UIServer.h>
#include <doctest/doctest.h>
#include <httplib.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;

namespace {

std::shared_ptr<StatsStorage> storageWithOneIteration() {
  auto storage = std::make_shared<StatsStorage>();
  storage->setLayerNames({"0: DenseLayer", "1: OutputLayer"});
  IterationRecord r;
  r.iteration = 3;
  r.epoch = 1;
  r.score = 0.5;
  r.examples = 32;
  r.examplesPerSecond = 640;
  r.learningRates = {0.01, kNoValue};
  storage->addIteration(r);
  return storage;
}

httplib::Result get(const UIServer& server, const std::string& path) {
  httplib::Client client(server.host(), server.port());
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  return client.Get(path);
}

}  // namespace

TEST_SUITE("ui") {
  TEST_CASE("UIServer: port 0 picks a free port, the page, the charts and /stats.json") {
    testutil::withinSeconds(30, [] {
      auto storage = storageWithOneIteration();
      UIServer server(storage);
      CHECK(server.port() > 0);
      CHECK(server.host() == "127.0.0.1");
      CHECK(server.url() == "http://127.0.0.1:" + std::to_string(server.port()) + "/");

      const auto page = get(server, "/");
      REQUIRE(page);
      CHECK(page->status == 200);
      CHECK(page->get_header_value("Content-Type") == "text/html; charset=utf-8");
      CHECK(page->body.find("<main id=\"live\">") != std::string::npos);
      CHECK(page->body.find("fetch('charts'") != std::string::npos);
      CHECK(page->body.find("data-series=\"score\" data-points=\"1\"") != std::string::npos);
      CHECK(page->body.find("src=") == std::string::npos);

      const auto json = get(server, "/stats.json");
      REQUIRE(json);
      CHECK(json->status == 200);
      CHECK(json->get_header_value("Content-Type") == "application/json");
      const nlohmann::json stats = nlohmann::json::parse(json->body);
      CHECK(stats["revision"] == 1);
      CHECK(stats["layers"] == nlohmann::json({"0: DenseLayer", "1: OutputLayer"}));
      REQUIRE(stats["iterations"].size() == 1);
      const auto& it = stats["iterations"][0];
      CHECK(it["iteration"] == 3);
      CHECK(it["epoch"] == 1);
      CHECK(it["score"] == 0.5);
      CHECK(it["examplesPerSecond"] == 640.0);
      CHECK(it["learningRates"] == nlohmann::json::parse("[0.01, null]"));
      CHECK(it["averagingShare"].is_null());
      CHECK(stats["validation"].empty());

      // Live: what the storage gains shows up in the next answer.
      storage->addValidation(3, 1, 0.875);
      const auto charts = get(server, "/charts");
      REQUIRE(charts);
      CHECK(charts->body.rfind("<div class=\"stats\" data-revision=\"2\">", 0) == 0);
      CHECK(charts->body.find("data-series=\"accuracy\" data-points=\"1\"") != std::string::npos);
      CHECK(nlohmann::json::parse(get(server, "/stats.json")->body)["validation"][0]["accuracy"] ==
            0.875);

      const auto missing = get(server, "/nothing-here");
      REQUIRE(missing);
      CHECK(missing->status == 404);
    });
  }

  TEST_CASE("UIServer: stop() with a kept-alive connection open returns promptly, twice") {
    testutil::withinSeconds(30, [] {
      UIServer server(storageWithOneIteration());
      httplib::Client client(server.host(), server.port());
      client.set_keep_alive(true);
      REQUIRE(client.Get("/stats.json"));
      const auto start = std::chrono::steady_clock::now();
      server.stop();
      CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
      server.stop();
      client.set_connection_timeout(1);
      CHECK_FALSE(client.Get("/stats.json"));
    });
  }

  TEST_CASE("UIServer: destroyed right after construction, it does not hang") {
    testutil::withinSeconds(30, [] {
      for (int i = 0; i < 20; ++i) UIServer server(std::make_shared<StatsStorage>());
    });
  }

  TEST_CASE("UIServer: a bad port, a taken port and a null storage are typed errors") {
    auto storage = std::make_shared<StatsStorage>();
    CHECK_THROWS_WITH_AS(UIServer(storage, -1), doctest::Contains("port must be in 0..65535"),
                         ConfigError);
    CHECK_THROWS_AS(UIServer(storage, 65536), ConfigError);
    CHECK_THROWS_AS(UIServer(nullptr), ConfigError);
    UIServer first(storage);
    const std::string taken = "cannot listen on 127.0.0.1:" + std::to_string(first.port());
    CHECK_THROWS_WITH_AS(UIServer(storage, first.port()), doctest::Contains(taken.c_str()),
                         IoError);
    CHECK_THROWS_AS(UIServer(storage, 0, "192.0.2.1"), IoError);  // no address of this machine
  }

  TEST_CASE("statsJson: non-finite values are null, invalid UTF-8 in names is replaced") {
    StatsSnapshot s;
    s.layerNames = {"bad \xff name"};
    UpdateRatioRecord r;
    r.iteration = 10;
    r.span = 2;
    r.ratios = {INFINITY};
    s.updateRatios.push_back(r);
    const nlohmann::json json = nlohmann::json::parse(statsJson(s));
    CHECK(json["updateRatios"][0]["ratios"][0].is_null());
    CHECK(json["updateRatios"][0]["span"] == 2);
    CHECK(json["layers"][0] == "bad \xEF\xBF\xBD name");
  }
}
