#pragma once
// Accepts connections and watches, with one thread and poll(2), those that have no request being
// answered: new ones, keep-alive ones after an answer, and ones closing after an error answer. It
// reads each request head as it arrives and hands the connection on (`dispatch`) only once the
// head is whole, so a client that is slow, silent or sending too much costs a slot here and at
// most ServerLimits::maxHeadBytes of buffer, never an HTTP thread. What it enforces:
//   - at most maxConnections connections (sockets) are open: one arriving at the limit replaces
//     the connection that would be closed soonest anyway, idle or closing, or is answered 503;
//   - idle connections (no byte of a next request) are closed after idleTimeout;
//   - a head must end within maxHeadBytes and maxHeaderLines (431) and arrive within
//     requestTimeout of its first byte (408);
//   - after an error answer the connection is shut for writing and drained (lingerTimeout,
//     maxLingerBytes).
// When accept() fails for want of file descriptors or memory, accepting pauses for a moment
// instead of retrying at once: the connections wait in the listening socket's backlog.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "ui/ServerLimits.h"
#include "ui/http/Connection.h"

namespace dl4cpp::http {

class ConnectionPoller {
 public:
  using Dispatch = std::function<void(std::shared_ptr<Connection>)>;

  // `dispatch` is called on the poller's thread with a connection whose request head is whole
  // in pending(); it must not block.
  ConnectionPoller(const ServerLimits& limits, Dispatch dispatch);
  ~ConnectionPoller();
  ConnectionPoller(const ConnectionPoller&) = delete;
  ConnectionPoller& operator=(const ConnectionPoller&) = delete;

  // Accepts connections on `listenFd` (a listening, non-blocking socket) and watches them, on
  // the calling thread, until stop(); then closes every connection it holds. Returns at once when
  // stop() came first. Every Connection must be destroyed before the poller.
  void run(int listenFd);
  // Waits for the next request on `connection` (one whose request was answered; bytes of the
  // next request may already be pending). After stop(), closes it instead.
  void watch(std::shared_ptr<Connection> connection);
  // Sends `answer` (if not empty), shuts the connection for writing and discards what the client
  // still sends until it closes, lingerTimeout passes or maxLingerBytes were discarded, then
  // closes it.
  void closeAfter(std::shared_ptr<Connection> connection, std::string_view answer);
  // Makes run() return; connections handed to the poller later are closed at once. Idempotent,
  // callable from any thread.
  void stop();

  // Connections open now, those being answered included.
  size_t openConnections() const { return openConnections_; }

 private:
  enum class Phase { AwaitingHead, Lingering };
  struct Watched {
    std::shared_ptr<Connection> connection;
    Phase phase;
    Connection::Clock::time_point deadline;
    size_t discarded = 0;  // Lingering: bytes read and dropped
  };

  void hand(Watched watched);
  // Accepts what the listening socket holds (a bounded number at a time) into `watched`.
  void accept(int listenFd, std::vector<Watched>& watched);
  // Closes the watched connection that would be closed soonest anyway (lingering, or waiting for
  // a next request); false when every one has a request under way.
  static bool evictOne(std::vector<Watched>& watched);
  // Reads what arrived and decides: keep watching (true) or let go (dispatched or closed).
  bool advance(Watched& watched, bool readable);
  bool readHead(Watched& watched, bool readable);
  bool drain(Watched& watched, bool readable) const;
  void linger(Watched& watched, std::string_view answer);

  const ServerLimits limits_;
  const Dispatch dispatch_;
  const RequestHeadScanner headScanner_;
  const int wakeFd_;  // eventfd: connections handed over, or stop
  std::atomic<size_t> openConnections_{0};
  Connection::Clock::time_point acceptPausedUntil_{};  // run()'s thread only
  std::mutex mutex_;
  std::vector<Watched> handed_;  // guarded by mutex_, taken over by run()
  bool stopping_ = false;        // guarded by mutex_
};

}  // namespace dl4cpp::http
