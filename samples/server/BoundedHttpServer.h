#pragma once
// httplib's HTTP parsing, routing and answering behind connection handling with bounds on what a
// client may cost (ServerLimits.h). httplib's own model, a thread per connection reading with a
// timeout per recv(), lets a client hold a thread for as long as it keeps trickling bytes, buffers
// chunked bodies and header lines without limit, and keeps stop() waiting for such clients.
// Here instead:
//   - httplib's accept loop hands each connection to a ConnectionPoller, which waits for whole
//     request heads on all connections with one thread;
//   - an HTTP thread takes a connection only once its head is whole, and reads the body through a
//     RequestStream, which bounds its bytes and its time; requests without a body go to threads of
//     their own, which slow bodies cannot keep busy;
//   - stop() cuts every wait for a client short: serve() returns once the requests being answered
//     have been (their reads of the client are abandoned, their writes bounded by writeTimeout).
// The routing interface of httplib::Server (Get, Post, the handlers) is used as usual.
#include <httplib.h>

#include <atomic>
#include <memory>
#include <string>

#include "server/ConnectionPoller.h"
#include "server/ServerLimits.h"

namespace samples::server {

class BoundedHttpServer : private httplib::Server {
 public:
  explicit BoundedHttpServer(const ServerLimits& limits);
  ~BoundedHttpServer() override;

  using httplib::Server::Get;
  using httplib::Server::Post;
  using httplib::Server::set_error_handler;
  using httplib::Server::set_exception_handler;
  using httplib::Server::set_expect_100_continue_handler;
  using httplib::Server::set_post_routing_handler;
  using httplib::Server::set_pre_routing_handler;

  // Binds to host:port (port 0 = any free port) and returns the port, or -1.
  int bind(const std::string& host, int port);
  // Answers requests until stop(); returns once every HTTP thread has finished.
  void serve();
  // Callable from any thread, also before serve() (which then returns at once).
  void stop();

  const ServerLimits& limits() const { return limits_; }

 private:
  // Called by httplib's accept loop for each new connection (see new_task_queue).
  bool process_and_close_socket(socket_t sock) override;
  // Hands a connection whose request head is whole to the HTTP threads.
  void dispatch(std::shared_ptr<Connection> connection);
  // One request on an HTTP thread; the connection goes back to the poller or is closed.
  void answer(const std::shared_ptr<Connection>& connection);

  const ServerLimits limits_;
  const RequestHeadScanner headScanner_;
  const int stopFd_;  // eventfd, readable once stop() was called
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> openConnections_{0};
  std::unique_ptr<httplib::ThreadPool> workers_;          // requests with a body
  std::unique_ptr<httplib::ThreadPool> bodilessWorkers_;  // requests without one
  ConnectionPoller poller_;
};

}  // namespace samples::server
