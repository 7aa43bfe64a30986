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
  const int64_t extent = images ? in.channels : in.flatSize();
  if (from < 0 || to < from || to >= extent)
    throw ConfigError(fmt::format(
        "{}: the range {}..{} must satisfy 0 <= from <= to < {} (the {} "
        "of its input {})",
        where(name), from, to, extent, images ? "channels" : "features", in.toString()));
  if (images) return InputType::convolutional(in.height, in.width, to - from + 1);
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
// together): `offset` values in, `size` long.
class SubsetRuntime : public layers::VertexRuntime {
 public:
  SubsetRuntime(int64_t offset, int64_t size) : offset_(offset), size_(size) {}

  void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
               bool /*training*/) override {
    detail::requireHost(ctx, "SubsetVertex");
    const Tensor& x = inputs[0];
    const int64_t n = x.dim(0), in = detail::valuesPerExample(x);
    for (int64_t e = 0; e < n; ++e)
      std::copy_n(x.data() + e * in + offset_, size_, output.data() + e * size_);
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> inputs, const Tensor& /*output*/,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    detail::requireHost(ctx, "SubsetVertex");
    Tensor& dx = inputGrads[0];
    if (dx.empty()) return;
    const int64_t n = inputs[0].dim(0), in = detail::valuesPerExample(inputs[0]);
    dx.fill(0);
    for (int64_t e = 0; e < n; ++e)
      std::copy_n(outputGrad.data() + e * size_, size_, dx.data() + e * in + offset_);
  }

 private:
  int64_t offset_, size_;
};

}  // namespace

std::unique_ptr<layers::VertexRuntime> SubsetVertex::instantiate(
    const std::vector<InputType>& inputs) const {
  const InputType& in = inputs.front();
  const int64_t perChannel = in.kind == InputType::Kind::Convolutional ? in.height * in.width : 1;
  return std::make_unique<SubsetRuntime>(from * perChannel, (to - from + 1) * perChannel);
}

}  // namespace dl4cpp
