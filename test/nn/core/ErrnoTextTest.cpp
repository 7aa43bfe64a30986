// errnoText: strerror's text for error messages, safe to call from several threads.
#include <doctest/doctest.h>

#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "nn/core/ErrnoText.h"

using namespace dl4cpp;

TEST_CASE("errnoText gives the C library's text for an errno value") {
  CHECK(errnoText(ENOENT) == "No such file or directory");
  CHECK(errnoText(EACCES) == "Permission denied");
  CHECK(errnoText(987654) == "Unknown error 987654");
}

TEST_CASE("errnoText gives each thread its own value's text") {
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (size_t t = 0; t < mismatches.size(); ++t)
    threads.emplace_back([t, &mismatches] {
      const int err = 100000 + static_cast<int>(t);
      const std::string expected = "Unknown error " + std::to_string(err);
      for (int i = 0; i < 2000; ++i) mismatches[t] += errnoText(err) != expected;
    });
  for (auto& thread : threads) thread.join();
  for (int m : mismatches) CHECK(m == 0);
}
