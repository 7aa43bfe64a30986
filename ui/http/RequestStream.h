#pragma once
// The httplib::Stream that one request is parsed from and answered on. Reads come first from the
// bytes the ConnectionPoller already received (the whole head, perhaps the start of the body),
// then from the socket, and fail once the request has taken its byte budget (head + maxBodyBytes
// + maxFramingBytes), passed its deadline (requestTimeout from its first byte) or the server is
// stopping. Such a failure is kept as limitHit(): the request is abandoned, httplib's answer to
// the failed read is not sent (writes are dropped), and the caller answers the limit instead and
// closes the connection. This is what bounds bodies however they are framed, including chunk-size
// lines, which httplib reads without a length limit.
//
// Writes wait for the socket at most writeTimeout per answer. The stream also notes whether the
// answer announced "Connection: close": the connection is kept only when the answer said so.
#include <httplib.h>

#include <optional>

#include "ui/ServerLimits.h"
#include "ui/http/Connection.h"

namespace dl4cpp::http {

class RequestStream final : public httplib::Stream {
 public:
  // Why reading the request stopped.
  enum class Limit { TooLarge, TooSlow, ServerStopping };

  // `connection` holds a whole head in pending(); `stopFd` becomes readable when the server stops.
  RequestStream(Connection& connection, const ServerLimits& limits, int stopFd);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return connection_.fd(); }

  std::optional<Limit> limitHit() const { return limitHit_; }
  // The answer the caller sends for limitHit() (HTTP text, closing the connection).
  std::string limitAnswer() const;
  // Whether the answer written carried "Connection: close" (or was not written whole).
  bool answerClosesConnection() const { return closeAnnounced_ || writeFailed_; }

 private:
  // Waits until the socket has bytes, then receives them into connection_.pending().
  bool refill();

  Connection& connection_;
  const ServerLimits& limits_;
  const int stopFd_;
  const size_t budget_;  // bytes this request may take from the connection
  const Connection::Clock::time_point deadline_;
  size_t taken_ = 0;
  std::optional<Limit> limitHit_;
  std::optional<Connection::Clock::time_point> writeDeadline_;
  bool closeAnnounced_ = false;
  bool writeFailed_ = false;
};

}  // namespace dl4cpp::http
