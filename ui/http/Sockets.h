#pragma once
// The system calls the connection layer repeats (ConnectionPoller, RequestStream,
// BoundedHttpServer), each with the one way it is used there.
#include <chrono>

namespace dl4cpp::http {

// A non-blocking, close-on-exec eventfd; throws std::system_error when none can be made.
int makeEventFd();
// Makes the eventfd `fd` readable (it stays so until read).
void signalEventFd(int fd);
// After a non-blocking recv() or send() returned -1: whether it should simply be tried again.
bool wouldBlock();
// poll()'s timeout for waiting until `deadline`: milliseconds, rounded up, within 0..60000.
int pollTimeout(std::chrono::steady_clock::time_point deadline);

}  // namespace dl4cpp::http
