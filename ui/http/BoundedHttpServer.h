#pragma once
// The one HTTP server of dl4cpp (the training page, UIServer, and mnist_inference_server use it):
// httplib's HTTP parsing, routing and answering behind connection handling with bounds on what a
// client may cost (ServerLimits.h). httplib's own model, a thread per connection reading with a
// timeout per recv(), lets a client hold a thread for as long as it keeps trickling bytes, buffers
// chunked bodies and header lines without limit, accepts connections without limit, spins when
// accept() runs out of file descriptors, and keeps stop() waiting for slow clients. Here instead:
//   - one ConnectionPoller thread (the one calling serve()) accepts connections, at most
//     maxConnections open at a time, and waits for whole request heads on all of them;
//   - an HTTP thread takes a connection only once its head is whole, and reads the body through a
//     RequestStream, which bounds its bytes and its time; requests without a body go to threads of
//     their own, which slow bodies cannot keep busy;
//   - stop() cuts every wait for a client short: serve() returns once the requests being answered
//     have been (their reads of the client are abandoned, their writes bounded by writeTimeout).
// The routing interface of httplib::Server (Get, Post, the handlers) is used as usual. A handler
// refusing a request in the pre-routing handler keeps its body from being read at all.
//
// Internal to dl4cpp_ui: not installed, so the installed headers do not reach httplib.h.
#include <httplib.h>

#include <atomic>
#include <memory>
#include <string>

#include "ui/ServerLimits.h"
#include "ui/http/ConnectionPoller.h"

namespace dl4cpp::http {

class BoundedHttpServer : private httplib::Server {
 public:
  // ConfigError for limits that cannot work (no thread, no connection, a timeout <= 0).
  explicit BoundedHttpServer(const ServerLimits& limits);
  ~BoundedHttpServer() override;
  BoundedHttpServer(const BoundedHttpServer&) = delete;
  BoundedHttpServer& operator=(const BoundedHttpServer&) = delete;

  using httplib::Server::Get;
  using httplib::Server::Post;
  using httplib::Server::set_error_handler;
  using httplib::Server::set_exception_handler;
  using httplib::Server::set_expect_100_continue_handler;
  using httplib::Server::set_post_routing_handler;
  using httplib::Server::set_pre_routing_handler;

  // Binds to host:port (port 0 = any free port) and listens; returns the port, or -1. The socket
  // takes SO_REUSEADDR (a restarted server gets its port back from connections in TIME_WAIT) but
  // not SO_REUSEPORT, with which a second server would bind the same port and the kernel would
  // split the connections between the two.
  int bind(const std::string& host, int port);
  // Answers requests until stop(); returns once every HTTP thread has finished. Runs the
  // connection poller on the calling thread.
  void serve();
  // Callable from any thread, also before serve() (which then returns at once).
  void stop();

  const ServerLimits& limits() const { return limits_; }
  // Connections open now (at most limits().maxConnections, plus one being accepted).
  size_t openConnections() const { return poller_.openConnections(); }

 private:
  // Hands a connection whose request head is whole to the HTTP threads.
  void dispatch(std::shared_ptr<Connection> connection);
  // One request on an HTTP thread; the connection goes back to the poller or is closed.
  void answer(const std::shared_ptr<Connection>& connection);
  void closeListeningSocket();

  const ServerLimits limits_;
  const int stopFd_;  // eventfd, readable once stop() was called
  std::atomic<bool> stopping_{false};
  ConnectionPoller poller_;
  // Declared after the poller, destroyed before it: their tasks hold connections.
  std::unique_ptr<httplib::ThreadPool> workers_;          // requests with a body
  std::unique_ptr<httplib::ThreadPool> bodilessWorkers_;  // requests without one
};

}  // namespace dl4cpp::http
