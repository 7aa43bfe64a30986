#include <dl4cpp/nn/weights/WeightInitializer.h>

#include <cmath>

namespace dl4cpp {

namespace {
void initHostWeights(WeightInit scheme, double fanIn, double fanOut, Tensor& w, Random& random) {
  float* p = w.data();
  const int64_t n = w.numel();
  auto normal = [&](double sd) {
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(random.gaussian() * sd);
  };
  auto uniform = [&](double a) {
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(random.uniform(-a, a));
  };
  switch (scheme) {
    case WeightInit::XAVIER:
      return normal(std::sqrt(2.0 / (fanIn + fanOut)));
    case WeightInit::XAVIER_UNIFORM:
      return uniform(std::sqrt(6.0 / (fanIn + fanOut)));
    case WeightInit::RELU:
      return normal(std::sqrt(2.0 / fanIn));
    case WeightInit::RELU_UNIFORM:
      return uniform(std::sqrt(6.0 / fanIn));
    case WeightInit::ZERO:
      return w.fill(0.0f);
    case WeightInit::NORMAL:
      return normal(1.0 / std::sqrt(fanIn));
    case WeightInit::UNIFORM:
      return uniform(1.0 / std::sqrt(fanIn));
  }
}
}  // namespace

void initWeights(WeightInit scheme, double fanIn, double fanOut, Tensor& w, Random& random) {
  if (w.onHost()) return initHostWeights(scheme, fanIn, fanOut, w, random);
  // Drawn on the host (the same sequence whatever the device), then copied over once.
  Tensor host(w.shape());
  initHostWeights(scheme, fanIn, fanOut, host, random);
  w.copyFrom(host);
}

}  // namespace dl4cpp
