#pragma once
// Entry points of the CUDA backend. A build without CUDA links CudaStub.cpp, whose versions say
// so clearly instead of failing somewhere deep in a layer.
#include <memory>

#include "nn/backend/Backend.h"

namespace dl4cpp::cuda {

// The backend for CUDA device `index`; throws BackendError in a build without CUDA.
std::unique_ptr<Backend> makeCudaBackend(int index);
// Visible CUDA devices (0 in a build without CUDA).
int deviceCount();

}  // namespace dl4cpp::cuda
