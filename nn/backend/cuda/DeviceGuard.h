#pragma once
// DeviceGuard: makes a CUDA device current for one scope and restores the previous one, so that
// helpers called from any thread (Tensor copies, averaging) never leave the caller's thread bound
// to another GPU.
#include <cuda_runtime.h>

#include "nn/backend/cuda/CudaCheck.h"

namespace dl4cpp::cuda {

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    DL4CPP_CUDA_CHECK(cudaGetDevice(&previous_));
    if (device != previous_) DL4CPP_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }  // no throw from a destructor; it was valid before
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace dl4cpp::cuda
