#pragma once
// The op facade. Layers, updaters and the network call only these functions. The ops come in
// families, each declared once in its own header under ops/ (ConvolutionOps.h, PoolingOps.h,
// NormalizationOps.h, ElementwiseOps.h, TransformOps.h, RecurrentOps.h); each device implements
// each family in a file of its own (cpu/Cpu<Family>.cpp on oneDNN and dl4cpp's kernels,
// cuda/Cuda<Family>.cu on cuBLAS + kernels), and every op runs through one dispatch point
// (ops/OpDispatch.h) where an observer such as the profiler sees it without listing it.
// The choice of implementation is made once, when a DeviceContext is created (makeBackend in
// Backend.cpp), so no layer ever branches on the device. A backend may also compute runs of
// adjacent layers it recognises its own way: the network asks it for a plan once (LayerPlan.h).
//
// Conventions for every op:
//  - tensors are dense row-major float32 on the context's device; images are NCHW; convolution
//    weights are (nOut, nIn, kH, kW); inner-product weights are (nOut, nIn) (the same memory as
//    DL4J's (nIn, nOut) 'f'-order W), biases are (nOut);
//  - outputs are overwritten, never accumulated into, unless the name says Accumulate;
//  - shapes are checked by the layer that builds the call; a backend may assume them;
//  - an op may cache whatever it creates for a shape (oneDNN primitives, workspaces) inside the
//    backend, so calling it again with the same shapes allocates nothing.
#include <memory>
#include <vector>

#include "nn/backend/LayerPlan.h"
#include "nn/backend/OpTypes.h"
#include "nn/backend/ops/ConvolutionOps.h"
#include "nn/backend/ops/ElementwiseOps.h"
#include "nn/backend/ops/NormalizationOps.h"
#include "nn/backend/ops/OpDispatch.h"
#include "nn/backend/ops/PoolingOps.h"
#include "nn/backend/ops/RecurrentOps.h"
#include "nn/backend/ops/TransformOps.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

class Backend : public ConvolutionOps,
                public PoolingOps,
                public NormalizationOps,
                public ElementwiseOps,
                public TransformOps,
                public RecurrentOps {
 public:
  Backend() = default;
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // Apply the calling thread's parallelism settings (the OpenMP thread count for oneDNN and the
  // flat-buffer loops; the current device for CUDA) before ops run on this thread. numThreads 0
  // keeps the thread's current count.
  virtual void bindToCurrentThread(int numThreads) = 0;

  // --- Layers run together (LayerPlan.h) -------------------------------------------------------
  // The steps this backend computes its own way, each over a run of adjacent layers it recognises
  // in `layers`, in layer order and without overlap; the network runs every other layer by itself.
  // Called by MultiLayerNetwork::init(). The default plans nothing.
  virtual std::vector<std::unique_ptr<NetworkStep>> planSteps(
      const std::vector<LayerDescription>& layers);
  // Runs `kernel`, the `pass` of a planned step, whose analytic FLOPs are `flops` (OpFlops.h),
  // through the same dispatch point as every op, so that an observer sees it as it sees any op.
  void runPlanned(OpPass pass, double flops, KernelRef kernel);

  // --- Observing ops -----------------------------------------------------------------------------
  // Every op of every family, and every planned kernel, runs through `observer` until it is reset
  // to null (DeviceContext::setProfiler). The observer must outlive its installation.
  void setObserver(OpObserver* observer) { hook_.observer = observer; }
  OpObserver* observer() const { return hook_.observer; }

 protected:
  // A device hands over its implementation of each family once, in its constructor; they must
  // live as long as the backend (a device keeps them as members). The recurrent family is
  // optional: a device without it (null) answers its ops with a BackendError.
  void install(ConvolutionImpl& convolution, PoolingImpl& pooling, NormalizationImpl& normalization,
               ElementwiseImpl& elementwise, TransformImpl& transform,
               RecurrentImpl* recurrent = nullptr);

 private:
  OpHook hook_;
};

// Creates the backend for `device` (defined in Backend.cpp: the one place that picks it).
std::unique_ptr<Backend> makeBackend(Device device);

}  // namespace dl4cpp
