#pragma once
#include "nn/conf/layers/BaseRecurrentLayer.h"

namespace dl4cpp {

// What DL4J's LSTM and GravesLSTM share (its AbstractLSTM): the gates, their activations, the
// forget gate's bias, the parameters W (nIn, 4 nOut), RW and b (4 nOut) with DL4J's fans
// (fanIn = nOut, fanOut = nIn + nOut) and the runtime, one LSTM op that applies RW's peephole
// columns where RW has them (GravesLSTM's). activation defaults to TANH and
// gateActivationFunction to SIGMOID (DL4J's defaults); both must be activations whose derivative
// follows from their output (TANH, SIGMOID, HARDSIGMOID, HARDTANH, RELU, IDENTITY).
class AbstractLSTM : public BaseRecurrentLayer {
 public:
  AbstractLSTM() { activation = Activation::TANH; }

  double forgetGateBiasInit = 1.0;
  Activation gateActivationFunction = Activation::SIGMOID;

  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::vector<ParamSpec> paramSpecs() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;

 protected:
  int gateBlocks() const override { return 4; }
  // RW's peephole columns beyond the four gate blocks: 3 for GravesLSTM, 0 for LSTM.
  virtual int64_t peepholeColumns() const = 0;
};

template <typename Derived, typename Conf>
class AbstractLSTMBuilder : public BaseRecurrentLayerBuilder<Derived, Conf> {
 public:
  Derived& forgetGateBiasInit(double v) {
    return this->set([&] { this->conf_.forgetGateBiasInit = v; });
  }
  Derived& gateActivationFunction(Activation a) {
    return this->set([&] { this->conf_.gateActivationFunction = a; });
  }
};

}  // namespace dl4cpp
