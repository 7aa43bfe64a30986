// The CUDA backend of a build without CUDA (DL4CPP_WITH_CUDA=OFF, or no CUDA Toolkit found).
#include <dl4cpp/config.h>

#include "nn/backend/cuda/CudaBackendFactory.h"
#include "nn/backend/cuda/CudaMemory.h"

namespace dl4cpp::cuda {

namespace {
[[noreturn]] void noCuda(const std::string& what) {
  throw BackendError(what + " requested, but dl4cpp " DL4CPP_VERSION
                            " was built without CUDA; use Device::cpu() or rebuild with the CUDA "
                            "Toolkit installed and -DDL4CPP_WITH_CUDA=ON");
}
}  // namespace

std::unique_ptr<Backend> makeCudaBackend(int index) { noCuda("cuda:" + std::to_string(index)); }

int deviceCount() { return 0; }

float* allocateDevice(int device, int64_t) { noCuda("cuda:" + std::to_string(device) + " memory"); }
void releaseDevice(int, float*) {}
AllocatorStats allocatorStats(int) { return {}; }
void copyFloats(float*, Device dst, const float*, Device src, int64_t) {
  noCuda("a copy " + src.toString() + " -> " + dst.toString());
}
void fillFloats(float*, int device, int64_t, float) {
  noCuda("cuda:" + std::to_string(device) + " memory");
}
void averageSlice(const std::vector<Tensor>&, const std::vector<int64_t>&, std::vector<Tensor>&,
                  int64_t, int64_t, int device) {
  noCuda("averaging on cuda:" + std::to_string(device));
}

}  // namespace dl4cpp::cuda
