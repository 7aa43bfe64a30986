#include "server/ConnectionPoller.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <stdexcept>

#include "server/HttpAnswer.h"
#include "server/Sockets.h"

namespace samples::server {

using Clock = Connection::Clock;

ConnectionPoller::ConnectionPoller(const ServerLimits& limits, Dispatch dispatch)
    : limits_(limits), dispatch_(std::move(dispatch)), wakeFd_(makeEventFd()) {}

ConnectionPoller::~ConnectionPoller() {
  stop();
  ::close(wakeFd_);
}

void ConnectionPoller::start() {
  thread_ = std::thread([this] { run(); });
}

void ConnectionPoller::stop() {
  std::vector<Watched> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(handed_);
  }
  signalEventFd(wakeFd_);
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
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

void ConnectionPoller::run() {
  std::vector<Watched> watched;
  std::vector<pollfd> fds;
  std::vector<Clock::time_point> deadlines;
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

    fds.assign(1, pollfd{wakeFd_, POLLIN, 0});
    deadlines.clear();
    for (const Watched& w : watched) {
      fds.push_back(pollfd{w.connection->fd(), POLLIN, 0});
      deadlines.push_back(w.deadline);
    }
    const int timeout =
        deadlines.empty() ? -1 : pollTimeout(*std::min_element(deadlines.begin(), deadlines.end()));
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
    kept.reserve(watched.size());
    for (size_t i = 0; i < watched.size(); ++i)
      if (advance(watched[i], fds[i + 1].revents != 0)) kept.push_back(std::move(watched[i]));
    watched.swap(kept);
  }
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

bool ConnectionPoller::drain(Watched& watched, bool readable) {
  if (readable) {
    // One read per wake-up, so that a client flooding a closing connection cannot keep this
    // thread from the others.
    std::array<char, 64 * 1024> scratch;
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

}  // namespace samples::server
