#pragma once
// The CPU backend's one planned step (LayerPlan.h): a convolution whose output only a MAX pooling
// layer reads (LeNet's conv -> pool pairs, a VGG-style network's conv -> ReLU -> pool), run as one
// step on CpuBackend's fused kernels (ConvolutionPooling.h), which activate and pool each image
// while its convolution output is still in cache.
//
// The convolution's activation is the identity, RELU or LEAKYRELU (FusedActivation), whose
// backward pass needs only the sign of the activated output, so that output need never be
// written. At an arg-max that output is the pooled one, and the activation's backward pass runs on
// the pooled gradient, a quarter of the elements for 2x2 windows; this takes windows that do not
// overlap (with the identity, any). Forward, the step is one fused kernel. Backward without an
// input gradient to write (the network's first step) it is one kernel too, the weight gradient
// straight from the pooled gradient; with one, the pooling layer's gradient into the convolution's
// output gradient is needed anyway, and the step runs the layers' ops in turn. Ops are charged to
// the layers they belong to, the fused kernels to the convolution (with its FLOPs), as a profile
// of the layers run one by one would charge them.
#include <memory>
#include <vector>

#include "nn/backend/LayerPlan.h"

namespace dl4cpp::cpu {

class CpuBackend;

// The step for layers[first] and layers[first + 1] when they form such a pair, else null. The
// step runs its kernels on `backend`, which must outlive it.
std::unique_ptr<NetworkStep> planConvolutionMaxPooling(CpuBackend& backend,
                                                       const std::vector<LayerDescription>& layers,
                                                       int first);

}  // namespace dl4cpp::cpu
