// The CUDA backend's entry points (the CUDA build's counterpart of CudaStub.cpp).
#include <cuda_runtime.h>

#include <mutex>

#include "nn/backend/cuda/CudaBackend.h"
#include "nn/backend/cuda/CudaBackendFactory.h"

namespace dl4cpp::cuda {

std::unique_ptr<Backend> makeCudaBackend(int index) { return std::make_unique<CudaBackend>(index); }

int deviceCount() {
  // Asked once: the answer cannot change while the process runs. No driver, or a driver without
  // devices, both mean "no CUDA device", which is how the build machines run the CUDA tests.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
}

}  // namespace dl4cpp::cuda
