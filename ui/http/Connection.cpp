#include "ui/http/Connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <tuple>
#include <utility>

namespace dl4cpp::http {
namespace {

// The numeric address and port of one end of a socket (getpeername or getsockname).
template <typename GetName>
std::pair<std::string, int> addressOf(int fd, GetName getName) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getName(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return {"", 0};
  char text[INET6_ADDRSTRLEN] = "";
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    inet_ntop(AF_INET, &v4.sin_addr, text, sizeof(text));
    return {text, ntohs(v4.sin_port)};
  }
  if (address.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
    inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof(text));
    return {text, ntohs(v6.sin6_port)};
  }
  return {"", 0};
}

}  // namespace

Connection::Connection(int fd, std::atomic<size_t>& openCount,
                       const RequestHeadScanner& headScanner)
    : head(headScanner), fd_(fd), openCount_(openCount) {
  std::tie(remoteIp_, remotePort_) = addressOf(fd, ::getpeername);
  std::tie(localIp_, localPort_) = addressOf(fd, ::getsockname);
  ++openCount_;  // last: a constructor that throws leaves the count as it was
}

Connection::~Connection() {
  ::close(fd_);
  --openCount_;
}

void Connection::consume(size_t bytes) {
  begin_ += bytes;
  if (begin_ == buffer_.size()) {
    buffer_.clear();
    begin_ = 0;
  }
}

ssize_t Connection::receive(size_t limit) {
  if (begin_ > 0) {  // keep the buffer from creeping: what was consumed is dropped first
    buffer_.erase(0, begin_);
    begin_ = 0;
  }
  const size_t before = buffer_.size();
  buffer_.resize(before + limit);
  const ssize_t n = ::recv(fd_, buffer_.data() + before, limit, MSG_DONTWAIT);
  buffer_.resize(before + static_cast<size_t>(n > 0 ? n : 0));
  if (n == 0 && limit > 0) peerClosed_ = true;
  return n;
}

void Connection::sendWithoutWaiting(std::string_view bytes) const {
  ::send(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

}  // namespace dl4cpp::http
