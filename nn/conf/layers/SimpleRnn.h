#pragma once
#include "nn/conf/layers/BaseRecurrentLayer.h"

namespace dl4cpp {

// DL4J's SimpleRnn: h_t = activation(x_t W + h_{t-1} RW + b), sequences (N, nIn, T) to
// (N, nOut, T), h_{-1} = 0 and h_t = 0 at a padded step. Parameters (DL4J's
// SimpleRnnParamInitializer): W (nIn, nOut), RW (nOut, nOut), b (nOut). activation defaults to
// TANH; it must be one whose derivative follows from its output (TANH, SIGMOID, HARDSIGMOID,
// HARDTANH, RELU, IDENTITY).
class SimpleRnn : public BaseRecurrentLayer {
 public:
  class Builder;
  SimpleRnn() { activation = Activation::TANH; }

  std::shared_ptr<Layer> clone() const override { return std::make_shared<SimpleRnn>(*this); }
  std::string typeName() const override { return "SimpleRnn"; }
  std::vector<ParamSpec> paramSpecs() const override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;

 protected:
  int gateBlocks() const override { return 1; }
};

class SimpleRnn::Builder : public BaseRecurrentLayerBuilder<Builder, SimpleRnn> {};

}  // namespace dl4cpp
