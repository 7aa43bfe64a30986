// What a fork-join phase of WorkerPool (ParallelWrapper's workers) costs beyond its work: every
// worker busy for a fixed time (spinning on the clock, no memory traffic), `--phases` phases back
// to back as ParallelWrapper runs them, for phase lengths around LeNet's (an averaging phase takes
// about 0.5 ms, a training phase of k = 1 about 12 ms). The overhead is the time per run() less
// the work: waking the workers, and waking the caller when the last one finishes. Median of
// --repeats runs.
//   bench_worker_pool [--workers 2] [--repeats 5]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <vector>

#include "Median.h"
#include "SampleSupport.h"
#include "parallel/WorkerPool.h"

using bench::median;

namespace {

using Clock = std::chrono::steady_clock;
using Milliseconds = std::chrono::duration<double, std::milli>;

void busyFor(Milliseconds work) {
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(work);
  while (Clock::now() < until) {
  }
}

}  // namespace

int main(int argc, char** argv) try {
  const samples::SampleOptions options(argc, argv,
                                       {{"workers", "threads in the pool (default 2)"},
                                        {"repeats", "measurements per phase length (default 5)"}});
  const int workers = static_cast<int>(options.getInt("workers", 2));
  const int repeats = static_cast<int>(options.getInt("repeats", 5));
  dl4cpp::parallel::WorkerPool pool(workers);
  std::cout << fmt::format(
      "WorkerPool of {} workers, median of {} runs\n{:>10} {:>8} {:>14} {:>14}\n", workers, repeats,
      "phase ms", "phases", "run() ms", "overhead us");
  for (const double phase : {0.0, 0.5, 2.0, 12.0, 36.0}) {
    const int phases = phase < 1 ? 2000 : phase < 10 ? 500 : 100;
    const Milliseconds work(phase);
    std::vector<double> perPhase;
    for (int r = 0; r < repeats; ++r) {
      const auto start = Clock::now();
      for (int p = 0; p < phases; ++p) pool.run([&](int) { busyFor(work); });
      perPhase.push_back(Milliseconds(Clock::now() - start).count() / phases);
    }
    const double ms = median(perPhase);
    std::cout << fmt::format("{:>10.1f} {:>8} {:>14.4f} {:>14.1f}\n", phase, phases, ms,
                             (ms - phase) * 1e3);
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_worker_pool: " << e.what() << "\n";
  return 1;
}
