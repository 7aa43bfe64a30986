#pragma once
#include <dl4cpp/nn/conf/Enums.h>
#include <dl4cpp/nn/tensor/Tensor.h>
#include <dl4cpp/nn/weights/Random.h>

#include <cstdint>

namespace dl4cpp {

// Fills the host tensor `w` according to `scheme` (see WeightInit for the distributions).
void initWeights(WeightInit scheme, double fanIn, double fanOut, Tensor& w, Random& random);

}  // namespace dl4cpp
