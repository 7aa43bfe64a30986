#pragma once
// Where a ComputationGraph keeps its activations and gradients: one arena per pass kind, each
// buffer at an offset chosen from its lifetime, so a buffer's memory is reused by buffers that
// live after its last reader (TVM's and XLA's liveness planning). Lifetimes are in the steps of a
// pass: a training step runs K items forward (times 0 .. K-1), computes the losses (time K) and
// runs them backward (times K+1 .. 2K); inference runs forward only.
//
// Sizes and offsets are per example and rounded up to 16 floats, so that with a batch of N every
// buffer is at offset * N in an arena of peak() * N floats, 64-byte aligned.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dl4cpp {

class ActivationPlan {
 public:
  struct Buffer {
    int64_t valuesPerExample = 0;  // before rounding
    int first = 0, last = 0;       // the times it is live, inclusive
  };

  // Places `buffers` (greedy: largest first, each at the lowest offset free for its lifetime).
  explicit ActivationPlan(const std::vector<Buffer>& buffers);
  ActivationPlan() = default;

  // Offset per example of buffer i.
  int64_t offset(size_t i) const { return offsets_[i]; }
  // Values per example the arena needs: the largest end of a placed buffer.
  int64_t peak() const { return peak_; }
  // Values per example all buffers would need each on its own (rounded as placed).
  int64_t total() const { return total_; }

  static int64_t rounded(int64_t values) { return (values + 15) / 16 * 16; }

 private:
  std::vector<int64_t> offsets_;
  int64_t peak_ = 0, total_ = 0;
};

}  // namespace dl4cpp
