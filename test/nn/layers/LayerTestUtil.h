#pragma once
// Helpers for layer tests: a resolved layer bound to parameter tensors the test owns.
#include <dl4cpp/dl4cpp.h>

#include <memory>
#include <string>
#include <vector>

#include "nn/layers/RuntimeLayer.h"

namespace testutil {

struct BoundLayer {
  std::unique_ptr<dl4cpp::layers::RuntimeLayer> layer;
  std::vector<dl4cpp::Tensor> params, grads;
};

// Resolves `conf` against `input`, instantiates it and binds `paramValues` (one vector per
// ParamSpec, in order) plus zeroed gradient tensors.
template <typename Conf>
BoundLayer bind(Conf conf, const dl4cpp::InputType& input,
                const std::vector<std::vector<float>>& paramValues) {
  conf.resolve(0, input, dl4cpp::LayerDefaults{});
  BoundLayer b;
  b.layer = conf.instantiate();
  const auto specs = conf.paramSpecs();
  for (size_t i = 0; i < specs.size(); ++i) {
    b.params.push_back(dl4cpp::Tensor::fromVector(specs[i].shape, paramValues.at(i)));
    b.grads.emplace_back(specs[i].shape);
  }
  b.layer->bindParams(b.params, b.grads);
  return b;
}

// A forward context in training or inference mode (the random stream is unused by these layers).
inline dl4cpp::ForwardContext mode(bool training) { return dl4cpp::ForwardContext{training, 0}; }

inline void checkValues(const dl4cpp::Tensor& actual, const std::vector<float>& expected,
                        float tol = 1e-5f) {
  REQUIRE(actual.numel() == static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("element " << i);
    CHECK(actual.at(static_cast<int64_t>(i)) == doctest::Approx(expected[i]).epsilon(tol));
  }
}

// n rows of `inputs` features uniform in [-1, 1) and one-hot labels of `classes` classes, fixed by
// `seed`.
inline dl4cpp::DataSet randomClassificationBatch(int64_t n, int64_t inputs, int64_t classes,
                                                 uint64_t seed) {
  dl4cpp::Random random(seed);
  dl4cpp::Tensor features(dl4cpp::Shape{n, inputs});
  for (int64_t i = 0; i < features.numel(); ++i)
    features.data()[i] = static_cast<float>(random.uniform(-1.0, 1.0));
  dl4cpp::Tensor labels(dl4cpp::Shape{n, classes});
  for (int64_t r = 0; r < n; ++r)
    labels.data()[r * classes + static_cast<int64_t>(random.nextU64() % uint64_t(classes))] = 1;
  return {features, labels};
}

// The message of the E that `f` throws; fails the test when it throws nothing.
template <typename E, typename F>
std::string thrownMessage(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("expected an exception");
  return {};
}

}  // namespace testutil
