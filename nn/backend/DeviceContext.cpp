#include "nn/backend/DeviceContext.h"

#include <thread>

#include "nn/backend/ProfilingObserver.h"

namespace dl4cpp {

int hardwareConcurrency() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

DeviceContext::DeviceContext(Device device, int numThreads)
    : device_(device),
      numThreads_(numThreads > 0 ? numThreads : hardwareConcurrency()),
      backend_(makeBackend(device)) {}

DeviceContext::~DeviceContext() = default;

void DeviceContext::setProfiler(std::shared_ptr<LayerProfiler> profiler) {
  backend_->setObserver(nullptr);
  profiling_ = profiler ? std::make_unique<ProfilingObserver>(profiler) : nullptr;
  profiler_ = std::move(profiler);
  backend_->setObserver(profiling_.get());
}

void DeviceContext::setNumThreads(int numThreads) {
  numThreads_ = numThreads > 0 ? numThreads : hardwareConcurrency();
}

}  // namespace dl4cpp
