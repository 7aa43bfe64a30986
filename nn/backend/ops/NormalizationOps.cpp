#include "nn/backend/ops/NormalizationOps.h"

#include <string>

#include "nn/backend/OpNames.h"
#include "nn/core/Error.h"

namespace dl4cpp::detail {

void checkBatchNormActivation(ActivationKind activation) {
  if (!batchNormFuses(activation))
    throw BackendError("batch normalisation applies IDENTITY or RELU itself, not " +
                       toString(activation));
}

void checkBatchNormOutput(ActivationKind activation, const Tensor& x, const Tensor& y) {
  checkBatchNormActivation(activation);
  if (activation == ActivationKind::RELU && y.shape() != x.shape())
    throw ShapeError("batchNormBackward with RELU: the forward output y " + y.shape().toString() +
                     " must be shaped as x " + x.shape().toString());
}

}  // namespace dl4cpp::detail
