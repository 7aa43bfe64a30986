#include "nn/conf/layers/SequenceSteps.h"

namespace dl4cpp::detail {

Tensor lastStepMask(const Tensor* mask, int64_t n, int64_t t) {
  Tensor last(Shape{n, t});
  last.fill(0.0f);
  const bool masked = mask != nullptr && !mask->empty();
  const Tensor host = masked ? mask->toHost() : Tensor();
  for (int64_t e = 0; e < n; ++e) {
    int64_t s = t - 1;
    if (masked) {
      int64_t k = t - 1;
      while (k >= 0 && host.data()[e * t + k] == 0.0f) --k;
      if (k >= 0) s = k;
    }
    last.data()[e * t + s] = 1.0f;
  }
  return last;
}

Tensor reverseMask(const Tensor& mask) {
  if (mask.empty()) return Tensor();
  const Tensor host = mask.toHost();
  const int64_t n = host.dim(0), t = host.dim(1);
  Tensor reversed(Shape{n, t});
  for (int64_t e = 0; e < n; ++e) {
    const float* m = host.data() + e * t;
    int64_t first = 0, last = t - 1;
    while (first < t && m[first] == 0.0f) ++first;
    while (last >= 0 && m[last] == 0.0f) --last;
    for (int64_t s = 0; s < t; ++s)
      reversed.data()[e * t + s] = m[s >= first && s <= last ? first + last - s : s];
  }
  return reversed;
}

}  // namespace dl4cpp::detail
