// The one place where a device kind is mapped to its backend implementation, and the default
// implementations of Backend's composite ops.
#include <dl4cpp/nn/backend/Backend.h>
#include <dl4cpp/nn/backend/cpu/CpuBackend.h>
#include <dl4cpp/nn/backend/cuda/CudaBackendFactory.h>

namespace dl4cpp {

void Backend::convolutionMaxPoolingForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                           Tensor& convOutput, Tensor& pooled,
                                           const WindowGeometry& convG, const WindowGeometry& poolG,
                                           bool training, Tensor& workspace) {
  convolutionForward(x, w, b, convOutput, convG);
  poolingForward(PoolingKind::MAX, convOutput, pooled, poolG, training, workspace);
}

void Backend::convolutionMaxPoolingBackwardWeights(const Tensor& x, const Tensor& dPooled,
                                                   const Tensor& workspace, Tensor& convOutputGrad,
                                                   Tensor& dw, Tensor& db,
                                                   const WindowGeometry& convG,
                                                   const WindowGeometry& poolG) {
  poolingBackward(PoolingKind::MAX, dPooled, convOutputGrad, poolG, workspace);
  convolutionBackwardWeights(x, convOutputGrad, dw, db, convG);
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
