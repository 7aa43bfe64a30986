#pragma once
// Checks that a reader refuses a FIFO instead of waiting on it for a writer that never comes.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <filesystem>
#include <future>
#include <string>
#include <thread>

namespace testutil {

// Creates a FIFO at `fifo` and runs `read` (which opens it) on another thread; returns the
// message of the exception E it throws. A reader that blocks fails the test after 5 s and is then
// released by writers opened and closed until it returns, so the test ends instead of hanging.
template <class E, class F>
std::string errorOnFifo(const std::filesystem::path& fifo, F read) {
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto result = std::async(std::launch::async, [&]() -> std::string {
    try {
      read();
    } catch (const E& e) {
      return e.what();
    } catch (const std::exception& e) {
      return std::string("wrong exception type: ") + e.what();
    }
    return "no exception";
  });
  if (result.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    FAIL_CHECK("the reader blocked on the FIFO " << fifo.string());
    while (result.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
      const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
      if (fd >= 0) ::close(fd);
    }
  }
  return result.get();
}

}  // namespace testutil
