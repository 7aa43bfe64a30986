// The output and check helpers of dl4cpp_cluster_check (Scenarios.h).
#include <fmt/format.h>

#include <cstdio>

#include "Scenarios.h"

namespace dl4cpp::cluster_check {

void say(int rank, std::string_view line) {
  std::printf("rank %d: %.*s\n", rank, static_cast<int>(line.size()), line.data());
  std::fflush(stdout);
}

bool Checks::expect(bool ok, std::string_view what, std::source_location where) {
  if (ok) {
    ++passed_;
  } else {
    ++failed_;
    say(rank_, fmt::format("FAILED: {} ({}:{})", what, where.file_name(), where.line()));
  }
  return ok;
}

int Checks::finish(std::string_view scenario) const {
  if (failed_ > 0) {
    say(rank_, fmt::format("{}: FAILED, {} of {} checks", scenario, failed_, failed_ + passed_));
    return 1;
  }
  say(rank_, fmt::format("{}: OK, {} checks", scenario, passed_));
  return 0;
}

}  // namespace dl4cpp::cluster_check
