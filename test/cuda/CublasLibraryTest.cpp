// cuBLAS is opened on first use rather than linked (CublasLibrary.h). Opening it and resolving
// every function needs the library, not a GPU, so this runs wherever the build has CUDA.
#include <dl4cpp/config.h>
#include <doctest/doctest.h>

#if DL4CPP_HAVE_CUDA
#include <dlfcn.h>

#include <string>

#include "nn/backend/cuda/CublasLibrary.h"

TEST_SUITE("cuda") {
  TEST_CASE("CublasLibrary: opens cuBLAS once, resolves every function, and they answer") {
    using dl4cpp::cuda::CublasLibrary;
    const CublasLibrary& library = CublasLibrary::get();
    CHECK(&library == &CublasLibrary::get());
    CHECK((library.create != nullptr));
    CHECK((library.destroy != nullptr));
    CHECK((library.setStream != nullptr));
    CHECK((library.setPointerMode != nullptr));
    CHECK((library.sgemm != nullptr));
    CHECK((library.sgemmStridedBatched != nullptr));
    // The status functions are pure and need no device: they prove the symbols are the real ones.
    CHECK(std::string(library.statusName(CUBLAS_STATUS_SUCCESS)) == "CUBLAS_STATUS_SUCCESS");
    CHECK(std::string(library.statusName(CUBLAS_STATUS_NOT_INITIALIZED)) ==
          "CUBLAS_STATUS_NOT_INITIALIZED");
    CHECK(!std::string(library.statusString(CUBLAS_STATUS_ALLOC_FAILED)).empty());
    // The very library the loader holds now is cuBLAS of the major version built against.
    const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* loaded = dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (loaded == nullptr)  // opened by its full path in the toolkit directory
      loaded = dlopen((std::string(DL4CPP_TEST_CUDA_LIBRARY_DIR) + "/" + name).c_str(),
                      RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(loaded != nullptr);
    CHECK(dlsym(loaded, "cublasGetStatusName") == reinterpret_cast<void*>(library.statusName));
    dlclose(loaded);
  }
}
#endif
