#pragma once
// RoundCombine: what ParallelWrapper makes of its workers' parameters at the end of an averaging
// round. The wrapper forms the example-weighted mean of every worker's parameters (in one
// process slice by slice on the workers; across ranks as local sum -> all-reduce -> divide) and
// the policy turns it into the next global parameters, written to the root and every replica.
// The same policy object serves one process and a cluster: it only ever sees the finished mean,
// which is the same on every rank, so every rank takes the same step.
//
//  - MeanCombine: the mean is the result. It is written straight into the root and the replicas
//    (plain averaging, DL4J's ParameterAveragingTrainingMaster).
//  - OuterUpdaterCombine: the mean is staged in a host buffer, and the global parameters (the
//    root's, unchanged since the round started) move by an updater applied to the outer gradient
//    `global - mean` (DiLoCo: Douillard et al., "DiLoCo: Distributed Low-Communication Training of
//    Language Models", 2023; Nesterovs(0.7, 0.9) there). Sgd(1.0) is plain averaging up to float
//    rounding. The updater keeps its own state (Nesterov's velocity, Adam's moments) over the
//    trainable parameters and counts its own steps (schedules and Adam's bias correction run on
//    that count); both are saved beside every checkpoint (saveState / loadState).
//
// Layer state and the inner updaters' state are combined as with plain averaging, whatever the
// policy. Frozen parameters (the start of the buffer) are never touched.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nn/backend/OpTypes.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {
class DeviceContext;
}

namespace dl4cpp::parallel {

class Cluster;

class RoundCombine {
 public:
  virtual ~RoundCombine() = default;

  // Where the round's mean of the parameters is to be written, given `everyCopy` (the root's and
  // every replica's parameters): those themselves, or a staging buffer of the policy's.
  virtual std::vector<Tensor>& meanDestinations(std::vector<Tensor>& everyCopy) = 0;
  // Called on the coordinator once the whole mean is in place (in every slice): writes the next
  // global parameters into `root` and every tensor of `replicas`. `epoch`: the root's, for
  // epoch-based schedules.
  virtual void finish(Tensor root, const std::vector<Tensor>& replicas, int epoch) = 0;

  // State a resumed run needs to continue exactly (empty when the policy has none), as a small
  // versioned record with a CRC; loadState reads it back (DataFormatError, ChecksumError,
  // VersionError or DataMismatchError naming `source` when it does not fit this policy).
  virtual std::vector<std::byte> saveState() const { return {}; }
  virtual void loadState(std::span<const std::byte> bytes, const std::string& source);
  virtual bool hasState() const { return false; }
  // Replaces this rank's state with rank 0's (a collective when hasState()).
  virtual void broadcastState(Cluster& cluster) { (void)cluster; }
};

class MeanCombine final : public RoundCombine {
 public:
  std::vector<Tensor>& meanDestinations(std::vector<Tensor>& everyCopy) override {
    return everyCopy;
  }
  void finish(Tensor, const std::vector<Tensor>&, int) override {}
};

class OuterUpdaterCombine final : public RoundCombine {
 public:
  // `numParams` parameters, of which the first `frozen` are never updated; the step runs on the
  // host with `threads` threads.
  OuterUpdaterCombine(UpdaterParams updater, int64_t numParams, int64_t frozen, int threads);
  ~OuterUpdaterCombine() override;

  std::vector<Tensor>& meanDestinations(std::vector<Tensor>& everyCopy) override;
  void finish(Tensor root, const std::vector<Tensor>& replicas, int epoch) override;

  std::vector<std::byte> saveState() const override;
  void loadState(std::span<const std::byte> bytes, const std::string& source) override;
  bool hasState() const override { return true; }
  void broadcastState(Cluster& cluster) override;

  const UpdaterParams& updater() const { return updater_; }
  int64_t steps() const { return steps_; }
  // stateSizePerParam() blocks of (numParams - frozen) floats, in the updater's own layout.
  const Tensor& state() const { return state_; }

 private:
  UpdaterParams updater_;
  int64_t frozen_;
  int64_t steps_ = 0;
  Tensor state_;                        // host
  Tensor mean_;                         // host, every parameter; then the outer gradient
  Tensor global_;                       // host copy of the root's parameters when those are not
  std::vector<Tensor> destinations_;    // {mean_}
  std::unique_ptr<DeviceContext> ctx_;  // the host backend that takes the step
};

// The policy a wrapper with (or without: null) an outer updater combines its rounds with.
std::unique_ptr<RoundCombine> makeRoundCombine(const UpdaterParams* outerUpdater, int64_t numParams,
                                               int64_t frozen, int threads);

}  // namespace dl4cpp::parallel
