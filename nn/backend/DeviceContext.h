#pragma once
// DeviceContext: everything one worker needs to run ops on one device: the backend (for the CPU,
// a oneDNN engine and stream plus the primitive cache; for CUDA, a stream and cuBLAS handle) and
// the number of threads it may use. Not copyable and not shared: each model replica owns one and
// uses it from one thread at a time, so there is no global mutable state anywhere in dl4cpp.
#include <memory>

#include "nn/backend/Backend.h"
#include "nn/tensor/Device.h"

namespace dl4cpp {

class LayerProfiler;

class DeviceContext {
 public:
  // numThreads: CPU threads this context's ops may use; 0 = every core of the machine.
  explicit DeviceContext(Device device = Device::cpu(), int numThreads = 0);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  Device device() const { return device_; }
  int numThreads() const { return numThreads_; }
  // Changes the thread budget (takes effect at the next bindToCurrentThread()).
  void setNumThreads(int numThreads);

  // Call on the thread about to run ops (MultiLayerNetwork does, at the start of fit/output).
  void bindToCurrentThread() { backend_->bindToCurrentThread(numThreads_); }
  // The backend ops go to.
  Backend& backend() { return *backend_; }

  // With a profiler, every op is timed and charged to it (a ProfilingObserver installed on the
  // backend); nullptr removes the observer, so ops cost nothing extra.
  void setProfiler(std::shared_ptr<LayerProfiler> profiler);
  // The installed profiler, or nullptr.
  LayerProfiler* profiler() const { return profiler_.get(); }

 private:
  Device device_;
  int numThreads_;
  std::unique_ptr<Backend> backend_;       // the device's backend
  std::unique_ptr<OpObserver> profiling_;  // ProfilingObserver on backend_, while profiling
  std::shared_ptr<LayerProfiler> profiler_;
};

// Hardware threads of this machine (at least 1).
int hardwareConcurrency();

}  // namespace dl4cpp
