#pragma once
// One client connection of a BoundedHttpServer: its socket, the bytes received and not yet parsed,
// the state of the request under way, and the addresses httplib hands to handlers. One thread owns
// it at a time: the ConnectionPoller, which accepts it and waits for a request head, then an HTTP
// thread while the request is answered, then the poller again (keep-alive). Destroying it closes
// the socket.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "ui/http/RequestHead.h"

namespace dl4cpp::http {

class Connection {
 public:
  using Clock = std::chrono::steady_clock;

  // Takes the accepted socket `fd`. `openCount` counts the server's open connections: this one
  // from now until it is destroyed.
  Connection(int fd, std::atomic<size_t>& openCount, const RequestHeadScanner& headScanner);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int fd() const { return fd_; }
  const std::string& remoteIp() const { return remoteIp_; }
  int remotePort() const { return remotePort_; }
  const std::string& localIp() const { return localIp_; }
  int localPort() const { return localPort_; }

  // Bytes received and not yet consumed; the request under way starts at the first of them.
  std::string_view pending() const { return std::string_view(buffer_).substr(begin_); }
  void consume(size_t bytes);
  // Appends to pending() what the socket holds, at most `limit` bytes, without waiting. Returns
  // the count, 0 when the client has closed its side (peerClosed() from then on), -1 when nothing
  // was there (errno EAGAIN) or on an error.
  ssize_t receive(size_t limit);
  bool peerClosed() const { return peerClosed_; }
  // Sends as much of `bytes` as the socket takes without waiting: for short answers on
  // connections about to close.
  void sendWithoutWaiting(std::string_view bytes) const;

  // Where the head of the request under way ends (RequestHead.h); reset for each request.
  RequestHeadScanner head;
  // When the first byte of the request under way arrived (its deadline counts from there).
  Clock::time_point requestStart;
  size_t requestsAnswered = 0;

 private:
  int fd_;
  std::atomic<size_t>& openCount_;
  std::string buffer_;
  size_t begin_ = 0;  // buffer_[begin_..] is pending()
  bool peerClosed_ = false;
  std::string remoteIp_, localIp_;
  int remotePort_ = 0, localPort_ = 0;
};

}  // namespace dl4cpp::http
