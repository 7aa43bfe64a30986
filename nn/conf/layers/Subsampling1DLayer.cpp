#include "nn/conf/layers/Subsampling1DLayer.h"

#include "nn/conf/layers/SequenceAsImage.h"

namespace dl4cpp {

InputType Subsampling1DLayer::resolve(int index, const InputType& input,
                                      const LayerDefaults& defaults) {
  if (!convolutionMode) convolutionMode = defaults.convolutionMode;
  detail::checkSequenceWindow(
      where(index), input, *convolutionMode,
      {kernel.h, kernel.w, stride.h, stride.w, padding.h, padding.w, padding.h, padding.w, 1, 1});
  const InputType out =
      SubsamplingLayer::resolve(index, detail::sequenceAsImage(input, kernel.h), defaults);
  return InputType::recurrent(input.size, input.length > 0 ? out.height : 0);
}

std::unique_ptr<layers::RuntimeLayer> Subsampling1DLayer::instantiate() const {
  return std::make_unique<detail::SequenceAsImageRuntime>(SubsamplingLayer::instantiate(),
                                                          "Subsampling1DLayer");
}

}  // namespace dl4cpp
