#include "ui/http/RequestStream.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ui/http/ErrorAnswer.h"
#include "ui/http/Sockets.h"

namespace dl4cpp::http {
namespace {

using Clock = Connection::Clock;

// Bytes asked of the socket at a time: a body arrives in few reads, and what belongs to a next
// (pipelined) request stays pending for it.
constexpr size_t kReceiveBytes = size_t{16} * 1024;

}  // namespace

RequestStream::RequestStream(Connection& connection, const ServerLimits& limits, int stopFd)
    : connection_(connection),
      limits_(limits),
      stopFd_(stopFd),
      budget_(connection.head.headBytes() + limits.maxBodyBytes + limits.maxFramingBytes),
      deadline_(connection.requestStart + limits.requestTimeout) {}

bool RequestStream::is_readable() const {
  if (!connection_.pending().empty()) return true;
  pollfd fd{connection_.fd(), POLLIN, 0};
  return ::poll(&fd, 1, 0) > 0;
}

bool RequestStream::is_writable() const {
  pollfd fd{connection_.fd(), POLLOUT, 0};
  return !writeFailed_ && ::poll(&fd, 1, 0) > 0;
}

ssize_t RequestStream::read(char* ptr, size_t size) {
  if (limitHit_) return -1;
  if (connection_.pending().empty() && !refill())
    return connection_.peerClosed() && !limitHit_ ? 0 : -1;
  if (taken_ >= budget_) {
    limitHit_ = Limit::TooLarge;
    return -1;
  }
  const size_t n = std::min({size, connection_.pending().size(), budget_ - taken_});
  std::memcpy(ptr, connection_.pending().data(), n);
  connection_.consume(n);
  taken_ += n;
  return static_cast<ssize_t>(n);
}

bool RequestStream::refill() {
  while (!connection_.peerClosed()) {
    if (Clock::now() >= deadline_) {
      limitHit_ = Limit::TooSlow;
      return false;
    }
    pollfd fds[2] = {{connection_.fd(), POLLIN, 0}, {stopFd_, POLLIN, 0}};
    const int ready = ::poll(fds, 2, pollTimeout(deadline_));
    if (ready < 0 && errno != EINTR) return false;
    if (fds[1].revents != 0) {
      limitHit_ = Limit::ServerStopping;
      return false;
    }
    if (ready <= 0) continue;
    const ssize_t n = connection_.receive(kReceiveBytes);
    if (n > 0) return true;
    if (n < 0 && !wouldBlock()) return false;
  }
  return false;
}

ssize_t RequestStream::write(const char* ptr, size_t size) {
  // The request was abandoned: httplib's answer to the failed read is replaced by limitAnswer().
  if (limitHit_) return static_cast<ssize_t>(size);
  if (!writeDeadline_) writeDeadline_ = Clock::now() + limits_.writeTimeout;
  // httplib writes the status line and headers of an answer in one call.
  if (std::string_view(ptr, size).find("\r\nConnection: close\r\n") != std::string_view::npos)
    closeAnnounced_ = true;
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n =
        ::send(connection_.fd(), ptr + sent, size - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    pollfd fd{connection_.fd(), POLLOUT, 0};
    if ((n < 0 && !wouldBlock()) || Clock::now() >= *writeDeadline_ ||
        (::poll(&fd, 1, pollTimeout(*writeDeadline_)) < 0 && errno != EINTR)) {
      writeFailed_ = true;
      return -1;
    }
  }
  return static_cast<ssize_t>(size);
}

void RequestStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  ip = connection_.remoteIp();
  port = connection_.remotePort();
}

void RequestStream::get_local_ip_and_port(std::string& ip, int& port) const {
  ip = connection_.localIp();
  port = connection_.localPort();
}

std::string RequestStream::limitAnswer() const {
  switch (limitHit_.value_or(Limit::ServerStopping)) {
    case Limit::TooLarge:
      return closingErrorAnswer(413, fmt::format("the request body exceeds {} bytes ({} more are "
                                                 "allowed on the wire for chunk framing)",
                                                 limits_.maxBodyBytes, limits_.maxFramingBytes));
    case Limit::TooSlow:
      return closingErrorAnswer(408, fmt::format("the request did not arrive whole within {} ms",
                                                 limits_.requestTimeout.count()));
    case Limit::ServerStopping:
      break;
  }
  return closingErrorAnswer(503, "the server is shutting down");
}

}  // namespace dl4cpp::http
