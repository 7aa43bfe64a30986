#pragma once
// A client that sends exactly the bytes it is given on one loopback TCP connection, for tests of
// what dl4cpp's HTTP servers (the training page, the inference server) do with requests no
// ordinary client would send, and a parser for the answers that come back.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace testutil {

class RawConnection {
 public:
  using Clock = std::chrono::steady_clock;

  // `source`: the client's loopback address, 127.0.0.1 unless given (as a host-order number in
  // 127.0.0.0/8). A client making connections by the hundred thousand spreads them over many
  // sources: each address has only some 28,000 ports, and each closed connection keeps its port
  // in TIME_WAIT for a minute.
  explicit RawConnection(int port, uint32_t source = INADDR_LOOPBACK)
      : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    if (fd_ < 0) throw std::runtime_error("socket() failed");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(source);
    if (source != INADDR_LOOPBACK &&
        ::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0)
      fail("bind() to a loopback source address");
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 &&
        !(errno == EINTR && connectedAfterInterruption()))
      fail("connect() to 127.0.0.1:" + std::to_string(port));
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // Sends `bytes`, reading what the server answers meanwhile (so neither side can block the
  // other), until all are sent, the server closes or refuses more, or `timeout` passes. Returns
  // the bytes sent.
  size_t send(std::string_view bytes,
              std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    return sendPieces(bytes.size(), timeout, [bytes](size_t at) { return bytes.substr(at); });
  }
  // Sends `count` bytes of `fill` as send() does, from a small buffer: a body of gigabytes is
  // never held in memory.
  size_t sendFilled(size_t count, char fill,
                    std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const std::string block(64 * 1024, fill);
    return sendPieces(count, timeout, [&block, count](size_t at) {
      return std::string_view(block).substr(0, std::min(block.size(), count - at));
    });
  }
  // No more bytes from the client (the server reads end of stream after what was sent).
  void finishSending() { ::shutdown(fd_, SHUT_WR); }

  // Reads until the server closes the connection or `timeout` passes; true when it closed.
  bool readUntilClosed(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!closed_ && Clock::now() < deadline) {
      pollfd fd{fd_, POLLIN, 0};
      if (::poll(&fd, 1, 20) > 0) receiveSome();
    }
    return closed_;
  }
  // Reads until `received()` holds `count` whole answers (see parseAnswers) or `timeout` passes.
  bool readAnswers(size_t count, std::chrono::milliseconds timeout);
  // Reads what has arrived, without waiting; true once the server has closed the connection.
  bool closedByServerNow() {
    pollfd fd{fd_, POLLIN, 0};
    while (!closed_ && ::poll(&fd, 1, 0) > 0) receiveSome();
    return closed_;
  }

  const std::string& received() const { return received_; }
  bool closedByServer() const { return closed_; }

 private:
  // connect() interrupted by a signal (libFuzzer's timer) goes on in the background.
  bool connectedAfterInterruption() {
    pollfd fd{fd_, POLLOUT, 0};
    while (::poll(&fd, 1, 10'000) < 0 && errno == EINTR) {
    }
    int error = 0;
    socklen_t length = sizeof(error);
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length);
    errno = error;
    return (fd.revents & POLLOUT) && error == 0;
  }

  // The loop of send() and sendFilled(): `piece(at)` gives bytes from offset `at` on (at least
  // one while at < total).
  template <typename Piece>
  size_t sendPieces(size_t total, std::chrono::milliseconds timeout, Piece piece) {
    const auto deadline = Clock::now() + timeout;
    size_t sent = 0;
    while (sent < total && !closed_ && Clock::now() < deadline) {
      pollfd fd{fd_, POLLIN | POLLOUT, 0};
      if (::poll(&fd, 1, 50) <= 0) continue;
      if (fd.revents & POLLIN) receiveSome();
      if (fd.revents & POLLOUT) {
        const std::string_view bytes = piece(sent);
        const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) sent += static_cast<size_t>(n);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) break;
      }
      if (fd.revents & (POLLERR | POLLHUP)) break;
    }
    return sent;
  }

  [[noreturn]] void fail(const std::string& what) {
    const std::string reason = std::strerror(errno);
    ::close(fd_);
    throw std::runtime_error(what + " failed: " + reason);
  }

  void receiveSome() {
    char buffer[64 * 1024];
    const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n > 0) received_.append(buffer, static_cast<size_t>(n));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
      closed_ = true;
  }

  int fd_;
  std::string received_;
  bool closed_ = false;
};

struct RawAnswer {
  int status = 0;
  std::string head;  // status line and headers
  std::string body;
  std::optional<std::string> header(std::string_view name) const {
    std::string lowerHead = head, lowerName = "\r\n" + std::string(name) + ":";
    for (auto* s : {&lowerHead, &lowerName})
      std::transform(s->begin(), s->end(), s->begin(),
                     [](unsigned char c) { return std::tolower(c); });
    const size_t at = lowerHead.find(lowerName);
    if (at == std::string::npos) return std::nullopt;
    const size_t from = head.find_first_not_of(' ', at + lowerName.size());
    return head.substr(from, head.find("\r\n", from) - from);
  }
};

// Splits what a server sent into answers: "HTTP/1.1 NNN ..." heads, each followed by
// Content-Length bytes of body, except where the next answer starts right away, or nothing
// follows on a closed connection (a HEAD request's answer, a 100 Continue). Throws
// std::runtime_error on anything else, and on a last answer cut short.
inline std::vector<RawAnswer> parseAnswers(std::string_view bytes, bool connectionClosed) {
  std::vector<RawAnswer> answers;
  size_t at = 0;
  while (at < bytes.size()) {
    if (bytes.substr(at, 9) != "HTTP/1.1 " || bytes.size() - at < 12)
      throw std::runtime_error("no status line at byte " + std::to_string(at));
    const size_t headEnd = bytes.find("\r\n\r\n", at);
    if (headEnd == std::string_view::npos) throw std::runtime_error("answer head cut short");
    RawAnswer answer;
    answer.head = std::string(bytes.substr(at, headEnd + 2 - at));
    answer.status = std::stoi(answer.head.substr(9, 3));
    at = headEnd + 4;
    const auto length = answer.header("Content-Length");
    const bool bodiless =
        bytes.substr(at, 9) == "HTTP/1.1 " || (connectionClosed && at == bytes.size());
    if (length && !bodiless) {
      const size_t n = std::stoul(*length);
      if (bytes.size() - at < n) throw std::runtime_error("answer body cut short");
      answer.body = std::string(bytes.substr(at, n));
      at += n;
    }
    answers.push_back(std::move(answer));
  }
  return answers;
}

inline bool RawConnection::readAnswers(size_t count, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    try {
      if (parseAnswers(received_, closed_).size() >= count) return true;
    } catch (const std::runtime_error&) {  // not whole yet
    }
    if (closed_ || Clock::now() >= deadline) return false;
    pollfd fd{fd_, POLLIN, 0};
    if (::poll(&fd, 1, 20) > 0) receiveSome();
  }
}

}  // namespace testutil
