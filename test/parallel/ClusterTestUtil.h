#pragma once
// Runs the ranks of an InProcessCluster on threads of the test, as the processes of an MPI job
// would run, and keeps what each rank threw.
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "parallel/cluster/InProcessCluster.h"

namespace testutil {

// body(rank, cluster) on `size` threads; returns each rank's exception (null where none).
inline std::vector<std::exception_ptr> runRanks(
    int size, const std::function<void(int, std::shared_ptr<dl4cpp::parallel::Cluster>)>& body) {
  auto ranks = dl4cpp::parallel::InProcessCluster::create(size);
  std::vector<std::exception_ptr> failures(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r, ranks[static_cast<size_t>(r)]);
      } catch (...) {
        failures[static_cast<size_t>(r)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  return failures;
}

// The message of `failure`, or "" when it is null or not a std::exception.
inline std::string messageOf(const std::exception_ptr& failure) {
  if (!failure) return "";
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "";
  }
}

}  // namespace testutil
