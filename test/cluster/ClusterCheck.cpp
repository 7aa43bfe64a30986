// dl4cpp_cluster_check SCENARIO: one rank of a check of the MPI transport, started by CTest under
// mpirun (test/cluster/CMakeLists.txt says which scenario expects what). New scenarios (for
// example ParallelWrapper across ranks) go into the table below and get a CTest of their own.
#include <cstdio>
#include <exception>
#include <string_view>
#include <typeinfo>

#include "Scenarios.h"
#include "nn/core/Error.h"
#include "parallel/cluster/MpiCluster.h"

namespace {

using namespace dl4cpp;
using Run = int (*)(parallel::MpiCluster&);
using RunOwnMpi = int (*)();

// `run` gets MpiCluster::world(); a scenario that starts MPI itself has `runOwnMpi` instead.
struct Scenario {
  std::string_view name;
  Run run;
  std::string_view what;
  RunOwnMpi runOwnMpi = nullptr;
};

constexpr Scenario kScenarios[] = {
    {"collectives", cluster_check::collectives,
     "gather order, exact sums, broadcast from rank 1, > 1M floats, late arrival, describe()"},
    {"singleton", cluster_check::singleton,
     "without mpirun: world() is rank 0 of 1 and every collective returns its input"},
    {"timeout", cluster_check::timeout,
     "rank 1 never joins: rank 0 gets ClusterError within the timeout, then at once"},
    {"killed-rank", cluster_check::killedRank,
     "rank 1 SIGKILLs itself between all-reduces: the launcher must end the job"},
    {"wrapper-equals-one-process", cluster_check::wrapperEqualsOneProcess,
     "ParallelWrapper, N ranks x 1 worker on MNIST: the same model on every rank, equal to 1 "
     "process x N workers (2 ranks: bit for bit)"},
    {"wrapper-graph-equals-one-process", cluster_check::wrapperGraphEqualsOneProcess,
     "ParallelWrapper, N ranks x 1 worker training a residual ComputationGraph on MNIST: the same "
     "graph on every rank, equal to 1 process x N workers (2 ranks: bit for bit)"},
    {"wrapper-compressed-equals-one-process", cluster_check::wrapperCompressedEqualsOneProcess,
     "ParallelWrapper, 2 ranks x 1 worker sharing threshold-encoded gradients on MNIST: equal to "
     "1 process x 2 workers bit for bit"},
    {"wrapper-throwing-rank", cluster_check::wrapperThrowingRank,
     "rank 1's data throws: its fit() rethrows, the others' end with a ClusterError naming it"},
    {"wrapper-stop", cluster_check::wrapperStop,
     "stopFit() on rank 1 stops every rank after the same round, with the same model"},
    {"wrapper-killed-rank", cluster_check::wrapperKilledRank,
     "rank 1 SIGKILLs itself mid-fit: the launcher ends the job (or rank 0 times out)"},
    {"program-mpi-single", nullptr,
     "the program initialised MPI at MPI_THREAD_SINGLE: world() is a ClusterError",
     cluster_check::programMpiSingle},
    {"program-mpi-serialized", nullptr,
     "the program initialised MPI at MPI_THREAD_SERIALIZED: world() works, the program finalises",
     cluster_check::programMpiSerialized},
};

int usage() {
  std::fprintf(stderr, "usage: dl4cpp_cluster_check SCENARIO (run under mpirun)\n");
  for (const Scenario& s : kScenarios)
    std::fprintf(stderr, "  %-22.*s %.*s\n", static_cast<int>(s.name.size()), s.name.data(),
                 static_cast<int>(s.what.size()), s.what.data());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return usage();
  const std::string_view name = argv[1];
  for (const Scenario& s : kScenarios) {
    if (s.name != name) continue;
    try {
      if (s.runOwnMpi != nullptr) return s.runOwnMpi();
      parallel::MpiCluster& cluster = *parallel::MpiCluster::world();
      // Which rank ran where: scripts/test-cluster-netns.sh checks it.
      cluster_check::say(cluster, cluster.describe());
      return s.run(cluster);
    } catch (const DataNotFoundError& e) {
      // The MNIST scenarios where scripts/get-mnist.sh has not run: CTest's skip.
      std::printf("skipped: %s: %s\n", argv[1], e.what());
      std::fflush(stdout);
      return 77;
    } catch (const std::exception& e) {
      std::printf("FAILED: %s: uncaught %s: %s\n", argv[1], typeid(e).name(), e.what());
      std::fflush(stdout);
      return 1;
    }
  }
  std::fprintf(stderr, "dl4cpp_cluster_check: no scenario '%s'\n", argv[1]);
  return usage();
}
