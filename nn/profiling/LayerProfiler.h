#pragma once
// LayerProfiler: where the time of a training step goes, per layer and per phase.
//
//   auto profiler = std::make_shared<LayerProfiler>();
//   model.setProfiler(profiler);         // installs a ProfilingObserver on the model's backend
//   model.fit(iterator);
//   profiler->totals(2, ProfilePhase::BACKWARD_WEIGHTS).seconds;   // layer 2's dW/db time
//   model.setProfiler(nullptr);          // back to the bare backend: no cost at all
//
// Every backend op is timed by the ProfilingObserver and charged to the layer the network says is
// running (enterLayer) and to the phase the op belongs to. Ops the network runs outside any layer
// (gradient scaling, the l2 score term, the finite-gradient check) are charged to kNetwork.
// An op's FLOPs are counted analytically from its shapes (GEMM-like ops only), so achieved
// GFLOP/s can be read next to the time.
//
// Threading: like the network it profiles, a profiler is used by one thread at a time. Give each
// model its own profiler.
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace dl4cpp {

enum class ProfilePhase {
  FORWARD,              // convolution / inner product / pooling forward
  ACTIVATION_FORWARD,   // the layer's activation function
  LOSS,                 // the output layer's loss and its gradient
  ACTIVATION_BACKWARD,  // the activation's derivative applied to the incoming gradient
  BACKWARD_DATA,        // dL/dinput (convolution, inner product, pooling)
  BACKWARD_WEIGHTS,     // dL/dW, dL/db
  UPDATER,              // l2 + updater step over the layer's parameter segments
  OTHER,                // scaling, sums of squares (score term, gradient check)
};
inline constexpr int kProfilePhaseCount = 8;
std::string_view profilePhaseName(ProfilePhase phase);

// What one (layer, phase) cell accumulated.
struct PhaseTotals {
  double seconds = 0;
  int64_t calls = 0;  // backend ops recorded (one per iteration for most cells; UPDATER: one per
                      // parameter segment, i.e. W and b)
  double flops = 0;   // analytic FLOPs of those calls (0 for element-wise and memory-bound ops)
};

class LayerProfiler {
 public:
  // The scope of ops the network runs outside any layer.
  static constexpr int kNetwork = -1;

  // Called by MultiLayerNetwork before it runs a layer's ops (kNetwork for its own).
  void enterLayer(int layer) { current_ = layer; }
  int currentLayer() const { return current_; }

  // Charges one op to the current layer (ProfilingObserver calls it).
  void record(ProfilePhase phase, double seconds, double flops);
  // Called by MultiLayerNetwork once per completed fit() iteration.
  void iterationDone() { ++iterations_; }

  int64_t iterations() const { return iterations_; }
  // Layers seen so far: indices 0 .. numLayers()-1 (kNetwork is always available).
  int numLayers() const { return static_cast<int>(cells_.size()) - 1; }
  // Zero for a layer or phase that recorded nothing.
  PhaseTotals totals(int layer, ProfilePhase phase) const;
  // Sum over every layer, kNetwork and phase.
  double totalSeconds() const;
  // True when nothing was recorded since construction or the last reset().
  bool empty() const;
  // Forgets every record and the iteration count (e.g. after warm-up iterations).
  void reset();

 private:
  using LayerCells = std::array<PhaseTotals, kProfilePhaseCount>;
  std::vector<LayerCells> cells_{1};  // [0] is kNetwork, [i + 1] is layer i
  int current_ = kNetwork;
  int64_t iterations_ = 0;
};

}  // namespace dl4cpp
