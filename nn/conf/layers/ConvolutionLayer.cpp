#include "nn/conf/layers/ConvolutionLayer.h"

#include <tuple>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/layers/LayerActivation.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

// The runtime object. Parameters in DL4J's order: b then W.
class ConvolutionRuntime : public layers::RuntimeLayer {
 public:
  explicit ConvolutionRuntime(const ConvolutionLayer& conf);

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override;
  Shape outputShape(const Shape& input) const override;
  LayerDescription describe() const override;

  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override;
  void backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) override;
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override;
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override;
  // Both gradients in one backend call, which shares the work on grad between them.
  void backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad, bool params,
                Tensor* inputGrad) override;

 private:
  int64_t nIn_, nOut_;
  bool hasBias_;
  WindowGeometry geometry_;
  layers::LayerActivation activation_;
  Tensor w_, b_;    // W: (nOut, nIn, kH, kW), b: (nOut) or empty; views into the flat parameters
  Tensor dw_, db_;  // views into the flat gradients
};

ConvolutionRuntime::ConvolutionRuntime(const ConvolutionLayer& conf)
    : nIn_(conf.nIn),
      nOut_(conf.nOut),
      hasBias_(conf.hasBias),
      geometry_(conf.geometry),
      activation_(*conf.activation, static_cast<float>(conf.leakyReluAlpha)) {}

void ConvolutionRuntime::bindParams(const std::vector<Tensor>& params,
                                    const std::vector<Tensor>& grads) {
  const size_t wi = hasBias_ ? 1 : 0;
  if (hasBias_) {
    b_ = params[0];
    db_ = grads[0];
  }
  w_ = params[wi];
  dw_ = grads[wi];
}

Shape ConvolutionRuntime::outputShape(const Shape& input) const {
  return {input[0], nOut_, geometry_.outH(input[2]), geometry_.outW(input[3])};
}

LayerDescription ConvolutionRuntime::describe() const {
  LayerDescription d;
  d.kind = LayerDescription::Kind::CONVOLUTION;
  d.geometry = geometry_;
  d.activation = activation_.kind();
  d.alpha = activation_.alpha();
  d.w = w_;
  d.b = b_;
  d.dw = dw_;
  d.db = db_;
  return d;
}

void ConvolutionRuntime::forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
                                 const ForwardContext& fwd) {
  activation_.forward(ctx, output, fwd.training, [&](Tensor& z) {
    ctx.backend().convolutionForward(input, w_, b_, z, geometry_);
  });
}

void ConvolutionRuntime::backwardActivation(DeviceContext& ctx, const Tensor& output,
                                            Tensor& grad) {
  activation_.backward(ctx, output, grad, grad);
}

void ConvolutionRuntime::backwardParams(DeviceContext& ctx, const Tensor& input,
                                        const Tensor& grad) {
  ctx.backend().convolutionBackwardWeights(input, grad, dw_, db_, geometry_);
}

void ConvolutionRuntime::backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) {
  ctx.backend().convolutionBackwardData(grad, w_, inputGrad, geometry_);
}

void ConvolutionRuntime::backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad,
                                  bool params, Tensor* inputGrad) {
  if (!params || inputGrad == nullptr) {
    RuntimeLayer::backward(ctx, input, grad, params, inputGrad);
    return;
  }
  ctx.backend().convolutionBackward(input, grad, w_, *inputGrad, dw_, db_, geometry_);
}

}  // namespace

bool resolveWindow(ConvolutionMode mode, int64_t inH, int64_t inW, WindowGeometry& g,
                   std::string& why) {
  auto pairText = [](int64_t a, int64_t b) { return std::to_string(a) + "x" + std::to_string(b); };
  for (const auto& [name, h, w] :
       {std::tuple{"kernel size", g.kernelH, g.kernelW}, std::tuple{"stride", g.strideH, g.strideW},
        std::tuple{"padding", g.padTop, g.padLeft},
        std::tuple{"dilation", g.dilationH, g.dilationW}})
    if (h > limits::kMaxExtent || w > limits::kMaxExtent) {
      why = std::string(name) + " must be at most " + std::to_string(limits::kMaxExtent) +
            ", got " + pairText(h, w);
      return false;
    }
  if (g.kernelH <= 0 || g.kernelW <= 0) {
    why = "kernel size must be positive, got " + pairText(g.kernelH, g.kernelW);
    return false;
  }
  if (g.strideH <= 0 || g.strideW <= 0) {
    why = "stride must be positive, got " + pairText(g.strideH, g.strideW);
    return false;
  }
  if (g.padTop < 0 || g.padLeft < 0) {
    why = "padding must be >= 0, got " + pairText(g.padTop, g.padLeft);
    return false;
  }
  if (g.dilationH <= 0 || g.dilationW <= 0) {
    why = "dilation must be positive, got " + pairText(g.dilationH, g.dilationW);
    return false;
  }
  const int64_t effH = g.dilationH * (g.kernelH - 1) + 1, effW = g.dilationW * (g.kernelW - 1) + 1;
  if (mode == ConvolutionMode::Same) {
    // out = ceil(in / stride); pad so the last window ends at the input's edge (extra on the end).
    const int64_t outH = (inH + g.strideH - 1) / g.strideH,
                  outW = (inW + g.strideW - 1) / g.strideW;
    const int64_t padH = std::max<int64_t>((outH - 1) * g.strideH + effH - inH, 0);
    const int64_t padW = std::max<int64_t>((outW - 1) * g.strideW + effW - inW, 0);
    g.padTop = padH / 2;
    g.padBottom = padH - g.padTop;
    g.padLeft = padW / 2;
    g.padRight = padW - g.padLeft;
    return true;
  }
  g.padBottom = g.padTop;
  g.padRight = g.padLeft;
  const int64_t spanH = inH + 2 * g.padTop - effH, spanW = inW + 2 * g.padLeft - effW;
  if (spanH < 0 || spanW < 0) {
    why = "kernel " + pairText(g.kernelH, g.kernelW) + " does not fit the padded input " +
          pairText(inH + 2 * g.padTop, inW + 2 * g.padLeft);
    return false;
  }
  if (mode == ConvolutionMode::Strict && (spanH % g.strideH != 0 || spanW % g.strideW != 0)) {
    why = "ConvolutionMode.Strict: input " + pairText(inH, inW) + " with kernel " +
          pairText(g.kernelH, g.kernelW) + ", stride " + pairText(g.strideH, g.strideW) +
          " and padding " + pairText(g.padTop, g.padLeft) +
          " does not tile exactly; use Truncate or Same, or change the sizes";
    return false;
  }
  return true;
}

InputType ConvolutionLayer::resolve(int index, const InputType& input,
                                    const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  if (!convolutionMode) convolutionMode = defaults.convolutionMode;
  if (input.kind == InputType::Kind::FeedForward)
    throw ConfigError(where(index) + ": needs image input but receives " + input.toString() +
                      "; call setInputType(InputType::convolutional(h, w, c)) or "
                      "convolutionalFlat(...)");
  if (nIn == 0) nIn = input.channels;
  if (nIn != input.channels)
    throw ConfigError(where(index) + ": nIn is " + std::to_string(nIn) + " but the input has " +
                      std::to_string(input.channels) + " channels (" + input.toString() + ")");
  if (nOut <= 0 || nOut > limits::kMaxExtent)
    throw ConfigError(where(index) + ": nOut must be between 1 and " +
                      std::to_string(limits::kMaxExtent) + ", got " + std::to_string(nOut));
  geometry = WindowGeometry{kernel.h,  kernel.w,  stride.h,  stride.w,   padding.h,
                            padding.w, padding.h, padding.w, dilation.h, dilation.w};
  std::string why;
  if (!resolveWindow(*convolutionMode, input.height, input.width, geometry, why))
    throw ConfigError(where(index) + ": " + why);
  if (!limits::boundedProduct({nOut, nIn, kernel.h, kernel.w}, limits::kMaxParameters))
    throw ConfigError(where(index) + ": nOut " + std::to_string(nOut) + " x nIn " +
                      std::to_string(nIn) + " x kernel " + std::to_string(kernel.h) + "x" +
                      std::to_string(kernel.w) + " weights exceed the limit of " +
                      std::to_string(limits::kMaxParameters));
  validateCommon(index);
  return InputType::convolutional(geometry.outH(input.height), geometry.outW(input.width), nOut);
}

std::unique_ptr<layers::RuntimeLayer> ConvolutionLayer::instantiate() const {
  return std::make_unique<ConvolutionRuntime>(*this);
}

std::vector<ParamSpec> ConvolutionLayer::paramSpecs() const {
  const double area = static_cast<double>(kernel.h * kernel.w);
  const double fanIn = static_cast<double>(nIn) * area;
  const double fanOut = static_cast<double>(nOut) * area / static_cast<double>(stride.h * stride.w);
  std::vector<ParamSpec> specs;
  if (hasBias)
    specs.push_back({"b", Shape{nOut}, true, std::nullopt, 0, 0, float(biasInit.value_or(0))});
  specs.push_back({"W", Shape{nOut, nIn, kernel.h, kernel.w}, false, weightInit, fanIn, fanOut});
  return specs;
}

void writePair(LayerFieldWriter& out, std::string_view key, const ConvolutionLayer::Pair& p) {
  const int64_t values[] = {p.h, p.w};
  out.integers(key, values);
}

ConvolutionLayer::Pair readPair(const LayerFieldReader& in, std::string_view key) {
  const auto v = in.sizes(key, 2, limits::kMaxExtent);
  return {v[0], v[1]};
}

void ConvolutionLayer::writeFields(LayerFieldWriter& out) const {
  writePair(out, "kernel", kernel);
  writePair(out, "stride", stride);
  writePair(out, "padding", padding);
  writePair(out, "dilation", dilation);
  out.optionalEnum("convolutionMode", kConvolutionModeNames, convolutionMode);
  out.integer("nIn", nIn);
  out.integer("nOut", nOut);
  out.boolean("hasBias", hasBias);
}

void ConvolutionLayer::readFields(const LayerFieldReader& in) {
  kernel = readPair(in, "kernel");
  stride = readPair(in, "stride");
  padding = readPair(in, "padding");
  dilation = readPair(in, "dilation");
  convolutionMode = in.optionalEnum("convolutionMode", kConvolutionModeNames);
  nIn = in.size("nIn", limits::kMaxExtent);  // input channels
  nOut = in.size("nOut", limits::kMaxExtent);
  hasBias = in.boolean("hasBias");
}

}  // namespace dl4cpp