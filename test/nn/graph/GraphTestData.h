#pragma once
// Data and a corrupted vertex for the graph tests: seeded random tensors, one-hot labels, and a
// vertex whose backward pass is wrong on purpose, which every gradient check must catch.
#include <dl4cpp/dl4cpp.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "nn/layers/VertexRuntime.h"
#include "nn/tensor/Random.h"

namespace dl4cpp::testing {

// Uniform in [low, high), drawn from `seed` alone.
inline Tensor randomTensor(const Shape& shape, uint64_t seed, double low = -1, double high = 1) {
  Random random(seed);
  Tensor t(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = float(random.uniform(low, high));
  return t;
}

// n one-hot rows of `classes` columns, the classes drawn from `seed`.
inline Tensor oneHot(int64_t n, int64_t classes, uint64_t seed) {
  Random random(seed);
  Tensor t(Shape{n, classes});
  t.fill(0);
  for (int64_t r = 0; r < n; ++r)
    t.data()[r * classes + int64_t(random.nextU64() % uint64_t(classes))] = 1;
  return t;
}

// `V` with a backward pass 10% too large for its first input: the gradient checks must notice.
template <typename V>
class CorruptedVertex : public V {
 public:
  using V::V;
  std::shared_ptr<GraphVertex> clone() const override {
    return std::make_shared<CorruptedVertex>(*this);
  }
  std::unique_ptr<layers::VertexRuntime> instantiate(
      const std::vector<InputType>& inputs) const override {
    struct Runtime : layers::VertexRuntime {
      std::unique_ptr<layers::VertexRuntime> inner;
      void forward(DeviceContext& c, std::span<const Tensor> in, Tensor& out, bool t) override {
        inner->forward(c, in, out, t);
      }
      void backward(DeviceContext& c, std::span<const Tensor> in, const Tensor& out,
                    const Tensor& g, std::span<Tensor> dx) override {
        inner->backward(c, in, out, g, dx);
        if (!dx[0].empty())
          for (int64_t i = 0; i < dx[0].numel(); ++i) dx[0].data()[i] *= 1.1f;
      }
    };
    auto r = std::make_unique<Runtime>();
    r->inner = V::instantiate(inputs);
    return r;
  }
};

}  // namespace dl4cpp::testing
