// The one place where a device kind is mapped to its backend implementation, and Backend's
// defaults for backends that run every layer by itself.
#include "nn/backend/Backend.h"

#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cuda/CudaBackendFactory.h"

namespace dl4cpp {

std::vector<std::unique_ptr<NetworkStep>> Backend::planSteps(const std::vector<LayerDescription>&) {
  return {};
}

void Backend::runPlanned(OpPass, double, KernelRef kernel) { kernel(); }

std::unique_ptr<Backend> makeBackend(Device device) {
  switch (device.type) {
    case DeviceType::CPU:
      return std::make_unique<cpu::CpuBackend>();
    case DeviceType::CUDA:
      return cuda::makeCudaBackend(device.index);
  }
  throw BackendError("makeBackend: unknown device type");
}

}  // namespace dl4cpp
