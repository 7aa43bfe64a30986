#pragma once
// InProcessCluster: a cluster whose ranks are threads of one process, each holding its own handle.
// It runs the same protocol as MpiCluster (every rank calls the same collectives in the same order)
// with nothing but a mutex between the ranks, so cluster training can be tested, and raced under
// ThreadSanitizer, in an ordinary unit test; and a rank that stops calling shows what a dead one
// does to the others (a ClusterError after the timeout).
//
// It also checks the protocol, which MPI does not: ranks that call different collectives, or the
// same one with different sizes, all get a ClusterError naming both calls.
//
//   auto ranks = InProcessCluster::create(2);
//   std::thread other([&] { train(ranks[1]); });
//   train(ranks[0]);
//
// Sums are formed in rank order, so results are deterministic.
#include <memory>
#include <vector>

#include "parallel/cluster/Cluster.h"

namespace dl4cpp::parallel {

class InProcessCluster final : public Cluster {
 public:
  // `size` handles, rank 0 first; ConfigError unless size >= 1.
  static std::vector<std::shared_ptr<Cluster>> create(int size);

  int rank() const override { return rank_; }
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

  struct Shared;  // the rendezvous every rank's handle points to
  InProcessCluster(std::shared_ptr<Shared> shared, int rank);

 private:
  template <typename T>
  void reduce(std::span<T> values, const char* type);
  template <typename T>
  void bcast(std::span<T> values, int root, const char* type);

  std::shared_ptr<Shared> shared_;
  int rank_;
};

}  // namespace dl4cpp::parallel
