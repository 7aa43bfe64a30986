#pragma once
// What the 1-D layers (Convolution1DLayer, Subsampling1DLayer) share: sequences (N, C, T) run
// through the 2-D layer's runtime as images (N, C, T, 1), as DL4J computes them. Private to
// nn/conf/layers (not installed).
#include <memory>
#include <string>

#include "nn/backend/OpTypes.h"
#include "nn/conf/Enums.h"
#include "nn/conf/InputType.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp::detail {

// The image a sequence type is seen as: height T (`nominalLength` where T is not fixed), width 1,
// channels C.
inline InputType sequenceAsImage(const InputType& sequences, int64_t nominalLength) {
  return InputType::convolutional(sequences.length > 0 ? sequences.length : nominalLength, 1,
                                  sequences.size);
}

// ConfigError naming `where` unless `input` is sequences and the window (the 2-D layer's, its
// height along time) is one column wide and, for sequences of any length, keeps their length
// (Same mode, stride 1): a network sizes each layer's output by the batch's length.
void checkSequenceWindow(const std::string& where, const InputType& input, ConvolutionMode mode,
                         const WindowGeometry& window);

// The 2-D runtime `inner` on sequences: each tensor viewed as (N, C, T, 1). With a features mask,
// padded steps read as 0 (as the window's padding past a sequence's end), output 0 and pass no
// gradient; a layer whose output length differs from its input's cannot follow a mask
// (ShapeError naming the layer).
class SequenceAsImageRuntime : public layers::RuntimeLayer {
 public:
  SequenceAsImageRuntime(std::unique_ptr<layers::RuntimeLayer> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)) {}

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override {
    inner_->bindParams(params, grads);
  }
  void bindState(const std::vector<Tensor>& state) override { inner_->bindState(state); }
  Shape outputShape(const Shape& input) const override;
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override;
  void backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) override;
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override;
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override;
  void backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad, bool params,
                Tensor* inputGrad) override;

 private:
  std::unique_ptr<layers::RuntimeLayer> inner_;
  std::string name_;
  Tensor mask_;         // the features mask of the last forward pass, or empty
  Tensor masked_;       // with a mask: the input with its padded steps zeroed, which inner_ reads
  Tensor maskedStore_;  // masked_'s memory, kept between batches
};

}  // namespace dl4cpp::detail
