// The one place where a device kind is mapped to its backend implementation, and Backend's
// defaults for backends that run every layer by itself.
#include "nn/backend/Backend.h"

#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cuda/CudaBackendFactory.h"

namespace dl4cpp {

std::vector<std::unique_ptr<NetworkStep>> Backend::planSteps(const std::vector<LayerDescription>&) {
  return {};
}

namespace {
OpPhase phaseOf(OpPass pass) {
  switch (pass) {
    case OpPass::FORWARD:
      return OpPhase::FORWARD;
    case OpPass::BACKWARD_DATA:
      return OpPhase::BACKWARD_DATA;
    case OpPass::BACKWARD_WEIGHTS:
      return OpPhase::BACKWARD_WEIGHTS;
  }
  return OpPhase::OTHER;
}
}  // namespace

// A planned step's kernel is one op, charged to the layer the step entered (a fused convolution +
// pooling: the convolution's, with the convolution's FLOPs).
void Backend::runPlanned(OpPass pass, double flops, KernelRef kernel) {
  dispatchOp(
      hook_, phaseOf(pass), [&] { kernel(); }, [flops] { return flops; });
}

void Backend::install(ConvolutionImpl& convolution, PoolingImpl& pooling,
                      NormalizationImpl& normalization, ElementwiseImpl& elementwise,
                      TransformImpl& transform, RecurrentImpl* recurrent) {
  ConvolutionOps::bindFamily(convolution, hook_);
  PoolingOps::bindFamily(pooling, hook_);
  NormalizationOps::bindFamily(normalization, hook_);
  ElementwiseOps::bindFamily(elementwise, hook_);
  TransformOps::bindFamily(transform, hook_);
  if (recurrent != nullptr) RecurrentOps::bindFamily(*recurrent, hook_);
}

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
