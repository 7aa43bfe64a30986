#pragma once
// What every op family (ConvolutionOps.h, PoolingOps.h, NormalizationOps.h, ElementwiseOps.h,
// TransformOps.h, RecurrentOps.h) shares: one dispatch point through which each op of the facade
// runs, and the hook an observer (the profiler) attaches to it. An op is declared once in its
// family's header, with the phase of a layer step it belongs to and, for GEMM-like ops, its
// analytic FLOPs; no observer lists the ops, so a new op needs nothing here nor in nn/profiling/.
#include <type_traits>
#include <utility>

#include "nn/backend/LayerPlan.h"

namespace dl4cpp {

// The part of a training step an op belongs to (what a profiler charges its time to).
enum class OpPhase {
  FORWARD,              // convolution / inner product / pooling / normalisation forward
  ACTIVATION_FORWARD,   // a layer's activation function
  LOSS,                 // the output layer's loss and its gradient
  ACTIVATION_BACKWARD,  // the activation's derivative applied to the incoming gradient
  BACKWARD_DATA,        // dL/dinput
  BACKWARD_WEIGHTS,     // dL/dW, dL/db
  UPDATER,              // l1/l2 + updater step over a parameter segment
  OTHER,                // scaling, reductions, copies, input staging
};

// Sees every op a backend runs (DeviceContext::setProfiler installs one). `run` must call `op`
// exactly once; `flops` gives the op's analytic FLOPs (OpFlops.h; 0 for element-wise and
// memory-bound ops) and is cheap but not free, so it is only called by an observer that wants it.
class OpObserver {
 public:
  virtual ~OpObserver() = default;
  virtual void run(OpPhase phase, double (*flops)(const void*), const void* flopsArg,
                   KernelRef op) = 0;
};

// The slot a backend's families share: the observer, or null (then an op is a direct call).
struct OpHook {
  OpObserver* observer = nullptr;
};

// Runs `op` (returning what it returns) through `hook`: a direct call without an observer, the
// observer's run() with one. `flops` is a callable returning double, evaluated only by an observer.
template <typename Op, typename Flops>
decltype(auto) dispatchOp(const OpHook& hook, OpPhase phase, Op&& op, Flops&& flops) {
  if (hook.observer == nullptr) return op();
  auto flopsOf = [](const void* f) -> double {
    return (*static_cast<const std::remove_reference_t<Flops>*>(f))();
  };
  using Result = decltype(op());
  if constexpr (std::is_void_v<Result>) {
    hook.observer->run(phase, flopsOf, &flops, [&] { op(); });
  } else {
    Result result{};
    hook.observer->run(phase, flopsOf, &flops, [&] { result = op(); });
    return result;
  }
}

// Base of a family facade: the device's implementation of the family (Impl, the abstract class
// the family header declares) and the backend's hook. A device hands both over once
// (Backend::install); until then calling an op is an error the facade cannot catch, so a Backend
// installs its families in its constructor.
template <typename Impl>
class OpFamily {
 protected:
  Impl& impl() const { return *impl_; }
  // Whether the device installed this family (the recurrent family is optional).
  bool hasImpl() const { return impl_ != nullptr; }
  // An op whose analytic FLOPs are `flops()` (GEMM-like ops).
  template <typename Op, typename Flops>
  decltype(auto) run(OpPhase phase, Op&& op, Flops&& flops) const {
    return dispatchOp(*hook_, phase, std::forward<Op>(op), std::forward<Flops>(flops));
  }
  // An element-wise or memory-bound op (no FLOPs counted).
  template <typename Op>
  decltype(auto) run(OpPhase phase, Op&& op) const {
    return dispatchOp(*hook_, phase, std::forward<Op>(op), [] { return 0.0; });
  }
  void bindFamily(Impl& impl, const OpHook& hook) {
    impl_ = &impl;
    hook_ = &hook;
  }

 private:
  Impl* impl_ = nullptr;
  const OpHook* hook_ = nullptr;
};

}  // namespace dl4cpp
