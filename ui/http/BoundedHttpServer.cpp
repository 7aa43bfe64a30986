#include "ui/http/BoundedHttpServer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <utility>

#include "nn/core/Error.h"
#include "ui/http/RequestStream.h"
#include "ui/http/Sockets.h"

namespace dl4cpp::http {
namespace {

const ServerLimits& checked(const ServerLimits& limits) {
  auto require = [](bool holds, const std::string& what) {
    if (!holds) throw ConfigError("server limits: " + what);
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
  return limits;
}

}  // namespace

BoundedHttpServer::BoundedHttpServer(const ServerLimits& limits)
    : limits_(checked(limits)),
      stopFd_(makeEventFd()),
      poller_(limits,
              [this](std::shared_ptr<Connection> connection) { dispatch(std::move(connection)); }) {
  // What httplib announces in its Keep-Alive header.
  set_keep_alive_max_count(limits.maxRequestsPerConnection);
  set_keep_alive_timeout(std::chrono::ceil<std::chrono::seconds>(limits.idleTimeout).count());
  set_socket_options([](socket_t socket) {
    const int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
}

BoundedHttpServer::~BoundedHttpServer() {
  stop();
  closeListeningSocket();
  ::close(stopFd_);
}

int BoundedHttpServer::bind(const std::string& host, int port) {
  const int bound = port == 0 ? bind_to_any_port(host) : (bind_to_port(host, port) ? port : -1);
  if (bound <= 0) return -1;
  const socket_t listening = svr_sock_;
  // httplib listens with a backlog of 5: connections arriving together beyond that would wait
  // for the client's SYN retry (a second or more) although accepting costs next to nothing here.
  // Non-blocking: the poller accepts only what poll() announced, and a connection reset in
  // between must not block it.
  ::listen(listening, SOMAXCONN);
  ::fcntl(listening, F_SETFL, ::fcntl(listening, F_GETFL) | O_NONBLOCK);
  ::fcntl(listening, F_SETFD, FD_CLOEXEC);
  return bound;
}

void BoundedHttpServer::serve() {
  workers_ = std::make_unique<httplib::ThreadPool>(static_cast<size_t>(limits_.httpThreads));
  bodilessWorkers_ =
      std::make_unique<httplib::ThreadPool>(static_cast<size_t>(limits_.bodilessHttpThreads));
  const socket_t listening = svr_sock_;
  if (listening != INVALID_SOCKET) poller_.run(listening);
  // No connection waits in the backlog for a server that no longer accepts.
  closeListeningSocket();
  // After the requests already handed to the threads are answered.
  workers_->shutdown();
  bodilessWorkers_->shutdown();
}

void BoundedHttpServer::stop() {
  stopping_ = true;
  signalEventFd(stopFd_);
  poller_.stop();
}

void BoundedHttpServer::closeListeningSocket() {
  const socket_t listening = svr_sock_.exchange(INVALID_SOCKET);
  if (listening != INVALID_SOCKET) ::close(listening);
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
    // Range headers are ignored, as RFC 9110 allows: the answers are small documents, sent whole
    // (httplib would otherwise cut them, error answers included, to the bytes asked for).
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

}  // namespace dl4cpp::http
