#include "nn/conf/layers/Subsampling1DLayer.h"

#include "nn/conf/layers/SequenceAsImage.h"

namespace dl4cpp {

InputType Subsampling1DLayer::resolve(int index, const InputType& input,
                                      const LayerDefaults& defaults) {
  if (!convolutionMode) convolutionMode = defaults.convolutionMode;
  if (input.kind != InputType::Kind::Recurrent)
    throw ConfigError(where(index) + ": needs sequences (N, C, T) but receives " +
                      input.toString() + "; set the input type with InputType::recurrent(size)");
  if (kernel.w != 1 || stride.w != 1 || padding.w != 0)
    throw ConfigError(where(index) + ": a 1-D window has width 1 (kernel and stride 1, padding 0)");
  if (input.length == 0 && !(*convolutionMode == ConvolutionMode::Same && stride.h == 1))
    throw ConfigError(where(index) +
                      ": sequences of any length need a window that keeps their length "
                      "(ConvolutionMode::Same, stride 1); declare the length with "
                      "InputType::recurrent(size, length) for other windows");
  const InputType out =
      SubsamplingLayer::resolve(index, detail::sequenceAsImage(input, kernel.h), defaults);
  return InputType::recurrent(input.size, input.length > 0 ? out.height : 0);
}

std::unique_ptr<layers::RuntimeLayer> Subsampling1DLayer::instantiate() const {
  return std::make_unique<detail::SequenceAsImageRuntime>(SubsamplingLayer::instantiate(),
                                                          "Subsampling1DLayer");
}

}  // namespace dl4cpp
