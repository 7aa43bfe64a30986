#include "nn/conf/graph/MergeVertex.h"

#include <fmt/format.h>

#include <algorithm>

#include "nn/conf/graph/VertexLoops.h"
#include "nn/layers/VertexRuntime.h"

namespace dl4cpp {

InputType MergeVertex::outputType(const std::string& name,
                                  const std::vector<InputType>& inputs) const {
  const InputType& first = inputs.front();
  if (first.kind == InputType::Kind::Recurrent) {
    int64_t features = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].kind != InputType::Kind::Recurrent || inputs[i].length != first.length)
        throw ConfigError(fmt::format(
            "{}: inputs must be all sequences of one length, but input 0 is {} and input {} is {}",
            where(name), first.toString(), i, inputs[i].toString()));
      features += inputs[i].size;
    }
    return InputType::recurrent(features, first.length);
  }
  const bool images = first.kind == InputType::Kind::Convolutional;
  int64_t total = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputType& t = inputs[i];
    if ((t.kind == InputType::Kind::Convolutional) != images ||
        (images && (t.height != inputs.front().height || t.width != inputs.front().width)))
      throw ConfigError(fmt::format(
          "{}: inputs must be all rows or all images of one height and width, but input 0 is {} "
          "and input {} is {}",
          where(name), inputs.front().toString(), i, t.toString()));
    total += images ? t.channels : t.flatSize();
  }
  if (images) return InputType::convolutional(inputs.front().height, inputs.front().width, total);
  return InputType::feedForward(total);
}

namespace {

// Per example, input i's values are one contiguous run of the output's (NCHW keeps each image's
// channels together, (N, F, T) each sequence's features), so rows, images and sequences merge
// alike: one block copy per input.
class MergeRuntime : public layers::VertexRuntime {
 public:
  void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
               bool /*training*/) override {
    const int64_t n = output.dim(0), out = detail::valuesPerExample(output);
    int64_t offset = 0;
    for (const Tensor& x : inputs) {
      const int64_t size = detail::valuesPerExample(x);
      ctx.backend().copyBlocks(x, 0, size, output, offset, out, size, n);
      offset += size;
    }
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> inputs, const Tensor& output,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    const int64_t n = output.dim(0), out = detail::valuesPerExample(output);
    int64_t offset = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int64_t size = detail::valuesPerExample(inputs[i]);
      if (Tensor& dx = inputGrads[i]; !dx.empty())
        ctx.backend().copyBlocks(outputGrad, offset, out, dx, 0, size, size, n);
      offset += size;
    }
  }
};

}  // namespace

std::unique_ptr<layers::VertexRuntime> MergeVertex::instantiate(
    const std::vector<InputType>& /*inputs*/) const {
  return std::make_unique<MergeRuntime>();
}

}  // namespace dl4cpp
