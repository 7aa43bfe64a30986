#pragma once
#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

// Batch normalisation (DL4J's BatchNormalization): per channel of images (N, C, H, W), or per
// feature of rows (N, C), y = gamma (x - mean) / sqrt(variance + eps) + beta, then the layer's
// activation. Training uses the batch's statistics and folds them into running ones,
// running = decay * running + (1 - decay) * batch; inference uses the running statistics. gamma
// and beta are learned (with the layer's updater, never regularised, as in DL4J) unless
// lockGammaBeta fixes them at the configured values. The running mean and (population) variance
// are layer state, which ParallelWrapper combines across workers as pooled statistics at every
// averaging. DL4J's useLogStd storage and isMinibatch are not offered: variances are stored as
// variances.
class BatchNormalization : public Layer {
 public:
  class Builder;

  double decay = 0.9;
  double eps = 1e-5;
  double gamma = 1.0;  // the initial (or, locked, fixed) scale
  double beta = 0.0;   // the initial (or, locked, fixed) shift
  bool lockGammaBeta = false;
  int64_t nOut = 0;  // channels or features: inferred; if set, must match the input

  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<BatchNormalization>(*this);
  }
  std::string typeName() const override { return "BatchNormalization"; }
  bool consumesImages() const override { return false; }
  bool acceptsRowsOrImages() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  // gamma then beta (C each), unless locked.
  std::vector<ParamSpec> paramSpecs() const override;
  // "runningStats": (2, C), the running means then variances (initially 0 and 1).
  std::vector<StateSpec> stateSpecs() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
  void clearInferredSizes() override { nOut = 0; }
  bool isBaseLayer() const override { return true; }
};

class BatchNormalization::Builder : public LayerBuilder<Builder, BatchNormalization> {
 public:
  Builder() = default;
  Builder(double gamma, double beta) { this->gamma(gamma).beta(beta); }
  Builder(double gamma, double beta, bool lock) {
    this->gamma(gamma).beta(beta).lockGammaBeta(lock);
  }
  explicit Builder(bool lock) { lockGammaBeta(lock); }

  Builder& decay(double d) {
    return set([&] { conf_.decay = d; });
  }
  Builder& eps(double e) {
    return set([&] { conf_.eps = e; });
  }
  Builder& gamma(double g) {
    return set([&] { conf_.gamma = g; });
  }
  Builder& beta(double b) {
    return set([&] { conf_.beta = b; });
  }
  Builder& lockGammaBeta(bool lock) {
    return set([&] { conf_.lockGammaBeta = lock; });
  }
  Builder& nIn(int64_t n) {
    return set([&] { conf_.nOut = n; });
  }
  Builder& nOut(int64_t n) {
    return set([&] { conf_.nOut = n; });
  }
};

}  // namespace dl4cpp
