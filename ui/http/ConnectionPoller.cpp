#include "ui/http/ConnectionPoller.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <stdexcept>
#include <thread>

#include "ui/http/ErrorAnswer.h"
#include "ui/http/Sockets.h"

namespace dl4cpp::http {
namespace {

using Clock = Connection::Clock;

// Connections accepted per wake-up: a flood of them cannot keep the poller from the others.
constexpr int kAcceptsPerWakeUp = 64;
// How long accepting pauses when accept() fails for want of file descriptors or memory.
constexpr std::chrono::milliseconds kAcceptPause{100};

// accept() errors that belong to the connection being accepted (Linux passes pending network
// errors of the new socket on, and a client may reset before it is accepted): the next one may
// be fine.
bool connectionError(int error) {
  switch (error) {
    case EINTR:
    case ECONNABORTED:
    case EPROTO:
    case ENOPROTOOPT:
    case EHOSTDOWN:
    case ENONET:
    case EHOSTUNREACH:
    case EOPNOTSUPP:
    case ENETDOWN:
    case ENETUNREACH:
      return true;
    default:
      return false;
  }
}

}  // namespace

ConnectionPoller::ConnectionPoller(const ServerLimits& limits, Dispatch dispatch)
    : limits_(limits),
      dispatch_(std::move(dispatch)),
      headScanner_(limits.maxHeadBytes, limits.maxHeaderLines),
      wakeFd_(makeEventFd()) {}

ConnectionPoller::~ConnectionPoller() {
  stop();
  ::close(wakeFd_);
}

void ConnectionPoller::stop() {
  std::vector<Watched> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(handed_);
  }
  signalEventFd(wakeFd_);
}

void ConnectionPoller::watch(std::shared_ptr<Connection> connection) {
  const auto deadline = connection->pending().empty()
                            ? Clock::now() + limits_.idleTimeout
                            : connection->requestStart + limits_.requestTimeout;
  hand({std::move(connection), Phase::AwaitingHead, deadline});
}

void ConnectionPoller::closeAfter(std::shared_ptr<Connection> connection, std::string_view answer) {
  Watched watched{std::move(connection), Phase::Lingering, {}};
  linger(watched, answer);
  hand(std::move(watched));
}

void ConnectionPoller::hand(Watched watched) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;  // `watched` goes out of scope: the connection closes
    handed_.push_back(std::move(watched));
  }
  signalEventFd(wakeFd_);
}

void ConnectionPoller::run(int listenFd) {
  std::vector<Watched> watched;
  std::vector<pollfd> fds;
  for (;;) {
    std::vector<Watched> arrived;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) break;
      arrived.swap(handed_);
    }
    // A connection may arrive with its next head already pending (pipelined requests).
    for (Watched& w : arrived)
      if (advance(w, false)) watched.push_back(std::move(w));

    const bool accepting = Clock::now() >= acceptPausedUntil_;
    // poll() skips entries with a negative descriptor.
    fds.assign({pollfd{wakeFd_, POLLIN, 0}, pollfd{accepting ? listenFd : -1, POLLIN, 0}});
    auto wakeAt = accepting ? Clock::time_point::max() : acceptPausedUntil_;
    for (const Watched& w : watched) {
      fds.push_back(pollfd{w.connection->fd(), POLLIN, 0});
      wakeAt = std::min(wakeAt, w.deadline);
    }
    const int timeout = wakeAt == Clock::time_point::max() ? -1 : pollTimeout(wakeAt);
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      // Only a shortage (ENOMEM) gets here: the connections keep their deadlines; try again.
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      for (pollfd& fd : fds) fd.revents = 0;
    }
    if (fds[0].revents != 0) {
      uint64_t count = 0;
      [[maybe_unused]] const ssize_t read = ::read(wakeFd_, &count, sizeof(count));
    }
    std::vector<Watched> kept;
    kept.reserve(watched.size() + kAcceptsPerWakeUp);
    for (size_t i = 0; i < watched.size(); ++i)
      if (advance(watched[i], fds[i + 2].revents != 0)) kept.push_back(std::move(watched[i]));
    watched.swap(kept);
    if (fds[1].revents != 0) accept(listenFd, watched);
  }
}

void ConnectionPoller::accept(int listenFd, std::vector<Watched>& watched) {
  for (int i = 0; i < kAcceptsPerWakeUp; ++i) {
    const int fd = ::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (connectionError(errno)) continue;
      // EMFILE, ENFILE, ENOBUFS, ENOMEM: retrying at once would spin until a descriptor or memory
      // is freed, and take every one freed from the rest of the process.
      acceptPausedUntil_ = Clock::now() + kAcceptPause;
      return;
    }
    // Answers are small writes: without TCP_NODELAY, Nagle's algorithm holds each one until the
    // client's delayed ACK, about 40 ms per request on keep-alive connections.
    const int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    std::shared_ptr<Connection> connection;
    try {
      connection = std::make_shared<Connection>(fd, openConnections_, headScanner_);
    } catch (const std::exception&) {
      ::close(fd);
      continue;
    }
    if (openConnections_ > limits_.maxConnections && !evictOne(watched)) {
      connection->sendWithoutWaiting(closingErrorAnswer(
          503, fmt::format("the server has {} connections open, its limit, each with a request "
                           "under way",
                           limits_.maxConnections)));
      continue;  // `connection` goes out of scope: closed
    }
    watched.push_back(
        {std::move(connection), Phase::AwaitingHead, Clock::now() + limits_.idleTimeout});
  }
}

bool ConnectionPoller::evictOne(std::vector<Watched>& watched) {
  auto soonest = watched.end();
  for (auto w = watched.begin(); w != watched.end(); ++w) {
    const bool evictable = w->phase == Phase::Lingering || w->connection->pending().empty();
    if (evictable && (soonest == watched.end() || w->deadline < soonest->deadline)) soonest = w;
  }
  if (soonest == watched.end()) return false;
  *soonest = std::move(watched.back());
  watched.pop_back();
  return true;
}

bool ConnectionPoller::advance(Watched& watched, bool readable) {
  // Whatever fails for one connection (an allocation, the dispatch) ends that connection only.
  try {
    if (watched.phase == Phase::AwaitingHead) return readHead(watched, readable);
    return drain(watched, readable);
  } catch (const std::exception&) {
    return false;
  }
}

bool ConnectionPoller::drain(Watched& watched, bool readable) const {
  if (readable) {
    // One read per wake-up, so that a client flooding a closing connection cannot keep this
    // thread from the others.
    std::array<char, size_t{64} * 1024> scratch{};
    const ssize_t n =
        ::recv(watched.connection->fd(), scratch.data(), scratch.size(), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && !wouldBlock())) return false;
    watched.discarded += static_cast<size_t>(std::max<ssize_t>(n, 0));
  }
  return Clock::now() < watched.deadline && watched.discarded < limits_.maxLingerBytes;
}

bool ConnectionPoller::readHead(Watched& watched, bool readable) {
  Connection& connection = *watched.connection;
  const auto now = Clock::now();
  if (readable && connection.pending().size() < limits_.maxHeadBytes) {
    const bool first = connection.pending().empty();
    const ssize_t n = connection.receive(limits_.maxHeadBytes - connection.pending().size());
    if (n == 0 || (n < 0 && !wouldBlock())) return false;  // closed or failed: nothing to answer
    if (n > 0 && first) {
      connection.requestStart = now;
      watched.deadline = now + limits_.requestTimeout;
    }
  }
  switch (connection.head.scan(connection.pending())) {
    case RequestHeadScanner::State::Complete:
      dispatch_(std::move(watched.connection));
      return false;
    case RequestHeadScanner::State::TooManyLines:
      linger(watched,
             closingErrorAnswer(431, fmt::format("the request has more than {} header lines",
                                                 limits_.maxHeaderLines)));
      return true;
    case RequestHeadScanner::State::TooLong:
      linger(watched,
             closingErrorAnswer(431, fmt::format("the request line and headers exceed {} bytes",
                                                 limits_.maxHeadBytes)));
      return true;
    case RequestHeadScanner::State::Incomplete:
      break;
  }
  if (now < watched.deadline) return true;
  if (connection.pending().empty()) return false;  // idle keep-alive connection: just close
  linger(watched,
         closingErrorAnswer(408, fmt::format("the request head did not arrive within {} ms",
                                             limits_.requestTimeout.count())));
  return true;
}

void ConnectionPoller::linger(Watched& watched, std::string_view answer) {
  Connection& connection = *watched.connection;
  if (!answer.empty()) connection.sendWithoutWaiting(answer);
  ::shutdown(connection.fd(), SHUT_WR);
  connection.consume(connection.pending().size());
  watched.phase = Phase::Lingering;
  watched.deadline = Clock::now() + limits_.lingerTimeout;
}

}  // namespace dl4cpp::http
