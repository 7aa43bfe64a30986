#pragma once
// The runtime object EmbeddingLayer and EmbeddingSequenceLayer share: a table lookup,
// y[e, :, t] = activation(W[x[e, t], :] + b), for indices x (N, T) (EmbeddingLayer: T = 1) and
// outputs (N, nOut, T). Private to the library (not installed); defined in EmbeddingLayer.cpp.
//
// The indices are read and checked on the host; the lookup and its gradient are the backend's
// embedding ops, on any device. A padded step (features mask 0) is not looked up: its output is 0
// and it adds nothing to the gradients, so a padding value outside the vocabulary is harmless. No
// gradient flows to the indices: the input gradient is 0.
#include <string>
#include <vector>

#include "nn/layers/LayerActivation.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp::detail {

class EmbeddingRuntime : public layers::RuntimeLayer {
 public:
  // `where` names the layer in errors ("layer 0 (EmbeddingSequenceLayer \"emb\")"); `length`,
  // when > 0, is the number of steps every sequence must have.
  EmbeddingRuntime(std::string where, int64_t nIn, int64_t nOut, bool hasBias, bool sequences,
                   int64_t length, Activation activation, double alpha);

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override;
  Shape outputShape(const Shape& input) const override;
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override;
  void backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) override;
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override;
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override;

 private:
  // The steps of `input` ((N, 1), (N, T) or (N, 1, T)).
  int64_t stepsOf(const Shape& input) const;
  // The index at example e, step t, checked against the vocabulary.
  int64_t indexAt(const Tensor& input, int64_t e, int64_t t, int64_t steps) const;

  std::string where_;
  int64_t nIn_, nOut_;
  bool hasBias_, sequences_;
  int64_t length_;
  layers::LayerActivation activation_;
  Tensor w_, b_;                // W: (nIn, nOut), b: (nOut) (empty without a bias)
  Tensor dw_, db_;              // the same shapes, views into the flat gradients
  Tensor mask_;                 // the features mask of the last forward pass (N, T), or empty
  std::vector<int64_t> index_;  // the last forward pass's rows of W, (N, T), -1 at padded steps
};

// ConfigError unless nIn (the vocabulary) and nOut are set and within the limits.
void validateEmbeddingSizes(const std::string& where, int64_t nIn, int64_t nOut);

}  // namespace dl4cpp::detail
