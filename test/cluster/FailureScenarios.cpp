// The scenarios where a rank fails: one never joins (timeout), one is killed (killed-rank). What
// the job must then do is asserted by test/cluster/expect-job-failure.sh, from the ranks' output
// and mpirun's exit status.
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <thread>
#include <vector>

#include "Scenarios.h"
#include "nn/core/Error.h"

namespace dl4cpp::cluster_check {

namespace {
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}
bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}
}  // namespace

// Rank 1 never joins; rank 0's all-reduce must end in ClusterError after the 2 s timeout, and
// every later collective at once. Rank 0 then exits with the cluster broken, which ends the job
// through MPI_Abort: the wrapper expects mpirun to fail, and rank 0's "timeout: OK".
int timeout(parallel::MpiCluster& c) {
  Checks checks(c);
  if (!checks.expect(c.size() == 2, "timeout runs on 2 ranks")) return checks.finish("timeout");
  c.setTimeout(2s);
  if (c.rank() == 1) {
    say(c, "not joining; rank 0's abort is to end this process");
    std::this_thread::sleep_for(60s);
    say(c, "FAILED: still running 60 s later: rank 0's MPI_Abort did not end the job");
    return 1;
  }

  std::vector<float> values(431080, 1.0f);
  Clock::time_point start = Clock::now();
  try {
    c.allReduceSum(values);
    checks.expect(false, "allReduceSum completed without rank 1");
  } catch (const ClusterError& e) {
    const double waited = secondsSince(start);
    say(c, fmt::format("ClusterError after {:.3f} s: {}", waited, e.what()));
    checks.expect(waited >= 2.0 && waited < 3.5, "the ClusterError comes 2 s after the call");
    checks.expect(contains(e.what(), "MPI rank 0 of 2") &&
                      contains(e.what(), "allReduceSum of 431080 floats") &&
                      contains(e.what(), "within 2 s"),
                  "the message names the rank, the operation, its size and the timeout");
  }
  checks.expect(c.broken(), "the cluster is broken after the timeout");

  for (int op = 0; op < 2; ++op) {
    start = Clock::now();
    try {
      if (op == 0)
        c.broadcast(values, 0);
      else
        c.allGather(std::vector<double>{1.0});
      checks.expect(false, "a collective on a broken cluster completed");
    } catch (const ClusterError& e) {
      const double waited = secondsSince(start);
      say(c, fmt::format("then ClusterError after {:.6f} s: {}", waited, e.what()));
      checks.expect(waited < 0.05, "a collective on a broken cluster fails at once");
      checks.expect(contains(e.what(),
                             "refused: the cluster is broken (allReduceSum of 431080 "
                             "floats did not complete within 2 s"),
                    "its message says the cluster is broken, and by what");
    }
  }
  return checks.finish("timeout");
}

// Rank 1 kills itself with SIGKILL between all-reduces of LeNet's size. Under mpirun the launcher
// ends the job within about a second; a launcher that lets rank 0 run on (mpirun
// --enable-recovery) leaves it to the 5 s timeout, after which rank 0 reports its ClusterError.
int killedRank(parallel::MpiCluster& c) {
  Checks checks(c);
  if (!checks.expect(c.size() == 2, "killed-rank runs on 2 ranks"))
    return checks.finish("killed-rank");
  c.setTimeout(5s);
  std::vector<float> values(431080, 1.0f);
  const Clock::time_point start = Clock::now();
  try {
    for (int i = 0; i < 1000; ++i) {
      if (c.rank() == 1 && i == 20) {
        say(c, "raising SIGKILL after 20 all-reduces");
        std::raise(SIGKILL);
      }
      c.allReduceSum(values);
    }
    checks.expect(false, "1000 all-reduces completed although rank 1 was killed after 20");
  } catch (const ClusterError& e) {
    say(c, fmt::format("ClusterError after {:.3f} s: {}", secondsSince(start), e.what()));
    checks.expect(contains(e.what(), "MPI rank 0 of 2"), "the message names the rank");
  }
  return checks.finish("killed-rank");
}

}  // namespace dl4cpp::cluster_check
