#pragma once
// Step bookkeeping the recurrent wrapper layers (LastTimeStep, Bidirectional, MaskZeroLayer) share:
// masks are host tensors (N, T), 1 for a real step (RecurrentOps.h). The sequences these helpers
// read and write are host tensors too, as the recurrent ops' are (a recurrent layer on a device
// without recurrent ops throws a BackendError first); a device tensor is a BackendError. Private
// to the library (not installed).
#include <cstdint>
#include <vector>

#include "nn/tensor/Tensor.h"

namespace dl4cpp::detail {

// A mask (N, T) with one 1 per example, at its last real step (the last 1 of `mask`), or at the
// last step when `mask` is null or empty or the example has no real step.
Tensor lastStepMask(const Tensor* mask, int64_t n, int64_t t);

// The span of real steps of each example, [first, last], from the first to the last 1 of the mask
// (every step without one; an example without real steps keeps first > last).
struct StepSpans {
  std::vector<int64_t> first, last;
};
StepSpans stepSpans(const Tensor* mask, int64_t n, int64_t t);

// y (N, C, T) = x with each example's steps reversed within its span (steps outside it are
// copied as they are): the time-reversed sequence DL4J's Bidirectional gives its backward layer,
// each sequence reversed within its real length, so its padding stays where it was. Reversing
// twice gives x back. y must not alias x.
void reverseSteps(const Tensor& x, const StepSpans& spans, Tensor& y);
// The mask of the reversed sequences (the same as `mask` when each example's real steps are one
// run, as padding makes them); empty when `mask` is.
Tensor reverseMask(const Tensor& mask, const StepSpans& spans);

// A mask (N, T): 0 at the steps whose features all equal `value`, 1 elsewhere (DL4J's
// MaskZeroLayer).
Tensor maskOfValue(const Tensor& x, float value);

// BackendError naming `who` unless `t` is on the host.
void requireHost(const Tensor& t, const char* who);

}  // namespace dl4cpp::detail
