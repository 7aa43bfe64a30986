#pragma once
// LayerStateCombiner: at every averaging, combines the replicas' layer state (running statistics
// and the like: MultiLayerNetwork::layerState()) segment by segment, each by its own rule
// (StateCombine in nn/conf/layers/LayerSpecs.h), and writes the result to every replica and the
// root. Replicas are weighted by the examples they trained on in the round; one that trained on
// none has no vote.
//
// Layer state is small (a few values per channel), so the coordinator thread combines it alone,
// in host buffers allocated once at construction: averaging allocates nothing, and the replicas
// may live on any device (their state is copied to the host and back).
#include <cstdint>
#include <vector>

#include "nn/api/Model.h"
#include "nn/tensor/Tensor.h"
#include "parallel/cluster/Cluster.h"

namespace dl4cpp::parallel {

class LayerStateCombiner {
 public:
  // The layout of every replica's layer state (they share the configuration).
  explicit LayerStateCombiner(std::vector<LayerStateSegment> layout, int replicas = 0);

  bool empty() const { return layout_.empty(); }

  // Combines replicaStates[r] weighted by examples[r] into replicaStates (each kept by a
  // PerReplica segment) and `root`. All-zero weights leave everything unchanged.
  void combine(const std::vector<Tensor>& replicaStates, const std::vector<int64_t>& examples,
               Tensor root);

  // combine() over every rank of `cluster` (a collective: every rank calls it, in the same
  // round): `examples` are this rank's replicas' and `total` counts the examples of every
  // replica of every rank (> 0). PerReplica segments of the root take rank 0's replica 0.
  void combineAcross(Cluster& cluster, const std::vector<Tensor>& replicaStates,
                     const std::vector<int64_t>& examples, int64_t total, Tensor root);

  // The combination of host buffers `states` (same layout) into `out`, by the segments' rules:
  // what combine() computes, exposed for tests.
  static void combineHost(const std::vector<LayerStateSegment>& layout,
                          const std::vector<Tensor>& states, const std::vector<int64_t>& examples,
                          Tensor& out);

 private:
  // This process's share of the combination, in doubles, one per state value: weighted sums
  // (of values, or of variance + mean^2), and replica 0's value where holdsReplicaZero (zeros
  // elsewhere), so the shares of all processes sum to the whole.
  static void partialHost(const std::vector<LayerStateSegment>& layout,
                          const std::vector<Tensor>& states, const std::vector<int64_t>& examples,
                          int64_t total, bool holdsReplicaZero, std::vector<double>& partial);
  // The combined state from the summed shares.
  static void finishHost(const std::vector<LayerStateSegment>& layout,
                         const std::vector<double>& partial, Tensor& out);
  void stage(const std::vector<Tensor>& replicaStates);
  void distribute(const std::vector<Tensor>& replicaStates, Tensor root);

  std::vector<LayerStateSegment> layout_;
  std::vector<Tensor> staged_;   // host copies of the replicas' state
  Tensor combined_;              // host result
  std::vector<double> partial_;  // shares, summed across ranks by combineAcross
};

}  // namespace dl4cpp::parallel
