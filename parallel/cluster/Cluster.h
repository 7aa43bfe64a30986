#pragma once
// Cluster: the processes (ranks) one training run spans, and the few collectives that
// ParallelWrapper needs to keep their models equal (docs/cluster.md).
//
//   auto wrapper = ParallelWrapper::Builder(model).workers(2).averagingFrequency(3)
//                      .cluster(MpiCluster::world()).build();
//
// Every rank calls the same collectives in the same order, each with the same sizes; a
// collective returns once every rank has joined it. ParallelWrapper calls them from the thread
// that runs fit() only, one at a time.
//
// Failure. A collective that has not completed within timeout() (a rank died, hangs or never
// joined) throws ClusterError naming the operation and the timeout, and the cluster is broken
// from then on: every later collective throws ClusterError at once (an MPI collective cannot be
// cancelled, so none can safely start after one was abandoned).
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dl4cpp::parallel {

class Cluster {
 public:
  virtual ~Cluster() = default;

  virtual int rank() const = 0;  // 0 .. size() - 1
  virtual int size() const = 0;  // >= 1
  // "MPI rank 1 of 2 on host node7", for logs and errors.
  virtual std::string describe() const = 0;

  // Every rank's `mine` (the same length on every rank), concatenated in rank order.
  virtual std::vector<double> allGather(std::span<const double> mine) = 0;
  // Every rank's `mine`, which may differ in length from rank to rank (threshold-encoded
  // messages), concatenated in rank order; counts[r] is rank r's length.
  virtual std::vector<int32_t> allGatherVarying(std::span<const int32_t> mine,
                                                std::vector<int64_t>& counts) = 0;
  // values[i] = the sum over ranks of values[i], in place, on every rank.
  virtual void allReduceSum(std::span<float> values) = 0;
  virtual void allReduceSum(std::span<double> values) = 0;
  // values = rank `root`'s values, in place, on every rank.
  virtual void broadcast(std::span<float> values, int root) = 0;
  virtual void broadcast(std::span<double> values, int root) = 0;

  // How long one collective may wait for the other ranks. Default 300 s: a round waits for the
  // slowest rank's k minibatches, which must fit with room to spare.
  std::chrono::milliseconds timeout() const { return timeout_; }
  // ConfigError unless t > 0.
  void setTimeout(std::chrono::milliseconds t);
  // True once a collective has timed out (see above).
  virtual bool broken() const = 0;

 private:
  std::chrono::milliseconds timeout_{std::chrono::seconds(300)};
};

}  // namespace dl4cpp::parallel
