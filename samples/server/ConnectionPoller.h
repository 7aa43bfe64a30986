#pragma once
// Watches, with one thread and poll(2), the connections that have no request being answered: new
// ones, keep-alive ones after an answer, and ones closing after an error answer. It reads each
// request head as it arrives and hands the connection on (`dispatch`) only once the head is whole,
// so a client that is slow, silent or sending too much costs a slot here and at most
// ServerLimits::maxHeadBytes of buffer, never an HTTP thread. What it enforces:
//   - idle connections (no byte of a next request) are closed after idleTimeout;
//   - a head must end within maxHeadBytes and maxHeaderLines (431) and arrive within
//     requestTimeout of its first byte (408);
//   - after an error answer the connection is shut for writing and drained (lingerTimeout,
//     maxLingerBytes).
#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "server/Connection.h"
#include "server/ServerLimits.h"

namespace samples::server {

class ConnectionPoller {
 public:
  using Dispatch = std::function<void(std::shared_ptr<Connection>)>;

  // `dispatch` is called on the poller's thread with a connection whose request head is whole
  // in pending(); it must not block.
  ConnectionPoller(const ServerLimits& limits, Dispatch dispatch);
  ~ConnectionPoller();
  ConnectionPoller(const ConnectionPoller&) = delete;
  ConnectionPoller& operator=(const ConnectionPoller&) = delete;

  // Waits for the next request on `connection` (a new one, or one whose request was answered;
  // bytes of the next request may already be pending). After stop(), closes it instead.
  void watch(std::shared_ptr<Connection> connection);
  // Sends `answer` (if not empty), shuts the connection for writing and discards what the client
  // still sends until it closes, lingerTimeout passes or maxLingerBytes were discarded, then
  // closes it.
  void closeAfter(std::shared_ptr<Connection> connection, std::string_view answer);

  void start();
  // Closes every connection it holds and ends its thread; connections handed to it later are
  // closed at once. Idempotent, callable from any thread.
  void stop();

 private:
  enum class Phase { AwaitingHead, Lingering };
  struct Watched {
    std::shared_ptr<Connection> connection;
    Phase phase;
    Connection::Clock::time_point deadline;
    size_t discarded = 0;  // Lingering: bytes read and dropped
  };

  void hand(Watched watched);
  void run();
  // Reads what arrived and decides: keep watching (true) or let go (dispatched or closed).
  bool advance(Watched& watched, bool readable);
  bool readHead(Watched& watched, bool readable);
  bool drain(Watched& watched, bool readable);
  void linger(Watched& watched, std::string_view answer);

  const ServerLimits limits_;
  const Dispatch dispatch_;
  const int wakeFd_;  // eventfd: new connections handed over, or stop
  std::mutex mutex_;
  std::vector<Watched> handed_;  // guarded by mutex_, taken over by the thread
  bool stopping_ = false;        // guarded by mutex_
  std::thread thread_;
};

}  // namespace samples::server
