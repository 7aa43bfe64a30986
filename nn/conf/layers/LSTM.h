#pragma once
#include "nn/conf/layers/BaseRecurrentLayer.h"

namespace dl4cpp {

// DL4J's LSTM (no peephole connections): sequences (N, nIn, T) to (N, nOut, T).
//   z_t = x_t W + h_{t-1} RW + b
//   a = activation(z[0:H])   f = gate(z[H:2H])   o = gate(z[2H:3H])   i = gate(z[3H:4H])
//   c_t = f * c_{t-1} + i * a        h_t = o * activation(c_t)        (H = nOut)
// Parameters in DL4J's layout and order (LSTMParamInitializer), so DL4J's values load as they are:
//   W  (nIn, 4 nOut)   input weights,     column blocks [a | f | o | i]
//   RW (nOut, 4 nOut)  recurrent weights, the same blocks
//   b  (4 nOut)        biases, the same blocks; f's block starts at forgetGateBiasInit, the
//                      others at biasInit
// W and RW are drawn with DL4J's fans, fanIn = nOut and fanOut = nIn + nOut. The state starts at
// 0 for every sequence, and at a padded step (features mask 0) h and c are 0 (DL4J's
// LSTMHelpers), so the next real step starts afresh. activation defaults to TANH and
// gateActivationFunction to SIGMOID (DL4J's defaults); both must be activations whose derivative
// follows from their output (TANH, SIGMOID, HARDSIGMOID, HARDTANH, RELU, IDENTITY).
class LSTM : public BaseRecurrentLayer {
 public:
  class Builder;
  LSTM() { activation = Activation::TANH; }

  double forgetGateBiasInit = 1.0;
  Activation gateActivationFunction = Activation::SIGMOID;

  std::shared_ptr<Layer> clone() const override { return std::make_shared<LSTM>(*this); }
  std::string typeName() const override { return "LSTM"; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::vector<ParamSpec> paramSpecs() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;

 protected:
  int gateBlocks() const override { return 4; }
};

class LSTM::Builder : public BaseRecurrentLayerBuilder<Builder, LSTM> {
 public:
  Builder& forgetGateBiasInit(double v) {
    return set([&] { conf_.forgetGateBiasInit = v; });
  }
  Builder& gateActivationFunction(Activation a) {
    return set([&] { conf_.gateActivationFunction = a; });
  }
};

}  // namespace dl4cpp
