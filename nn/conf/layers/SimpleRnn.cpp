#include "nn/conf/layers/SimpleRnn.h"

#include "nn/conf/layers/RecurrentRuntime.h"

namespace dl4cpp {

namespace {

class SimpleRnnRuntime : public detail::RecurrentRuntime {
 public:
  explicit SimpleRnnRuntime(const SimpleRnn& conf)
      : RecurrentRuntime(conf, 1), act_(*conf.activation) {}

 protected:
  void cellForward(DeviceContext& ctx, const Tensor& x, Tensor& y) override {
    ctx.backend().simpleRnnForward(x, w_, rw_, b_, mask_, act_, y, ws_, carried_);
  }
  void cellBackward(DeviceContext& ctx, const Tensor& dy, Tensor* dx) override {
    ctx.backend().simpleRnnBackward(w_, rw_, mask_, act_, ws_, dy, dw_, drw_, db_, dx,
                                    backwardSteps_);
  }

 private:
  ActivationKind act_;
};

}  // namespace

std::vector<ParamSpec> SimpleRnn::paramSpecs() const {
  const double fanIn = double(nIn), fanOut = double(nOut);
  return {{"W", Shape{nIn, nOut}, false, weightInit, fanIn, fanOut},
          {"RW", Shape{nOut, nOut}, false, weightInit, fanOut, fanOut},
          {"b", Shape{nOut}, true, std::nullopt, 0, 0, float(biasInit.value_or(0))}};
}

std::unique_ptr<layers::RuntimeLayer> SimpleRnn::instantiate() const {
  return std::make_unique<SimpleRnnRuntime>(*this);
}

}  // namespace dl4cpp
