#pragma once
// Every CUDA runtime and cuBLAS call of the backend goes through these macros, so a failure becomes
// a CudaError / CublasError naming the call, the file and the line instead of a status code that
// somebody forgot to look at.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "nn/backend/cuda/CublasLibrary.h"
#include "nn/core/Error.h"

namespace dl4cpp::cuda {

[[noreturn]] inline void throwCudaError(cudaError_t status, const char* call, const char* file,
                                        int line) {
  throw CudaError(std::string(call) + " failed with " + cudaGetErrorName(status) + " (" +
                  cudaGetErrorString(status) + ") at " + file + ":" + std::to_string(line));
}

[[noreturn]] inline void throwCublasError(cublasStatus_t status, const char* call, const char* file,
                                          int line) {
  const CublasLibrary& cublas = CublasLibrary::get();
  throw CublasError(std::string(call) + " failed with " + cublas.statusName(status) + " (" +
                    cublas.statusString(status) + ") at " + file + ":" + std::to_string(line));
}

}  // namespace dl4cpp::cuda

#define DL4CPP_CUDA_CHECK(call)                                                 \
  do {                                                                          \
    const cudaError_t dl4cppStatus_ = (call);                                   \
    if (dl4cppStatus_ != cudaSuccess)                                           \
      ::dl4cpp::cuda::throwCudaError(dl4cppStatus_, #call, __FILE__, __LINE__); \
  } while (0)

#define DL4CPP_CUBLAS_CHECK(call)                                                 \
  do {                                                                            \
    const cublasStatus_t dl4cppStatus_ = (call);                                  \
    if (dl4cppStatus_ != CUBLAS_STATUS_SUCCESS)                                   \
      ::dl4cpp::cuda::throwCublasError(dl4cppStatus_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: reports a bad launch configuration at the launch site.
#define DL4CPP_CUDA_CHECK_LAUNCH() DL4CPP_CUDA_CHECK(cudaGetLastError())
