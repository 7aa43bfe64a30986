#include "iterators/image/transform/PipelineImageTransform.h"

#include <fmt/format.h>

#include <cstdint>
#include <numeric>
#include <utility>

#include "nn/core/Error.h"

namespace dl4cpp {

PipelineImageTransform::PipelineImageTransform(std::vector<Step> steps, bool shuffle)
    : steps_(std::move(steps)), shuffle_(shuffle) {
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (!steps_[i].transform)
      throw ConfigError(fmt::format("PipelineImageTransform: step {} has no transform (null)", i));
    const double p = steps_[i].probability;
    if (!(p >= 0 && p <= 1))
      throw ConfigError(fmt::format(
          "PipelineImageTransform: step {}'s probability = {} must be in [0, 1]", i, p));
  }
}

void PipelineImageTransform::transform(Image& image, ExampleRandom& random) const {
  const int n = static_cast<int>(steps_.size());
  std::vector<int> order(steps_.size());
  std::iota(order.begin(), order.end(), 0);
  if (shuffle_) shuffleInPlace(order, random);
  struct Draw {
    bool runs;
    uint64_t key;
  };
  std::vector<Draw> draws(steps_.size());
  for (int i = 0; i < n; ++i) {
    const bool runs = random.bernoulli(steps_[i].probability);
    draws[i] = {runs, random.nextBits()};
  }
  for (int i : order) {
    if (!draws[i].runs) continue;
    ExampleRandom stepRandom(draws[i].key, 0, 0);  // the step's own stream, keyed by its draw
    steps_[i].transform->transform(image, stepRandom);
  }
}

}  // namespace dl4cpp
