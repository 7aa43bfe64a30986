#include "nn/conf/layers/SequenceSteps.h"

#include <vector>

#include "nn/backend/RecurrentShapes.h"

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
  std::vector<int32_t> from(static_cast<size_t>(n * t));
  reversedStepSources(host.data(), n, t, from.data());
  Tensor reversed(Shape{n, t});
  for (int64_t e = 0; e < n; ++e)
    for (int64_t s = 0; s < t; ++s)
      reversed.data()[e * t + s] = host.data()[e * t + from[static_cast<size_t>(e * t + s)]];
  return reversed;
}

}  // namespace dl4cpp::detail
