#pragma once
// Mask bookkeeping the recurrent wrapper layers (LastTimeStep, Bidirectional) share. Masks are
// host tensors (N, T), 1 for a real step (RecurrentOps.h), so these run on the host whatever the
// device of the sequences. Private to the library (not installed).
#include <cstdint>

#include "nn/tensor/Tensor.h"

namespace dl4cpp::detail {

// A mask (N, T) with one 1 per example, at its last real step (the last 1 of `mask`), or at the
// last step when `mask` is null or empty or the example has no real step.
Tensor lastStepMask(const Tensor* mask, int64_t n, int64_t t);

// The mask of the sequences RecurrentOps::reverseSteps(x, mask, .) gives: each row reversed within
// its span from its first to its last 1 (the same as `mask` when each row's real steps are one
// run, as padding makes them). Empty when `mask` is.
Tensor reverseMask(const Tensor& mask);

}  // namespace dl4cpp::detail
