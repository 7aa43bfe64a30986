#include "nn/conf/layers/GlobalPoolingLayer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nn/core/Error.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

// The runtime object. No parameters. Keeps views of the last forward pass's input and output (the
// network's buffers, unchanged until the backward pass that follows): MAX and PNORM read them
// backward. Sequences (N, C, T) without a mask run the image op on (N, C, 1, T); with a mask they
// are pooled on the host, over the real steps only.
class GlobalPoolingRuntime : public layers::RuntimeLayer {
 public:
  explicit GlobalPoolingRuntime(const GlobalPoolingLayer& conf)
      : kind_(conf.poolingType),
        pnorm_(static_cast<int>(conf.pnorm)),
        collapse_(conf.collapseDimensions) {}

  Shape outputShape(const Shape& input) const override {
    if (collapse_) return {input[0], input[1]};
    if (input.rank() == 3) return {input[0], input[1], 1};
    return {input[0], input[1], 1, 1};
  }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    input_ =
        input.rank() == 3 ? input.reshape({input.dim(0), input.dim(1), 1, input.dim(2)}) : input;
    output_ = output;
    mask_ = input.rank() == 3 && fwd.featuresMask != nullptr ? *fwd.featuresMask : Tensor();
    if (mask_.empty()) {
      ctx.backend().globalPoolingForward(kind_, pnorm_, input_, output);
      return;
    }
    const int64_t n = input.dim(0), t = input.dim(2);
    if (mask_.shape() != Shape{n, t})
      throw ShapeError("GlobalPoolingLayer: the features mask " + mask_.shape().toString() +
                       " does not match sequences " + input.shape().toString());
    if (!input.onHost())
      throw BackendError("GlobalPoolingLayer: masked sequences are pooled on the host only");
    maskedForward(input.data(), output.data(), n, input.dim(1), t);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    if (mask_.empty()) {
      ctx.backend().globalPoolingBackward(kind_, pnorm_, input_, output_, grad, inputGrad);
      return;
    }
    maskedBackward(input_.data(), output_.data(), grad.data(), inputGrad.data(), input_.dim(0),
                   input_.dim(1), input_.dim(3));
  }

 private:
  bool real(int64_t e, int64_t s, int64_t t) const { return mask_.data()[e * t + s] != 0.0f; }

  void maskedForward(const float* x, float* y, int64_t n, int64_t c, int64_t t) const {
    for (int64_t e = 0; e < n; ++e) {
      int64_t count = 0;
      for (int64_t s = 0; s < t; ++s) count += real(e, s, t) ? 1 : 0;
      for (int64_t k = 0; k < c; ++k) {
        const float* row = x + (e * c + k) * t;
        double acc = kind_ == PoolingKind::MAX ? -std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t s = 0; s < t; ++s) {
          if (!real(e, s, t)) continue;
          if (kind_ == PoolingKind::MAX)
            acc = std::max(acc, double(row[s]));
          else if (kind_ == PoolingKind::PNORM)
            acc += std::pow(std::fabs(double(row[s])), pnorm_);
          else
            acc += row[s];
        }
        if (count == 0)
          acc = 0;
        else if (kind_ == PoolingKind::AVG)
          acc /= double(count);
        else if (kind_ == PoolingKind::PNORM)
          acc = std::pow(acc, 1.0 / pnorm_);
        y[e * c + k] = static_cast<float>(acc);
      }
    }
  }

  void maskedBackward(const float* x, const float* y, const float* dy, float* dx, int64_t n,
                      int64_t c, int64_t t) const {
    for (int64_t e = 0; e < n; ++e) {
      int64_t count = 0;
      for (int64_t s = 0; s < t; ++s) count += real(e, s, t) ? 1 : 0;
      for (int64_t k = 0; k < c; ++k) {
        const float* row = x + (e * c + k) * t;
        float* grad = dx + (e * c + k) * t;
        const float g = dy[e * c + k], out = y[e * c + k];
        std::fill(grad, grad + t, 0.0f);
        if (count == 0) continue;
        if (kind_ == PoolingKind::MAX) {
          // The first real step holding the maximum, as the image op's first maximum.
          for (int64_t s = 0; s < t; ++s)
            if (real(e, s, t) && row[s] == out) {
              grad[s] = g;
              break;
            }
          continue;
        }
        for (int64_t s = 0; s < t; ++s) {
          if (!real(e, s, t)) continue;
          if (kind_ == PoolingKind::AVG) {
            grad[s] = g / static_cast<float>(count);
          } else if (kind_ == PoolingKind::SUM) {
            grad[s] = g;
          } else if (out != 0.0f) {  // PNORM: x |x|^(p-2) / y^(p-1)
            const double v = row[s];
            grad[s] = static_cast<float>(g * v * std::pow(std::fabs(v), pnorm_ - 2) /
                                         std::pow(double(out), pnorm_ - 1));
          }
        }
      }
    }
  }

  PoolingKind kind_;
  int pnorm_;
  bool collapse_;
  Tensor input_, output_;  // input_ as (N, C, H, W): sequences as (N, C, 1, T)
  Tensor mask_;            // the features mask of the last forward pass over sequences, or empty
};

}  // namespace

namespace {
// |x|^pnorm of a float overflows for any |x| > 1 long before this.
constexpr int64_t kMaxPNorm = 1024;
}  // namespace

InputType GlobalPoolingLayer::resolve(int index, const InputType& input,
                                      const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  if (input.kind == InputType::Kind::FeedForward)
    throw ConfigError(where(index) + ": needs images or sequences but receives " +
                      input.toString());
  if (pnorm < 1 || pnorm > kMaxPNorm)
    throw ConfigError(where(index) + ": pnorm must be between 1 and " + std::to_string(kMaxPNorm) +
                      ", got " + std::to_string(pnorm));
  validateCommon(index);
  if (input.kind == InputType::Kind::Recurrent)
    return collapseDimensions ? InputType::feedForward(input.size)
                              : InputType::recurrent(input.size, 1);
  if (collapseDimensions) return InputType::feedForward(input.channels);
  return InputType::convolutional(1, 1, input.channels);
}

std::unique_ptr<layers::RuntimeLayer> GlobalPoolingLayer::instantiate() const {
  return std::make_unique<GlobalPoolingRuntime>(*this);
}

void GlobalPoolingLayer::writeFields(LayerFieldWriter& out) const {
  out.enumValue("poolingType", kPoolingNames, poolingType);
  out.integer("pnorm", pnorm);
  out.boolean("collapseDimensions", collapseDimensions);
}

void GlobalPoolingLayer::readFields(const LayerFieldReader& in) {
  poolingType = in.enumValue("poolingType", kPoolingNames);
  pnorm = in.size("pnorm", kMaxPNorm);
  collapseDimensions = in.boolean("collapseDimensions");
}

}  // namespace dl4cpp