#include "nn/conf/layers/Convolution1DLayer.h"

#include "nn/conf/layers/SequenceAsImage.h"

namespace dl4cpp {

InputType Convolution1DLayer::resolve(int index, const InputType& input,
                                      const LayerDefaults& defaults) {
  if (!convolutionMode) convolutionMode = defaults.convolutionMode;
  detail::checkSequenceWindow(where(index), input, *convolutionMode,
                              {kernel.h, kernel.w, stride.h, stride.w, padding.h, padding.w,
                               padding.h, padding.w, dilation.h, dilation.w});
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
