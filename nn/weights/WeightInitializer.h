#pragma once
#include <cstdint>

#include "nn/conf/WeightInitScheme.h"
#include "nn/tensor/Random.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

// Fills `w` according to `scheme` (see WeightInit for the named schemes' distributions), drawn on
// the host in element order. A distribution's parameters must be valid (Distribution::problem()).
void initWeights(const WeightInitScheme& scheme, double fanIn, double fanOut, Tensor& w,
                 Random& random);

}  // namespace dl4cpp
