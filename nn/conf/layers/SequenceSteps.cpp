#include "nn/conf/layers/SequenceSteps.h"

#include <string>

#include "nn/core/Error.h"

namespace dl4cpp::detail {

void requireHost(const Tensor& t, const char* who) {
  if (!t.onHost())
    throw BackendError(std::string(who) +
                       ": sequences on this device are not supported (the recurrent layers run on "
                       "the CPU)");
}

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

StepSpans stepSpans(const Tensor* mask, int64_t n, int64_t t) {
  StepSpans spans{std::vector<int64_t>(static_cast<size_t>(n), 0),
                  std::vector<int64_t>(static_cast<size_t>(n), t - 1)};
  if (mask == nullptr || mask->empty()) return spans;
  const Tensor host = mask->toHost();
  for (int64_t e = 0; e < n; ++e) {
    const float* m = host.data() + e * t;
    int64_t first = 0, last = t - 1;
    while (first < t && m[first] == 0.0f) ++first;
    while (last >= 0 && m[last] == 0.0f) --last;
    spans.first[static_cast<size_t>(e)] = first;
    spans.last[static_cast<size_t>(e)] = last;
  }
  return spans;
}

namespace {

// The step that step s of example e comes from (and goes to) in the reversed sequence.
int64_t mirror(const StepSpans& spans, int64_t e, int64_t s) {
  const int64_t first = spans.first[static_cast<size_t>(e)],
                last = spans.last[static_cast<size_t>(e)];
  return s >= first && s <= last ? first + last - s : s;
}

}  // namespace

void reverseSteps(const Tensor& x, const StepSpans& spans, Tensor& y) {
  requireHost(x, "Bidirectional");
  requireHost(y, "Bidirectional");
  const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
  const float* src = x.data();
  float* dst = y.data();
  for (int64_t e = 0; e < n; ++e)
    for (int64_t s = 0; s < t; ++s) {
      const int64_t from = mirror(spans, e, s);
      for (int64_t k = 0; k < c; ++k) dst[(e * c + k) * t + s] = src[(e * c + k) * t + from];
    }
}

Tensor reverseMask(const Tensor& mask, const StepSpans& spans) {
  if (mask.empty()) return Tensor();
  const Tensor host = mask.toHost();
  const int64_t n = host.dim(0), t = host.dim(1);
  Tensor reversed(Shape{n, t});
  for (int64_t e = 0; e < n; ++e)
    for (int64_t s = 0; s < t; ++s)
      reversed.data()[e * t + s] = host.data()[e * t + mirror(spans, e, s)];
  return reversed;
}

Tensor maskOfValue(const Tensor& x, float value) {
  const Tensor host = x.toHost();
  const int64_t n = host.dim(0), c = host.dim(1), t = host.dim(2);
  Tensor mask(Shape{n, t});
  for (int64_t e = 0; e < n; ++e)
    for (int64_t s = 0; s < t; ++s) {
      float real = 0.0f;
      for (int64_t k = 0; k < c && real == 0.0f; ++k)
        real = host.data()[(e * c + k) * t + s] != value ? 1.0f : 0.0f;
      mask.data()[e * t + s] = real;
    }
  return mask;
}

}  // namespace dl4cpp::detail
