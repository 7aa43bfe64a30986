// The CUDA backend of a build without CUDA (DL4CPP_WITH_CUDA=OFF, or no CUDA Toolkit found).
#include <dl4cpp/config.h>
#include <dl4cpp/nn/backend/cuda/CudaBackendFactory.h>

namespace dl4cpp::cuda {

std::unique_ptr<Backend> makeCudaBackend(int index) {
  throw BackendError("cuda:" + std::to_string(index) +
                     " requested, but dl4cpp " DL4CPP_VERSION
                     " was built without CUDA; use Device::cpu() or rebuild with the CUDA "
                     "Toolkit installed and -DDL4CPP_WITH_CUDA=ON");
}

int deviceCount() { return 0; }

}  // namespace dl4cpp::cuda
