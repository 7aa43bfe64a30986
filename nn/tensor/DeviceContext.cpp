#include <dl4cpp/nn/tensor/DeviceContext.h>

#include <thread>

#include <dl4cpp/nn/backend/cuda/CudaBackendFactory.h>

namespace dl4cpp {

int hardwareConcurrency() { return std::max(1u, std::thread::hardware_concurrency()); }

int cudaDeviceCount() { return cuda::deviceCount(); }

DeviceContext::DeviceContext(Device device, int numThreads)
    : device_(device),
      numThreads_(numThreads > 0 ? numThreads : hardwareConcurrency()),
      backend_(makeBackend(device)) {}

DeviceContext::~DeviceContext() = default;

void DeviceContext::setNumThreads(int numThreads) {
  numThreads_ = numThreads > 0 ? numThreads : hardwareConcurrency();
}

}  // namespace dl4cpp
