#pragma once
// PipelineImageTransform: DataVec's PipelineImageTransform: transforms applied in order (or, with
// shuffle, in an order drawn per example), each with its own probability, as DL4J's
// List<Pair<ImageTransform, Double>>; MATLAB's imageDataAugmenter is such a pipeline.
//
// Draws. Each step runs on a stream of its own, keyed by one draw of the example's stream, and
// every step's decision and key are drawn whether or not the step runs: the example's stream
// gives, always, the shuffle's n - 1 draws (when shuffling), then for step 0, 1, ...: the decision
// and the key. So a step's decision and its random parameters depend only on (seed, epoch,
// example) and the step's index, never on which earlier steps ran or how many values they drew:
// adding a step, changing a probability, or a transform that draws more values leaves every other
// step's draws as they were (an example keeps its rotation angle when flip's probability
// changes), and the result of each step is reproducible on its own. Shared draws would tie them
// all together: one step more or less would change every later step's parameters.
#include <memory>
#include <vector>

#include "iterators/image/ImageTransform.h"

namespace dl4cpp {

class PipelineImageTransform : public ImageTransform {
 public:
  struct Step {
    std::shared_ptr<const ImageTransform> transform;
    double probability = 1.0;  // in [0, 1]: 0 never runs, 1 always does
  };

  // ConfigError naming the step for a null transform or a probability outside [0, 1]. With
  // shuffle, each example's steps run in a uniformly random order (DataVec shuffles the list).
  explicit PipelineImageTransform(std::vector<Step> steps, bool shuffle = false);

  void transform(Image& image, ExampleRandom& random) const override;

 private:
  std::vector<Step> steps_;
  bool shuffle_;
};

}  // namespace dl4cpp
