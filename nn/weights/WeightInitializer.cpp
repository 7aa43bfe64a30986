#include "nn/weights/WeightInitializer.h"

#include <cmath>

namespace dl4cpp {

namespace {
void initHostWeights(const WeightInitScheme& scheme, double fanIn, double fanOut, Tensor& w,
                     Random& random) {
  float* p = w.data();
  const int64_t n = w.numel();
  auto normal = [&](double mean, double sd) {
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(mean + random.gaussian() * sd);
  };
  auto uniform = [&](double lo, double hi) {
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(random.uniform(lo, hi));
  };
  if (const Distribution* d = scheme.distribution()) {
    if (d->kind == Distribution::Kind::NORMAL) return normal(d->first, d->second);
    return uniform(d->first, d->second);
  }
  switch (*scheme.named()) {
    case WeightInit::XAVIER:
      return normal(0, std::sqrt(2.0 / (fanIn + fanOut)));
    case WeightInit::XAVIER_UNIFORM: {
      const double a = std::sqrt(6.0 / (fanIn + fanOut));
      return uniform(-a, a);
    }
    case WeightInit::RELU:
      return normal(0, std::sqrt(2.0 / fanIn));
    case WeightInit::RELU_UNIFORM: {
      const double a = std::sqrt(6.0 / fanIn);
      return uniform(-a, a);
    }
    case WeightInit::ZERO:
      return w.fill(0.0f);
    case WeightInit::ONES:
      return w.fill(1.0f);
    case WeightInit::NORMAL:
    case WeightInit::LECUN_NORMAL:
    case WeightInit::XAVIER_FAN_IN:
      return normal(0, 1.0 / std::sqrt(fanIn));
    case WeightInit::UNIFORM: {
      const double a = 1.0 / std::sqrt(fanIn);
      return uniform(-a, a);
    }
    case WeightInit::LECUN_UNIFORM: {
      const double a = 3.0 / std::sqrt(fanIn);
      return uniform(-a, a);
    }
  }
}
}  // namespace

void initWeights(const WeightInitScheme& scheme, double fanIn, double fanOut, Tensor& w,
                 Random& random) {
  if (w.onHost()) return initHostWeights(scheme, fanIn, fanOut, w, random);
  // Drawn on the host (the same sequence whatever the device), then copied over once.
  Tensor host(w.shape());
  initHostWeights(scheme, fanIn, fanOut, host, random);
  w.copyFrom(host);
}

}  // namespace dl4cpp
