#pragma once
// The augmentation of the image-folder sample and the pipeline benchmark, as a DataVec
// PipelineImageTransform: MATLAB's imageDataAugmenter of its digit-training example
// (RandXReflection, RandRotation [-10 10], RandXTranslation and RandYTranslation [-2 2] pixels)
// plus a brightness and contrast jitter, each step with its own probability.
#include <dl4cpp/dl4cpp.h>

#include <memory>

namespace samples {

inline std::shared_ptr<const dl4cpp::ImageTransform> augmentationPipeline() {
  using namespace dl4cpp;
  using Step = PipelineImageTransform::Step;
  return std::make_shared<PipelineImageTransform>(
      std::vector<Step>{{std::make_shared<FlipImageTransform>(FlipMode::Horizontal), 0.5},
                        {std::make_shared<RotateImageTransform>(10.0), 0.5},
                        {std::make_shared<TranslateImageTransform>(2.0, 2.0), 0.5},
                        {std::make_shared<BrightnessContrastTransform>(20.0, 0.2), 0.3}});
}

}  // namespace samples
