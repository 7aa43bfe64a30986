#pragma once
// ProfilingObserver: an OpObserver (nn/backend/ops/OpDispatch.h) that times every op a backend
// runs and charges it to a LayerProfiler (the current layer, the op's phase, its analytic FLOPs).
// It changes no result: every op runs unchanged. DeviceContext::setProfiler installs it; without
// a profiler the backend's dispatch calls each op directly, so profiling costs nothing when off.
// It names no op: a new op is seen through the dispatch its family header declares.
//
// Times are wall-clock around each call. That is the op's cost on the CPU backend, whose ops
// complete before returning; an asynchronous backend would need to synchronise per op.
#include <memory>

#include "nn/backend/ops/OpDispatch.h"
#include "nn/profiling/LayerProfiler.h"

namespace dl4cpp {

class ProfilingObserver final : public OpObserver {
 public:
  explicit ProfilingObserver(std::shared_ptr<LayerProfiler> profiler);

  LayerProfiler& profiler() { return *profiler_; }

  void run(OpPhase phase, double (*flops)(const void*), const void* flopsArg,
           KernelRef op) override;

 private:
  std::shared_ptr<LayerProfiler> profiler_;
};

}  // namespace dl4cpp
