#pragma once
// cuBLAS, opened with dlopen the first time a CUDA backend is created instead of being linked.
// Loading libcublas maps and relocates libcublasLt with it, over a hundred MiB resident in every
// process that links dl4cpp, GPU or not; CPU-only users of a CUDA-enabled build should not pay
// for it. The CUDA runtime (a few MiB) stays linked.
#include <cublas_v2.h>

namespace dl4cpp::cuda {

// The cuBLAS functions the backend calls. The cublas_v2.h names are macros for the `_v2` symbols,
// so decltype(&cublasCreate) is the type of the symbol this table holds.
struct CublasLibrary {
  decltype(&cublasCreate) create = nullptr;
  decltype(&cublasDestroy) destroy = nullptr;
  decltype(&cublasSetStream) setStream = nullptr;
  decltype(&cublasSetPointerMode) setPointerMode = nullptr;
  decltype(&cublasSgemm) sgemm = nullptr;
  decltype(&cublasSgemmStridedBatched) sgemmStridedBatched = nullptr;
  decltype(&cublasGetStatusName) statusName = nullptr;
  decltype(&cublasGetStatusString) statusString = nullptr;

  // Opens libcublas.so.<CUBLAS_VER_MAJOR> once per process (the loader's search path, then the
  // CUDA Toolkit directory found at build time) and resolves every function; thereafter returns
  // the same table. Throws CublasError naming the library or the missing symbol.
  static const CublasLibrary& get();
};

}  // namespace dl4cpp::cuda
