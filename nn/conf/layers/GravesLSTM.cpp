#include "nn/conf/layers/GravesLSTM.h"

#include <cmath>

#include "nn/conf/layers/RecurrentRuntime.h"
#include "nn/core/Error.h"

namespace dl4cpp {

namespace {

// The LSTM op takes RW with the three peephole columns and applies them (RecurrentOps.h).
class GravesLstmRuntime : public detail::RecurrentRuntime {
 public:
  explicit GravesLstmRuntime(const GravesLSTM& conf)
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

InputType GravesLSTM::resolve(int index, const InputType& input, const LayerDefaults& defaults) {
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

std::vector<ParamSpec> GravesLSTM::paramSpecs() const {
  const double fanIn = double(nOut), fanOut = double(nIn + nOut);
  ParamSpec b{"b", Shape{4 * nOut}, true, std::nullopt, 0, 0, 0, true};
  b.initValues.assign(static_cast<size_t>(4 * nOut), float(biasInit.value_or(0)));
  for (int64_t j = nOut; j < 2 * nOut; ++j)
    b.initValues[static_cast<size_t>(j)] = float(forgetGateBiasInit);
  return {{"W", Shape{nIn, 4 * nOut}, false, weightInit, fanIn, fanOut},
          {"RW", Shape{nOut, 4 * nOut + 3}, false, weightInit, fanIn, fanOut},
          b};
}

void GravesLSTM::writeFields(LayerFieldWriter& out) const {
  BaseRecurrentLayer::writeFields(out);
  out.number("forgetGateBiasInit", forgetGateBiasInit);
  out.enumValue("gateActivationFunction", kActivationNames, gateActivationFunction);
}

void GravesLSTM::readFields(const LayerFieldReader& in) {
  BaseRecurrentLayer::readFields(in);
  forgetGateBiasInit = in.number("forgetGateBiasInit");
  gateActivationFunction = in.enumValue("gateActivationFunction", kActivationNames);
}

std::unique_ptr<layers::RuntimeLayer> GravesLSTM::instantiate() const {
  return std::make_unique<GravesLstmRuntime>(*this);
}

}  // namespace dl4cpp
