#include "nn/conf/layers/AbstractLSTM.h"

#include <cmath>

#include "nn/conf/layers/RecurrentRuntime.h"
#include "nn/core/Error.h"

namespace dl4cpp {

namespace {

// The LSTM op reads RW's width and applies the peephole columns where it has them
// (RecurrentOps.h).
class LstmRuntime : public detail::RecurrentRuntime {
 public:
  explicit LstmRuntime(const AbstractLSTM& conf)
      : RecurrentRuntime(conf, 4), act_{*conf.activation, conf.gateActivationFunction} {}

 protected:
  void cellForward(DeviceContext& ctx, const Tensor& x, Tensor& y) override {
    ctx.backend().lstmForward(x, w_, rw_, b_, mask_, act_, y, ws_, carried_);
  }
  void cellBackward(DeviceContext& ctx, const Tensor& dy, Tensor* dx) override {
    ctx.backend().lstmBackward(w_, rw_, mask_, act_, ws_, dy, dw_, drw_, db_, dx, backwardSteps_);
  }

 private:
  RecurrentActivations act_;
};

}  // namespace

InputType AbstractLSTM::resolve(int index, const InputType& input, const LayerDefaults& defaults) {
  const InputType out = BaseRecurrentLayer::resolve(index, input, defaults);
  if (!recurrentActivationSupported(gateActivationFunction))
    throw ConfigError(where(index) + ": gateActivationFunction " +
                      toString(gateActivationFunction) +
                      " is not available (use SIGMOID, HARDSIGMOID, TANH, HARDTANH, RELU or "
                      "IDENTITY)");
  if (!std::isfinite(forgetGateBiasInit))
    throw ConfigError(where(index) + ": forgetGateBiasInit must be finite");
  return out;
}

std::vector<ParamSpec> AbstractLSTM::paramSpecs() const {
  const double fanIn = double(nOut), fanOut = double(nIn + nOut);
  ParamSpec b{"b", Shape{4 * nOut}, true, std::nullopt, 0, 0, 0, true};
  b.initValues.assign(static_cast<size_t>(4 * nOut), float(biasInit.value_or(0)));
  for (int64_t j = nOut; j < 2 * nOut; ++j)
    b.initValues[static_cast<size_t>(j)] = float(forgetGateBiasInit);
  return {{"W", Shape{nIn, 4 * nOut}, false, weightInit, fanIn, fanOut},
          {"RW", Shape{nOut, 4 * nOut + peepholeColumns()}, false, weightInit, fanIn, fanOut},
          b};
}

void AbstractLSTM::writeFields(LayerFieldWriter& out) const {
  BaseRecurrentLayer::writeFields(out);
  out.number("forgetGateBiasInit", forgetGateBiasInit);
  out.enumValue("gateActivationFunction", kActivationNames, gateActivationFunction);
}

void AbstractLSTM::readFields(const LayerFieldReader& in) {
  BaseRecurrentLayer::readFields(in);
  forgetGateBiasInit = in.number("forgetGateBiasInit");
  gateActivationFunction = in.enumValue("gateActivationFunction", kActivationNames);
}

std::unique_ptr<layers::RuntimeLayer> AbstractLSTM::instantiate() const {
  return std::make_unique<LstmRuntime>(*this);
}

}  // namespace dl4cpp
