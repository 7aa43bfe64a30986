#include "nn/backend/ProfilingObserver.h"

#include <chrono>

namespace dl4cpp {

namespace {
ProfilePhase profilePhase(OpPhase phase) {
  switch (phase) {
    case OpPhase::FORWARD:
      return ProfilePhase::FORWARD;
    case OpPhase::ACTIVATION_FORWARD:
      return ProfilePhase::ACTIVATION_FORWARD;
    case OpPhase::LOSS:
      return ProfilePhase::LOSS;
    case OpPhase::ACTIVATION_BACKWARD:
      return ProfilePhase::ACTIVATION_BACKWARD;
    case OpPhase::BACKWARD_DATA:
      return ProfilePhase::BACKWARD_DATA;
    case OpPhase::BACKWARD_WEIGHTS:
      return ProfilePhase::BACKWARD_WEIGHTS;
    case OpPhase::UPDATER:
      return ProfilePhase::UPDATER;
    case OpPhase::OTHER:
      return ProfilePhase::OTHER;
  }
  return ProfilePhase::OTHER;
}
}  // namespace

ProfilingObserver::ProfilingObserver(std::shared_ptr<LayerProfiler> profiler)
    : profiler_(std::move(profiler)) {}

void ProfilingObserver::run(OpPhase phase, double (*flops)(const void*), const void* flopsArg,
                            KernelRef op) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  op();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  profiler_->record(profilePhase(phase), seconds, flops(flopsArg));
}

}  // namespace dl4cpp
