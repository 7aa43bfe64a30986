#pragma once
// The model zoo (DL4J's org.deeplearning4j.zoo): well-known architectures as ready
// configurations, in DL4J's names, for a given input shape and class count.
//
//   ComputationGraph net = ResNet50::builder().numClasses(10).inputShape({3, 64,
//   64}).build().init(); MultiLayerNetwork lenet = LeNet::builder().numClasses(10).build().init();
//
// No pretrained weights: dl4cpp cannot download DL4J's (or anyone's) here, so every zoo model
// starts from the seed's initialisation; use them as architectures to train, or load weights you
// saved yourself (ModelSerializer). inputShape is {channels, height, width}, as DL4J's.
// Each model's parameter count at its published shape is tested against the published
// architecture's (test/nn/zoo/ZooModelTest.cpp).
#include <array>
#include <cstdint>
#include <utility>

#include "nn/updaters/Updaters.h"

namespace dl4cpp {

// What every zoo model is configured by, and the builder that sets it (CRTP: Model derives from
// ZooModel<Model> and provides conf() and init()).
template <typename Model>
class ZooModel {
 public:
  class Builder {
   public:
    Builder& numClasses(int64_t n) {
      model_.numClasses_ = n;
      return *this;
    }
    Builder& inputShape(std::array<int64_t, 3> channelsHeightWidth) {
      model_.inputShape_ = channelsHeightWidth;
      return *this;
    }
    Builder& seed(uint64_t s) {
      model_.seed_ = s;
      return *this;
    }
    Builder& updater(const UpdaterParams& u) {
      model_.updater_ = u;
      return *this;
    }
    Model build() const { return model_; }

   private:
    Model model_;
  };
  static Builder builder() { return Builder(); }

  int64_t numClasses() const { return numClasses_; }
  const std::array<int64_t, 3>& inputShape() const { return inputShape_; }
  uint64_t seed() const { return seed_; }

 protected:
  ZooModel(int64_t numClasses, std::array<int64_t, 3> inputShape, UpdaterParams updater)
      : numClasses_(numClasses), inputShape_(inputShape), updater_(std::move(updater)) {}

  int64_t numClasses_;
  std::array<int64_t, 3> inputShape_;
  uint64_t seed_ = 1234;
  UpdaterParams updater_;
};

}  // namespace dl4cpp
