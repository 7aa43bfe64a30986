#include "nn/backend/cuda/CublasLibrary.h"

#include <dlfcn.h>

#include <string>

#include "nn/core/Error.h"

// The cublas_v2.h macro expanded first: DL4CPP_SYMBOL_NAME(cublasCreate) is "cublasCreate_v2".
#define DL4CPP_STRINGIFY(x) #x
#define DL4CPP_SYMBOL_NAME(x) DL4CPP_STRINGIFY(x)

namespace dl4cpp::cuda {
namespace {

void* openCublas() {
  const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  const std::string firstError = dlerror();
  const std::string inToolkit = std::string(DL4CPP_CUDA_LIBRARY_DIR) + "/" + name;
  if (void* handle = dlopen(inToolkit.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  throw CublasError("cannot open cuBLAS (" + name + "), needed by the CUDA backend: " + firstError +
                    "; also tried " + inToolkit + ": " + dlerror());
}

template <typename Function>
void resolve(void* handle, const char* symbol, Function& function) {
  function = reinterpret_cast<Function>(dlsym(handle, symbol));
  if (function == nullptr)
    throw CublasError(std::string("cuBLAS has no symbol ") + symbol +
                      " (a cuBLAS older than the toolkit dl4cpp was built with?)");
}

CublasLibrary load() {
  void* handle = openCublas();  // never closed: the table lives as long as the process
  CublasLibrary library;
  resolve(handle, DL4CPP_SYMBOL_NAME(cublasCreate), library.create);
  resolve(handle, DL4CPP_SYMBOL_NAME(cublasDestroy), library.destroy);
  resolve(handle, DL4CPP_SYMBOL_NAME(cublasSetStream), library.setStream);
  resolve(handle, DL4CPP_SYMBOL_NAME(cublasSetPointerMode), library.setPointerMode);
  resolve(handle, DL4CPP_SYMBOL_NAME(cublasSgemm), library.sgemm);
  resolve(handle, DL4CPP_SYMBOL_NAME(cublasSgemmStridedBatched), library.sgemmStridedBatched);
  resolve(handle, DL4CPP_SYMBOL_NAME(cublasGetStatusName), library.statusName);
  resolve(handle, DL4CPP_SYMBOL_NAME(cublasGetStatusString), library.statusString);
  return library;
}

}  // namespace

const CublasLibrary& CublasLibrary::get() {
  // A magic static: thread-safe, and a failed load throws and is retried by the next caller.
  static const CublasLibrary library = load();
  return library;
}

}  // namespace dl4cpp::cuda
