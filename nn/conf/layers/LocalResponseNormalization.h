#pragma once
#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

// Local response normalisation across channels (DL4J's LocalResponseNormalization, AlexNet's
// section 3.3): y = x * (k + alpha * sum of x^2 over the n channels centred on x's)^-beta, the
// window clipped at the first and last channel. DL4J's defaults k 2, n 5, alpha 1e-4, beta 0.75;
// alpha is not divided by n (oneDNN and cuDNN divide it). n must be odd: DL4J's own CPU kernel
// widens an even n to n + 1 channels without saying so. No parameters.
class LocalResponseNormalization : public Layer {
 public:
  class Builder;

  double k = 2;
  double n = 5;
  double alpha = 1e-4;
  double beta = 0.75;

  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<LocalResponseNormalization>(*this);
  }
  std::string typeName() const override { return "LocalResponseNormalization"; }
  bool consumesImages() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

class LocalResponseNormalization::Builder
    : public LayerBuilder<Builder, LocalResponseNormalization> {
 public:
  Builder() = default;
  Builder(double k, double n, double alpha, double beta) {
    this->k(k).n(n).alpha(alpha).beta(beta);
  }
  Builder(double k, double alpha, double beta) { this->k(k).alpha(alpha).beta(beta); }
  Builder& k(double value) {
    return set([&] { conf_.k = value; });
  }
  Builder& n(double value) {
    return set([&] { conf_.n = value; });
  }
  Builder& alpha(double value) {
    return set([&] { conf_.alpha = value; });
  }
  Builder& beta(double value) {
    return set([&] { conf_.beta = value; });
  }
};

}  // namespace dl4cpp
