#include "server/BoundedHttpServer.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <utility>

#include "server/HttpAnswer.h"
#include "server/RequestStream.h"
#include "server/Sockets.h"

namespace samples::server {
namespace {

// Runs each task at once on the thread that enqueues it: httplib's accept loop, whose task per
// connection (process_and_close_socket) only hands the connection to the poller.
class InlineTaskQueue : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> task) override { task(); }
  void shutdown() override {}
};

void checkLimits(const ServerLimits& limits) {
  auto require = [](bool holds, const std::string& what) {
    if (!holds) throw std::invalid_argument("server limits: " + what);
  };
  require(limits.httpThreads >= 1 && limits.bodilessHttpThreads >= 1,
          fmt::format("httpThreads and bodilessHttpThreads must be >= 1, got {} and {}",
                      limits.httpThreads, limits.bodilessHttpThreads));
  require(limits.maxConnections >= 1,
          fmt::format("maxConnections must be >= 1, got {}", limits.maxConnections));
  for (const auto& [name, timeout] : {std::pair{"idleTimeout", limits.idleTimeout},
                                      std::pair{"requestTimeout", limits.requestTimeout},
                                      std::pair{"writeTimeout", limits.writeTimeout},
                                      std::pair{"lingerTimeout", limits.lingerTimeout}})
    require(timeout.count() > 0, fmt::format("{} must be > 0 ms, got {}", name, timeout.count()));
}

}  // namespace

BoundedHttpServer::BoundedHttpServer(const ServerLimits& limits)
    : limits_((checkLimits(limits), limits)),
      headScanner_(limits.maxHeadBytes, limits.maxHeaderLines),
      stopFd_(makeEventFd()),
      poller_(limits,
              [this](std::shared_ptr<Connection> connection) { dispatch(std::move(connection)); }) {
  new_task_queue = [] { return new InlineTaskQueue; };
  // What httplib announces in its Keep-Alive header.
  set_keep_alive_max_count(limits.maxRequestsPerConnection);
  set_keep_alive_timeout(std::chrono::ceil<std::chrono::seconds>(limits.idleTimeout).count());
  // Answers are small writes: without TCP_NODELAY, Nagle's algorithm holds each one until the
  // client's delayed ACK, about 40 ms per request on keep-alive connections.
  set_tcp_nodelay(true);
}

BoundedHttpServer::~BoundedHttpServer() {
  stop();
  ::close(stopFd_);
}

int BoundedHttpServer::bind(const std::string& host, int port) {
  const int bound = port == 0 ? bind_to_any_port(host) : (bind_to_port(host, port) ? port : -1);
  // httplib listens with a backlog of 5: connections arriving together beyond that would wait
  // for the client's SYN retry (a second or more) although accepting costs next to nothing here.
  if (bound > 0) ::listen(svr_sock_, SOMAXCONN);
  return bound;
}

void BoundedHttpServer::serve() {
  workers_ = std::make_unique<httplib::ThreadPool>(static_cast<size_t>(limits_.httpThreads));
  bodilessWorkers_ =
      std::make_unique<httplib::ThreadPool>(static_cast<size_t>(limits_.bodilessHttpThreads));
  poller_.start();
  listen_after_bind();
  poller_.stop();
  // After the requests already handed to the threads are answered.
  workers_->shutdown();
  bodilessWorkers_->shutdown();
}

void BoundedHttpServer::stop() {
  stopping_ = true;
  signalEventFd(stopFd_);
  poller_.stop();
  // As httplib::Server::stop(), but also when listening has not started yet.
  const socket_t listening = svr_sock_.exchange(INVALID_SOCKET);
  if (listening != INVALID_SOCKET) {
    ::shutdown(listening, SHUT_RDWR);
    ::close(listening);
  }
}

bool BoundedHttpServer::process_and_close_socket(socket_t sock) {
  std::shared_ptr<Connection> connection;
  try {
    connection = std::make_shared<Connection>(sock, openConnections_, headScanner_);
  } catch (const std::exception&) {
    ::close(sock);
    return false;
  }
  if (openConnections_ > limits_.maxConnections) {
    connection->sendWithoutWaiting(closingErrorAnswer(
        503, fmt::format("the server has {} connections open, its limit", limits_.maxConnections)));
    return false;
  }
  poller_.watch(std::move(connection));
  return true;
}

void BoundedHttpServer::dispatch(std::shared_ptr<Connection> connection) {
  const bool body = declaresBody(connection->pending().substr(0, connection->head.headBytes()));
  (body ? workers_ : bodilessWorkers_)->enqueue([this, connection = std::move(connection)] {
    answer(connection);
  });
}

void BoundedHttpServer::answer(const std::shared_ptr<Connection>& connection) {
  try {
    RequestStream stream(*connection, limits_, stopFd_);
    const bool last =
        stopping_ || ++connection->requestsAnswered >= limits_.maxRequestsPerConnection;
    bool clientCloses = false;
    // Range headers are ignored, as RFC 9110 allows: the answers are small JSON documents, sent
    // whole (httplib would otherwise cut them, error answers included, to the bytes asked for).
    const bool answered = process_request(
        stream, last, clientCloses, [](httplib::Request& request) { request.ranges.clear(); });
    if (stream.limitHit()) {
      poller_.closeAfter(connection, stream.limitAnswer());
    } else if (!answered || last || clientCloses || stream.answerClosesConnection()) {
      if (!connection->peerClosed()) poller_.closeAfter(connection, "");
    } else {
      connection->head.reset();
      if (!connection->pending().empty()) connection->requestStart = Connection::Clock::now();
      poller_.watch(connection);
    }
  } catch (const std::exception&) {
    // Nothing more can be said on this connection (e.g. memory ran out): it closes.
  }
}

}  // namespace samples::server
