// The scenarios of a program that initialises MPI itself, before asking for the cluster: it must
// have asked for MPI_THREAD_SERIALIZED, and it finalises MPI itself (dl4cpp then must not).
#include <fmt/format.h>
#include <mpi.h>

#include <vector>

#include "Scenarios.h"
#include "nn/core/Error.h"

namespace dl4cpp::cluster_check {

int programMpiSingle() {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Checks checks(rank);
  checks.expect(provided == MPI_THREAD_SINGLE, "MPI gave the level asked for");
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      parallel::MpiCluster::world();
      checks.expect(false, "world() accepted MPI at MPI_THREAD_SINGLE");
    } catch (const ClusterError& e) {
      say(rank, fmt::format("ClusterError: {}", e.what()));
      checks.expect(std::string_view(e.what()).find(fmt::format(
                        "the program initialised MPI at thread level {}, but dl4cpp needs "
                        "MPI_THREAD_SERIALIZED",
                        MPI_THREAD_SINGLE)) != std::string_view::npos,
                    "the ClusterError names the level given and the level needed");
    }
  }
  const int status = checks.finish("program-mpi-single");
  MPI_Finalize();
  return status;
}

int programMpiSerialized() {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  auto cluster = parallel::MpiCluster::world();
  say(*cluster, cluster->describe());
  Checks checks(*cluster);
  std::vector<double> ones(10, 1.0);
  cluster->allReduceSum(ones);
  checks.expect(ones == std::vector<double>(10, cluster->size()),
                "the cluster works in MPI the program started");
  // The program's collectives on MPI_COMM_WORLD do not mix with the cluster's (its own
  // communicator).
  int sum = 0;
  const int one = 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  checks.expect(sum == cluster->size(), "the program's own MPI_Allreduce still works");
  const int status = checks.finish("program-mpi-serialized");
  // The program's MPI, finalised by the program; dl4cpp's exit path must leave it alone (a second
  // MPI_Finalize would be an error that ends the job).
  MPI_Finalize();
  return status;
}

}  // namespace dl4cpp::cluster_check
