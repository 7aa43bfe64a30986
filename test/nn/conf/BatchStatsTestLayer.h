#pragma once
// A layer type defined outside the library, as a user would: y = x * g per feature in training,
// y = x * g + mean in inference (as batch normalisation uses its running statistics), with a
// learned g and three state segments, one per combine rule. In training mode it records the
// batch's per-feature moments (PooledMeanVariance) and mean (WeightedMean), and one number drawn
// from its forward context's random stream (PerReplica). It exercises every part of the layer
// contract: registry, own JSON fields, parameter and state specs, forward context. Host memory
// only.
#include <dl4cpp/dl4cpp.h>

#include <memory>
#include <string>
#include <vector>

#include "nn/conf/LayerRegistry.h"
#include "nn/layers/RuntimeLayer.h"

namespace testutil {

class BatchStatsRuntime;

class BatchStatsLayer : public dl4cpp::Layer {
 public:
  static constexpr const char* kTypeName = "test.BatchStats";

  int64_t size = 0;     // inferred from the input
  double initialG = 1;  // a field of this type's own, in its JSON

  std::shared_ptr<Layer> clone() const override { return std::make_shared<BatchStatsLayer>(*this); }
  std::string typeName() const override { return kTypeName; }
  bool consumesImages() const override { return false; }
  dl4cpp::InputType resolve(int index, const dl4cpp::InputType& input,
                            const dl4cpp::LayerDefaults& defaults) override {
    inheritDefaults(defaults);
    size = input.flatSize();
    validateCommon(index);
    return dl4cpp::InputType::feedForward(size);
  }
  std::unique_ptr<dl4cpp::layers::RuntimeLayer> instantiate() const override;
  std::vector<dl4cpp::ParamSpec> paramSpecs() const override {
    return {{"g", dl4cpp::Shape{size}, false, std::nullopt, 0, 0, static_cast<float>(initialG)}};
  }
  std::vector<dl4cpp::StateSpec> stateSpecs() const override {
    using dl4cpp::StateCombine;
    return {{"moments", dl4cpp::Shape{2, size}, 0, StateCombine::PooledMeanVariance},
            {"mean", dl4cpp::Shape{size}, 0, StateCombine::WeightedMean},
            {"draw", dl4cpp::Shape{1}, -1, StateCombine::PerReplica}};
  }
  void writeFields(dl4cpp::LayerFieldWriter& out) const override {
    out.integer("size", size);
    out.number("initialG", initialG);
  }
  void readFields(const dl4cpp::LayerFieldReader& in) override {
    size = in.size("size", 1 << 20);
    initialG = in.number("initialG");
  }
};

class BatchStatsRuntime : public dl4cpp::layers::RuntimeLayer {
 public:
  explicit BatchStatsRuntime(int64_t size) : size_(size) {}
  void bindParams(const std::vector<dl4cpp::Tensor>& params,
                  const std::vector<dl4cpp::Tensor>& grads) override {
    g_ = params[0];
    dg_ = grads[0];
  }
  void bindState(const std::vector<dl4cpp::Tensor>& state) override {
    moments_ = state[0];
    mean_ = state[1];
    draw_ = state[2];
  }
  dl4cpp::Shape outputShape(const dl4cpp::Shape& input) const override { return input; }
  void forward(dl4cpp::DeviceContext&, const dl4cpp::Tensor& x, dl4cpp::Tensor& y,
               const dl4cpp::ForwardContext& fwd) override {
    const int64_t n = x.dim(0);
    for (int64_t i = 0; i < n * size_; ++i) y.data()[i] = x.data()[i] * g_.data()[i % size_];
    if (!fwd.training) {
      for (int64_t i = 0; i < n * size_; ++i) y.data()[i] += mean_.data()[i % size_];
      return;
    }
    for (int64_t f = 0; f < size_; ++f) {
      double sum = 0, squares = 0;
      for (int64_t r = 0; r < n; ++r) sum += x.data()[r * size_ + f];
      const double mean = sum / static_cast<double>(n);
      for (int64_t r = 0; r < n; ++r) {
        const double d = x.data()[r * size_ + f] - mean;
        squares += d * d;
      }
      moments_.data()[f] = static_cast<float>(mean);
      moments_.data()[size_ + f] = static_cast<float>(squares / static_cast<double>(n));
      mean_.data()[f] = static_cast<float>(mean);
    }
    draw_.data()[0] = static_cast<float>(fwd.random().nextDouble());
  }
  void backwardParams(dl4cpp::DeviceContext&, const dl4cpp::Tensor& x,
                      const dl4cpp::Tensor& grad) override {
    for (int64_t f = 0; f < size_; ++f) dg_.data()[f] = 0;
    for (int64_t i = 0; i < x.numel(); ++i) dg_.data()[i % size_] += grad.data()[i] * x.data()[i];
  }
  void backwardInput(dl4cpp::DeviceContext&, const dl4cpp::Tensor& grad,
                     dl4cpp::Tensor& inputGrad) override {
    for (int64_t i = 0; i < grad.numel(); ++i)
      inputGrad.data()[i] = grad.data()[i] * g_.data()[i % size_];
  }

 private:
  int64_t size_;
  dl4cpp::Tensor g_, dg_, moments_, mean_, draw_;
};

inline std::unique_ptr<dl4cpp::layers::RuntimeLayer> BatchStatsLayer::instantiate() const {
  return std::make_unique<BatchStatsRuntime>(size);
}

// Registers the type once per process (the registry refuses a second registration).
inline void registerBatchStatsLayer() {
  auto& registry = dl4cpp::LayerRegistry::instance();
  if (!registry.contains(BatchStatsLayer::kTypeName)) registry.add<BatchStatsLayer>();
}

// features (rows, size) -> BatchStatsLayer -> OutputLayer(MSE, 2 outputs).
inline dl4cpp::MultiLayerConfiguration batchStatsNet(int64_t size, double initialG = 0.5,
                                                     uint64_t seed = 5) {
  using namespace dl4cpp;
  BatchStatsLayer stats;
  stats.initialG = initialG;
  return NeuralNetConfiguration::Builder()
      .seed(seed)
      .updater(Sgd(0.1))
      .list()
      .layer(stats)
      .layer(
          OutputLayer::Builder(LossFunction::MSE).nOut(2).activation(Activation::IDENTITY).build())
      .setInputType(InputType::feedForward(size))
      .build();
}

}  // namespace testutil
