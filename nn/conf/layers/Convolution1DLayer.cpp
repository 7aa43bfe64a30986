#include "nn/conf/layers/Convolution1DLayer.h"

#include "nn/conf/layers/SequenceAsImage.h"

namespace dl4cpp {

namespace {

// ConfigError unless the window runs along time only and, for sequences of any length, keeps it.
void checkWindow(const std::string& where, const InputType& input, ConvolutionMode mode,
                 const ConvolutionLayer::Pair& kernel, const ConvolutionLayer::Pair& stride,
                 const ConvolutionLayer::Pair& padding, const ConvolutionLayer::Pair& dilation) {
  if (input.kind != InputType::Kind::Recurrent)
    throw ConfigError(where + ": needs sequences (N, C, T) but receives " + input.toString() +
                      "; set the input type with InputType::recurrent(size)");
  if (kernel.w != 1 || stride.w != 1 || padding.w != 0 || dilation.w != 1)
    throw ConfigError(where + ": a 1-D window has width 1 (kernel, stride, dilation 1, padding 0)");
  if (input.length == 0 && !(mode == ConvolutionMode::Same && stride.h == 1))
    throw ConfigError(where +
                      ": sequences of any length need a window that keeps their length "
                      "(ConvolutionMode::Same, stride 1); declare the length with "
                      "InputType::recurrent(size, length) for other windows");
}

}  // namespace

InputType Convolution1DLayer::resolve(int index, const InputType& input,
                                      const LayerDefaults& defaults) {
  if (!convolutionMode) convolutionMode = defaults.convolutionMode;
  checkWindow(where(index), input, *convolutionMode, kernel, stride, padding, dilation);
  // Any length fits Same mode; the window's extent stands in for an unfixed one.
  const InputType image = detail::sequenceAsImage(input, dilation.h * (kernel.h - 1) + 1);
  const InputType out = ConvolutionLayer::resolve(index, image, defaults);
  return InputType::recurrent(nOut, input.length > 0 ? out.height : 0);
}

std::unique_ptr<layers::RuntimeLayer> Convolution1DLayer::instantiate() const {
  return std::make_unique<detail::SequenceAsImageRuntime>(ConvolutionLayer::instantiate(),
                                                          "Convolution1DLayer");
}

}  // namespace dl4cpp
