#pragma once
// MpiCluster: the ranks of an MPI job (MPI_COMM_WORLD) as a Cluster, for training across processes
// and hosts (docs/cluster.md). Start the program under the MPI launcher, one process per rank:
//
//   mpirun -np 2 --hostfile hosts ./train        (or Slurm: srun -n 2 ./train)
//
//   auto cluster = dl4cpp::parallel::MpiCluster::world();
//   if (cluster->rank() == 0) ...
//
// MPI. world() initialises MPI (MPI_THREAD_SERIALIZED: dl4cpp calls MPI from one thread at a
// time, not always the same one) unless the program already did, and then finalises it when the
// process exits. A program that initialised MPI itself must have asked for MPI_THREAD_SERIALIZED
// or more, and finalises it itself. A build without MPI (DL4CPP_WITH_MPI=OFF, or no MPI found)
// has a world() that throws ClusterError.
//
// Collectives are MPI's non-blocking ones, waited on until timeout(): a rank that died, hangs or
// never joined becomes a ClusterError on the others instead of a hang, and the cluster is broken
// from then on (Cluster.h). A process that exits with its cluster broken ends the job with
// MPI_Abort (MPI_Finalize would wait for the abandoned collective forever), so mpirun reports the
// failure and stops the other ranks.
#include <memory>

#include "parallel/cluster/Cluster.h"

namespace dl4cpp::parallel {

class MpiCluster final : public Cluster {
 public:
  // The ranks of MPI_COMM_WORLD; the same object on every call. ClusterError when MPI cannot be
  // initialised, gives less than MPI_THREAD_SERIALIZED, or was not built in.
  static std::shared_ptr<MpiCluster> world();

  ~MpiCluster() override;
  MpiCluster(const MpiCluster&) = delete;
  MpiCluster& operator=(const MpiCluster&) = delete;

  int rank() const override;
  int size() const override;
  std::string describe() const override;

  std::vector<double> allGather(std::span<const double> mine) override;
  std::vector<int32_t> allGatherVarying(std::span<const int32_t> mine,
                                        std::vector<int64_t>& counts) override;
  void allReduceSum(std::span<float> values) override;
  void allReduceSum(std::span<double> values) override;
  void broadcast(std::span<float> values, int root) override;
  void broadcast(std::span<double> values, int root) override;

  bool broken() const override;

 private:
  struct State;  // MPI's handles and the broken flag; defined where mpi.h is included
  explicit MpiCluster(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace dl4cpp::parallel
