#pragma once
#include <dl4cpp/nn/conf/layers/OutputLayer.h>
#include <dl4cpp/nn/layers/DenseLayer.h>

namespace dl4cpp::layers {

// Runtime of dl4cpp::OutputLayer: a dense layer whose output gradient comes from the loss.
class OutputLayer : public DenseLayer {
 public:
  explicit OutputLayer(const dl4cpp::OutputLayer& conf)
      : DenseLayer(conf), loss_(conf.lossFunction) {}

  // Writes dL/d(pre-activation) of the loss summed over the batch into `grad`; returns that sum.
  double lossGradient(DeviceContext& ctx, const Tensor& output, const Tensor& labels,
                      Tensor& grad) {
    return ctx.backend().lossForwardBackward(loss_, activation_.kind(), activation_.alpha(),
                                             activation_.keptInput(), output, labels, grad);
  }
  // The summed loss only.
  double lossScore(DeviceContext& ctx, const Tensor& output, const Tensor& labels) {
    return ctx.backend().lossScore(loss_, output, labels);
  }
  LossFunction lossFunction() const { return loss_; }

 private:
  LossFunction loss_;
};

}  // namespace dl4cpp::layers
