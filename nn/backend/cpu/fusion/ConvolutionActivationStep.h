#pragma once
// The CPU backend's planned step for a convolution with RELU or LEAKYRELU that no MAX pooling
// fuses with (ConvolutionPoolingStep.h): a VGG-style network's conv -> ReLU -> conv. Forward, the
// activation runs on each work item's output while it is in cache (CpuBackend::
// convolutionActivationForward), instead of a pass of its own over the whole output. Backward
// with no input gradient to write (the network's first step), the activation's backward pass runs
// inside the weight gradient where that is image by image (im2col + sgemm); otherwise the step
// runs the layer's ops in turn. Ops are charged to the convolution's layer, as a profile of the
// layer run by itself would charge them; results are the same bits.
#include <memory>
#include <vector>

#include "nn/backend/LayerPlan.h"

namespace dl4cpp::cpu {

class CpuBackend;

// The step for layers[first] when it is such a convolution, else null. The step runs its kernels
// on `backend`, which must outlive it.
std::unique_ptr<NetworkStep> planConvolutionActivation(CpuBackend& backend,
                                                       const std::vector<LayerDescription>& layers,
                                                       int first);

}  // namespace dl4cpp::cpu
