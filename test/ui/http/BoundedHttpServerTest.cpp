// The connection layer every HTTP server of dl4cpp answers through, on its own: the connection
// limit (who gives way to a new connection), accepting without file descriptors, limits that
// cannot work, ports that cannot be shared. What it does with request bytes is tested through the
// servers using it (test/samples/server/InferenceServerTest.cpp, test/ui/UIServerTest.cpp).
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "nn/core/Error.h"
#include "ui/http/BoundedHttpServer.h"
#include "ui/http/RawHttp.h"

using dl4cpp::ServerLimits;
using dl4cpp::http::BoundedHttpServer;
using testutil::parseAnswers;
using testutil::RawConnection;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kPing = "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n";

// A BoundedHttpServer answering GET /ping on a free loopback port, serving on a thread of its own.
struct RunningServer {
  BoundedHttpServer server;
  std::thread serving;
  int port = 0;

  explicit RunningServer(const ServerLimits& limits) : server(limits) {
    server.Get("/ping", [](const httplib::Request&, httplib::Response& response) {
      response.set_content("pong", "text/plain");
    });
    port = server.bind("127.0.0.1", 0);
    REQUIRE(port > 0);
    serving = std::thread([this] { server.serve(); });
  }
  ~RunningServer() {
    server.stop();
    serving.join();
  }

  // Waits until the server holds `count` connections (true) or 2 s pass (false).
  bool waitForOpen(size_t count) const {
    const auto deadline = Clock::now() + 2s;
    while (server.openConnections() != count && Clock::now() < deadline)
      std::this_thread::sleep_for(5ms);
    return server.openConnections() == count;
  }
};

ServerLimits smallLimits(size_t maxConnections) {
  ServerLimits limits;
  limits.maxConnections = maxConnections;
  limits.httpThreads = 2;
  return limits;
}

// GET /ping on a new connection: the status, or -1 when no answer came within 5 s.
int pingStatus(int port) {
  RawConnection connection(port);
  connection.send(kPing);
  if (!connection.readAnswers(1, 5s)) return -1;
  return parseAnswers(connection.received(), connection.closedByServer()).at(0).status;
}

std::chrono::microseconds processCpuTime() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto micros = [](const timeval& t) {
    return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec);
  };
  return micros(usage.ru_utime) + micros(usage.ru_stime);
}

// The soft RLIMIT_NOFILE set to `soft` for a scope, then restored.
class SoftFdLimit {
 public:
  explicit SoftFdLimit(rlim_t soft) {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit lowered = saved_;
    lowered.rlim_cur = soft;
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
  }
  ~SoftFdLimit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  SoftFdLimit(const SoftFdLimit&) = delete;
  SoftFdLimit& operator=(const SoftFdLimit&) = delete;

 private:
  rlimit saved_{};
};

}  // namespace

TEST_SUITE("ui") {
  TEST_CASE(
      "BoundedHttpServer: a connection arriving at the limit takes the place of the longest idle "
      "one") {
    RunningServer running(smallLimits(3));
    std::vector<std::unique_ptr<RawConnection>> idle;
    for (size_t i = 0; i < 3; ++i) {
      idle.push_back(std::make_unique<RawConnection>(running.port));
      REQUIRE(running.waitForOpen(i + 1));  // accepted in this order
    }
    CHECK(pingStatus(running.port) == 200);
    CHECK(idle[0]->readUntilClosed(2s));
    CHECK_FALSE(idle[1]->closedByServerNow());
    CHECK_FALSE(idle[2]->closedByServerNow());
    // The two left are served as usual.
    idle[2]->send(kPing);
    REQUIRE(idle[2]->readAnswers(1, 5s));
    CHECK(parseAnswers(idle[2]->received(), false).at(0).status == 200);
    CHECK(running.server.openConnections() <= 3);
  }

  TEST_CASE(
      "BoundedHttpServer: at the limit with a request under way on every connection, a new one is "
      "answered 503 and closed") {
    RunningServer running(smallLimits(3));
    std::vector<std::unique_ptr<RawConnection>> busy;
    for (int i = 0; i < 3; ++i) {
      busy.push_back(std::make_unique<RawConnection>(running.port));
      busy.back()->send("GET /ping HTTP/1.1\r\n");  // a head that is not finished
    }
    REQUIRE(running.waitForOpen(3));
    std::this_thread::sleep_for(100ms);  // the server has read the starts of the heads
    RawConnection extra(running.port);
    CHECK(extra.readUntilClosed(2s));
    const auto answers = parseAnswers(extra.received(), true);
    REQUIRE(answers.size() == 1);
    CHECK(answers[0].status == 503);
    CHECK(!nlohmann::json::parse(answers[0].body)["error"].get<std::string>().empty());
    for (const auto& connection : busy) CHECK_FALSE(connection->closedByServerNow());
    // A head finished is answered; its connection then waits idle and gives way to a new one.
    busy[0]->send("Host: x\r\n\r\n");
    REQUIRE(busy[0]->readAnswers(1, 5s));
    std::this_thread::sleep_for(50ms);  // the answering thread has handed it back to the poller
    CHECK(pingStatus(running.port) == 200);
  }

  TEST_CASE("BoundedHttpServer: a flood of connections never holds more than the limit open") {
    RunningServer running(smallLimits(8));
    size_t mostOpen = 0;
    std::vector<std::unique_ptr<RawConnection>> flood;
    for (int i = 0; i < 300; ++i) {
      flood.push_back(std::make_unique<RawConnection>(running.port));
      mostOpen = std::max(mostOpen, running.server.openConnections());
    }
    size_t closed = 0;
    for (const auto deadline = Clock::now() + 3s; closed < 300 - 8 && Clock::now() < deadline;) {
      mostOpen = std::max(mostOpen, running.server.openConnections());
      std::this_thread::sleep_for(10ms);
      closed = 0;
      for (const auto& connection : flood) closed += connection->closedByServerNow() ? 1 : 0;
    }
    CHECK(closed == 300 - 8);  // all but the newest 8, which the server keeps
    CHECK(mostOpen <= 9);      // the limit, and the one connection being accepted
    CHECK(pingStatus(running.port) == 200);
  }

  TEST_CASE(
      "BoundedHttpServer: out of file descriptors, accepting pauses instead of spinning, and "
      "resumes") {
    RunningServer running(smallLimits(16));
    // Sockets made first, connected once no descriptor is left: connect() needs none, the
    // server's accept() fails with EMFILE.
    std::vector<int> clients;
    for (int i = 0; i < 4; ++i) {
      clients.push_back(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      REQUIRE(clients.back() >= 0);
    }
    const int lowestFree = ::dup(clients.back());
    REQUIRE(lowestFree >= 0);
    ::close(lowestFree);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(running.port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::chrono::microseconds spent{};
    {
      const SoftFdLimit noneLeft(static_cast<rlim_t>(lowestFree));
      REQUIRE(::dup(clients.back()) < 0);
      REQUIRE(errno == EMFILE);
      for (const int client : clients)
        REQUIRE(::connect(client, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) ==
                0);
      const auto cpuBefore = processCpuTime();
      std::this_thread::sleep_for(1s);
      spent = processCpuTime() - cpuBefore;
      CHECK(running.server.openConnections() == 0);
    }
    // A loop retrying accept() at once burns a third of a core or more (httplib's did).
    CHECK(spent < 100ms);
    // Descriptors again: the connections waiting in the backlog are accepted and answered.
    for (const int client : clients)
      REQUIRE(::send(client, kPing.data(), kPing.size(), MSG_NOSIGNAL) ==
              static_cast<ssize_t>(kPing.size()));
    for (const int client : clients) {
      std::string received;
      const auto deadline = Clock::now() + 3s;
      while (received.find("pong") == std::string::npos && Clock::now() < deadline) {
        pollfd fd{client, POLLIN, 0};
        if (::poll(&fd, 1, 50) <= 0) continue;
        char buffer[4096];
        const ssize_t n = ::recv(client, buffer, sizeof(buffer), 0);
        if (n <= 0) break;
        received.append(buffer, static_cast<size_t>(n));
      }
      CHECK(received.rfind("HTTP/1.1 200", 0) == 0);
      ::close(client);
    }
  }

  TEST_CASE("BoundedHttpServer: limits that cannot work are a ConfigError naming the limit") {
    ServerLimits noThreads;
    noThreads.bodilessHttpThreads = 0;
    CHECK_THROWS_WITH_AS(BoundedHttpServer{noThreads}, doctest::Contains("bodilessHttpThreads"),
                         dl4cpp::ConfigError);
    ServerLimits noConnections;
    noConnections.maxConnections = 0;
    CHECK_THROWS_WITH_AS(BoundedHttpServer{noConnections}, doctest::Contains("maxConnections"),
                         dl4cpp::ConfigError);
    ServerLimits noTime;
    noTime.requestTimeout = 0ms;
    CHECK_THROWS_WITH_AS(BoundedHttpServer{noTime}, doctest::Contains("requestTimeout"),
                         dl4cpp::ConfigError);
  }

  TEST_CASE("BoundedHttpServer: a port being served cannot be bound by a second server") {
    // With SO_REUSEPORT (httplib's default) the second bind succeeds and the kernel splits the
    // connections between the two servers.
    RunningServer first(smallLimits(4));
    BoundedHttpServer second(smallLimits(4));
    CHECK(second.bind("127.0.0.1", first.port) == -1);
    CHECK(pingStatus(first.port) == 200);
  }

  TEST_CASE("BoundedHttpServer: stop() before serve() makes serve() return at once") {
    BoundedHttpServer server(smallLimits(4));
    REQUIRE(server.bind("127.0.0.1", 0) > 0);
    server.stop();
    const auto start = Clock::now();
    server.serve();
    CHECK(Clock::now() - start < 1s);
  }
}
