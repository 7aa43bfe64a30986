#pragma once
// The scenarios of dl4cpp_cluster_check (ClusterCheck.cpp): each runs on every rank of an MPI job
// that CTest starts (test/cluster/CMakeLists.txt) and returns the rank's exit status.
#include <source_location>
#include <string_view>

#include "parallel/cluster/MpiCluster.h"

namespace dl4cpp::cluster_check {

// Prints "rank R: ..." and flushes at once: a rank may be ended by MPI_Abort or a signal right
// after, and what it printed is what the test asserts.
void say(int rank, std::string_view line);
inline void say(const parallel::Cluster& cluster, std::string_view line) {
  say(cluster.rank(), line);
}

// Counts failed checks, printing each with its rank and line.
class Checks {
 public:
  explicit Checks(int rank) : rank_(rank) {}
  explicit Checks(const parallel::Cluster& cluster) : rank_(cluster.rank()) {}
  bool expect(bool ok, std::string_view what,
              std::source_location where = std::source_location::current());
  // 0 when every check passed (printing "<scenario>: OK, n checks"), else 1.
  int finish(std::string_view scenario) const;

 private:
  int rank_;
  int passed_ = 0;
  int failed_ = 0;
};

int collectives(parallel::MpiCluster& cluster);  // CollectiveScenarios.cpp
int singleton(parallel::MpiCluster& cluster);
int timeout(parallel::MpiCluster& cluster);  // FailureScenarios.cpp
int killedRank(parallel::MpiCluster& cluster);
int wrapperEqualsOneProcess(parallel::MpiCluster& cluster);  // WrapperScenarios.cpp
int wrapperGraphEqualsOneProcess(parallel::MpiCluster& cluster);
int wrapperCompressedEqualsOneProcess(parallel::MpiCluster& cluster);
int wrapperThrowingRank(parallel::MpiCluster& cluster);
int wrapperStop(parallel::MpiCluster& cluster);
int wrapperKilledRank(parallel::MpiCluster& cluster);
int programMpiSingle();  // ProgramMpiScenarios.cpp
int programMpiSerialized();

}  // namespace dl4cpp::cluster_check
