#include "nn/conf/graph/SubsetVertex.h"

#include <fmt/format.h>

#include <algorithm>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/conf/graph/VertexLoops.h"
#include "nn/layers/VertexRuntime.h"

namespace dl4cpp {

InputType SubsetVertex::outputType(const std::string& name,
                                   const std::vector<InputType>& inputs) const {
  const InputType& in = inputs.front();
  const bool images = in.kind == InputType::Kind::Convolutional;
  const int64_t extent = images ? in.channels : in.flatSize();  // a sequence's: its features
  if (from < 0 || to < from || to >= extent)
    throw ConfigError(fmt::format(
        "{}: the range {}..{} must satisfy 0 <= from <= to < {} (the {} "
        "of its input {})",
        where(name), from, to, extent, images ? "channels" : "features", in.toString()));
  if (images) return InputType::convolutional(in.height, in.width, to - from + 1);
  if (in.kind == InputType::Kind::Recurrent) return InputType::recurrent(to - from + 1, in.length);
  return InputType::feedForward(to - from + 1);
}

void SubsetVertex::writeFields(LayerFieldWriter& out) const {
  out.integer("from", from);
  out.integer("to", to);
}

void SubsetVertex::readFields(const LayerFieldReader& in) {
  from = in.size("from", limits::kMaxValuesPerExample);
  to = in.size("to", limits::kMaxValuesPerExample);
}

namespace {

// Per example the subset is one contiguous run of the input (NCHW keeps a channel's pixels
// together, (N, F, T) a feature's steps): channels or features [from, from + count) of `extent`,
// each holding the same number of values (per batch for sequences).
class SubsetRuntime : public layers::VertexRuntime {
 public:
  SubsetRuntime(int64_t from, int64_t count, int64_t extent)
      : from_(from), count_(count), extent_(extent) {}

  void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
               bool /*training*/) override {
    const Tensor& x = inputs[0];
    const int64_t n = x.dim(0), in = detail::valuesPerExample(x), each = in / extent_;
    const int64_t size = count_ * each;
    ctx.backend().copyBlocks(x, from_ * each, in, output, 0, size, size, n);
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> inputs, const Tensor& /*output*/,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    Tensor& dx = inputGrads[0];
    if (dx.empty()) return;
    const int64_t n = inputs[0].dim(0), in = detail::valuesPerExample(inputs[0]);
    const int64_t each = in / extent_, size = count_ * each;
    dx.fill(0);
    ctx.backend().copyBlocks(outputGrad, 0, size, dx, from_ * each, in, size, n);
  }

 private:
  int64_t from_, count_, extent_;
};

}  // namespace

std::unique_ptr<layers::VertexRuntime> SubsetVertex::instantiate(
    const std::vector<InputType>& inputs) const {
  const InputType& in = inputs.front();
  const int64_t extent = in.kind == InputType::Kind::Convolutional ? in.channels : in.flatSize();
  return std::make_unique<SubsetRuntime>(from, to - from + 1, extent);
}

}  // namespace dl4cpp
