// The training page's server: its routes, live data, shutdown with a connection open, bad ports,
// and hostile clients (bodies of any size, idle, trickling and flooding connections) while
// training runs.
#include <doctest/doctest.h>
#include <httplib.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "TempDir.h"
#include "nn/core/Error.h"
#include "parallel/ParallelTestUtil.h"
#include "ui/StatsJson.h"
#include "ui/UIServer.h"
#include "ui/http/RawHttpChecks.h"

using namespace dl4cpp;
using namespace std::chrono_literals;
using testutil::parseAnswers;
using testutil::RawConnection;
using Clock = std::chrono::steady_clock;

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

// The one answer to `request` on a new connection, which the page must close after an error.
testutil::RawAnswer answerTo(const UIServer& server, const std::string& request) {
  return testutil::answerOnFreshConnection(server.port(), request, 5s, 3s);
}

std::string errorOf(const testutil::RawAnswer& answer) { return testutil::errorReasonOf(answer); }

// A field of /proc/self/status in bytes (VmRSS, ...).
size_t statusBytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) * 1024;
  return 0;
}

size_t openFileDescriptors() {
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    ++count;
  return count;
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

  TEST_CASE(
      "UIServer: GET and HEAD only: other methods are 405 and a body is refused (413), neither "
      "read") {
    testutil::withinSeconds(60, [] {
      UIServer server(storageWithOneIteration());
      // Closed after the answer, which tells the client that no body follows its head.
      const auto head =
          answerTo(server, "HEAD /stats.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      CHECK(head.status == 200);
      CHECK(head.body.empty());
      for (const std::string method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
        CAPTURE(method);
        const auto refused =
            answerTo(server, method + " / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
        CHECK(refused.status == 405);
        CHECK(refused.header("Allow") == "GET, HEAD");
        CHECK(refused.header("Connection") == "close");
        CHECK(!errorOf(refused).empty());
      }
      for (const std::string framing : {"Content-Length: 5", "Transfer-Encoding: chunked"}) {
        CAPTURE(framing);
        const auto refused =
            answerTo(server, "GET /stats.json HTTP/1.1\r\nHost: x\r\n" + framing + "\r\n\r\n");
        CHECK(refused.status == 413);
        CHECK(!errorOf(refused).empty());
      }
      // Asked whether it may send its body, the client is refused at once, not invited.
      const auto expect = answerTo(server,
                                   "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: "
                                   "3221225472\r\nExpect: 100-continue\r\n\r\n");
      CHECK(expect.status == 405);
      const auto missing = answerTo(server, "GET /nothing-here HTTP/1.1\r\nHost: x\r\n\r\n");
      CHECK(missing.status == 404);
      CHECK(errorOf(missing).find("/stats.json") != std::string::npos);
      CHECK(answerTo(server, "GET / HTTP/1.1\r\nHost: x\r\n\r\n").status == 200);
    });
  }

  TEST_CASE(
      "UIServer: a 3 GB body is refused at once and never read, and the page's memory stays "
      "bounded") {
    testutil::withinSeconds(60, [] {
      UIServer server(storageWithOneIteration());
      const size_t rssBefore = statusBytes("VmRSS");
      const size_t body = size_t{3} << 30;
      for (const auto& [head, status] :
           {std::pair{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body) +
                          "\r\n\r\n",
                      405},
            std::pair{std::string("GET /stats.json HTTP/1.1\r\nHost: x\r\nContent-Length: ") +
                          std::to_string(body) + "\r\n\r\n",
                      413}}) {
        CAPTURE(head);
        RawConnection connection(server.port());
        connection.send(head);
        const auto start = Clock::now();
        // The client streams the body (from a 64 KiB buffer) until the server closes.
        const size_t sent = connection.sendFilled(body, 'x', 20s);
        REQUIRE(connection.readAnswers(1, 1s));
        CHECK(parseAnswers(connection.received(), true).at(0).status == status);
        CHECK(connection.readUntilClosed(3s));
        CHECK(Clock::now() - start < 5s);
        // What the kernel buffers and the second the server reads and discards after its answer.
        CHECK(sent < (size_t{64} << 20));
      }
      CHECK(statusBytes("VmRSS") < rssBefore + (size_t{32} << 20));
      CHECK(answerTo(server, "GET /stats.json HTTP/1.1\r\nHost: x\r\n\r\n").status == 200);
    });
  }

  TEST_CASE("UIServer: a POST without Content-Length is answered 405 at once and closed") {
    testutil::withinSeconds(60, [] {
      UIServer server(storageWithOneIteration());
      RawConnection connection(server.port());
      connection.send("POST /stats.json HTTP/1.1\r\nHost: x\r\n\r\n");
      const auto start = Clock::now();
      REQUIRE(connection.readAnswers(1, 2s));
      CHECK(parseAnswers(connection.received(), false).at(0).status == 405);
      // The client keeps its side open: the server closes without waiting for it.
      CHECK(connection.readUntilClosed(3s));
      CHECK(Clock::now() - start < 3s);
    });
  }

  TEST_CASE("UIServer: clients trickling their requests do not keep the page from answering") {
    testutil::withinSeconds(60, [] {
      UIServer server(storageWithOneIteration());
      // More tricklers than the page has threads; each sends a byte every 50 ms.
      std::vector<std::unique_ptr<RawConnection>> trickling;
      for (int i = 0; i < 8; ++i) {
        trickling.push_back(std::make_unique<RawConnection>(server.port()));
        trickling.back()->send("GET /stats.json HTTP/1.1\r\nHost: x\r\nX-Slow: ");
      }
      Clock::duration slowest{};
      for (int tick = 0; tick < 30; ++tick) {
        for (auto& connection : trickling) connection->send("a");
        if (tick % 3 == 0) {
          const auto start = Clock::now();
          const auto page = get(server, "/stats.json");
          REQUIRE(page);
          CHECK(page->status == 200);
          slowest = std::max(slowest, Clock::now() - start);
        }
        std::this_thread::sleep_for(50ms);
      }
      CHECK(slowest < 500ms);
      for (auto& connection : trickling) CHECK_FALSE(connection->closedByServerNow());
    });
  }

  TEST_CASE(
      "UIServer: under 2000 idle connections training finishes and saves, the page answers, and "
      "the process keeps its file descriptors") {
    // The process gets only the descriptors the test needs: a page that held one per connection
    // (as before its connection limit) would take those the training needs to save its model.
    constexpr size_t kIdle = 2000;
    const size_t openBefore = openFileDescriptors();
    const size_t pageLimit = UIServer::defaultLimits().maxConnections;
    const rlim_t needed = openBefore + kIdle + pageLimit + 64;
    rlimit limit{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &limit) == 0);
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed) {
      std::cout << "skipped: needs " << needed
                << " file descriptors, RLIMIT_NOFILE's hard limit is " << limit.rlim_max
                << std::endl;
      return;
    }
    const rlimit saved = limit;
    limit.rlim_cur = needed;
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &limit) == 0);
    struct Restore {
      rlimit saved;
      ~Restore() { ::setrlimit(RLIMIT_NOFILE, &saved); }
    } restore{saved};

    testutil::withinSeconds(120, [&] {
      auto storage = std::make_shared<StatsStorage>();
      UIServer server(storage);
      std::vector<std::unique_ptr<RawConnection>> idle;
      for (size_t i = 0; i < kIdle; ++i)
        REQUIRE_NOTHROW(idle.push_back(std::make_unique<RawConnection>(server.port())));
      // The page keeps the newest of them, up to its limit, and closes the others.
      size_t closed = 0;
      for (const auto deadline = Clock::now() + 10s;
           closed < kIdle - pageLimit && Clock::now() < deadline;) {
        std::this_thread::sleep_for(20ms);
        closed = 0;
        for (const auto& connection : idle) closed += connection->closedByServerNow() ? 1 : 0;
      }
      CHECK(closed >= kIdle - pageLimit);

      MultiLayerNetwork model(testutil::smallNet(Sgd(0.1)), Device::cpu(), 1);
      model.init();
      model.setListeners({std::make_shared<StatsListener>(storage, 5)});
      testutil::VectorIterator data(testutil::batches(20, 16));
      std::atomic<bool> trained{false};
      std::atomic<int> answered{0}, failed{0};
      std::atomic<size_t> mostOpen{0};
      std::thread asker([&] {
        while (!trained) {
          const auto page = get(server, "/stats.json");
          ++(page && page->status == 200 ? answered : failed);
          mostOpen = std::max(mostOpen.load(), openFileDescriptors());
          std::this_thread::sleep_for(10ms);
        }
      });
      int epochs = 0;
      // At least a few answers while training runs, however fast it is.
      while ((epochs < 5 || answered < 5) && epochs < 2000) {
        model.fit(data);
        ++epochs;
      }
      testutil::TempDir dir;
      CHECK_NOTHROW(model.save(dir / "model.dl4cpp"));
      trained = true;
      asker.join();
      CHECK(answered >= 5);
      CHECK(failed == 0);
      // The client's 2000 sockets, and at most the page's limit on the server's side.
      CHECK(mostOpen <= openBefore + kIdle + pageLimit + 16);
      CHECK(MultiLayerNetwork::load(dir / "model.dl4cpp").numParams() == model.numParams());
      const auto stats = get(server, "/stats.json");
      REQUIRE(stats);
      CHECK(nlohmann::json::parse(stats->body)["iterations"].size() > 0);
    });
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
