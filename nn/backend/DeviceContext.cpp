#include "nn/backend/DeviceContext.h"

#include <thread>

#include "nn/backend/ProfilingBackend.h"

namespace dl4cpp {

int hardwareConcurrency() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

DeviceContext::DeviceContext(Device device, int numThreads)
    : device_(device),
      numThreads_(numThreads > 0 ? numThreads : hardwareConcurrency()),
      backend_(makeBackend(device)),
      active_(backend_.get()) {}

DeviceContext::~DeviceContext() = default;

void DeviceContext::setProfiler(std::shared_ptr<LayerProfiler> profiler) {
  profiling_ = profiler ? std::make_unique<ProfilingBackend>(*backend_, profiler) : nullptr;
  profiler_ = std::move(profiler);
  active_ = profiling_ ? profiling_.get() : backend_.get();
}

void DeviceContext::setNumThreads(int numThreads) {
  numThreads_ = numThreads > 0 ? numThreads : hardwareConcurrency();
}

}  // namespace dl4cpp
