#pragma once
// Runtime layers keep what their backward pass reads in buffers of their own, sized by the largest
// batch seen: a view of `storage` shaped `shape` on `device`, `storage` grown (never shrunk) first
// when it is too small, so a steady run allocates nothing per batch.
#include "nn/tensor/Tensor.h"

namespace dl4cpp::layers {

inline Tensor scratchView(Tensor& storage, const Shape& shape, Device device) {
  if (storage.numel() < shape.numel()) storage = Tensor(Shape{shape.numel()}, device);
  return storage.view(0, shape);
}

}  // namespace dl4cpp::layers
