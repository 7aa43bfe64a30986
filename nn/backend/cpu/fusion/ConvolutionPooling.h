#pragma once
// A convolution whose output only feeds a MAX pooling layer (LeNet's conv 1 -> pool 1, with the
// identity activation; a VGG-style network's conv -> ReLU -> pool), computed image by image so that
// the convolution's output never leaves the cache: the kernels of
// CpuBackend::convolutionMaxPoolingForward / ...BackwardWeights, which the planned step
// ConvolutionPoolingStep.h runs.
//
// Unfused, LeNet's first convolution writes its 5.9 MB output (128 x 20 x 24 x 24 floats), pooling
// reads it back, pooling's backward writes a gradient of the same size and the weight gradient
// reads it again: four passes over memory larger than a core's L2 cache, on every step.
// Here each thread convolves one image into a 46 KB buffer and pools it from there; backward, it
// scatters one image's pooled gradient into the buffer and takes that image's weight gradient from
// it. Each image runs the same kernels in the same order as the unfused ops, so results are equal
// bit for bit (tests check it) and do not depend on the thread count.
#include <cstdint>

#include "nn/backend/OpTypes.h"
#include "nn/backend/cpu/Activations.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

// CpuBackend fuses where the unfused ops would run the convolution on the direct kernels or as
// im2col + sgemm (forward) or its weight gradient on directWeightGradient (backward), and
// directMaxPoolingApplies to the pooling window; elsewhere it runs the two ops one after the other.

// Floats of scratch the fused forward needs with `threads` OpenMP threads: im2col's scratch plus
// one image's convolution output per thread.
int64_t convolutionMaxPoolingForwardScratchFloats(const Shape& x, const Shape& w,
                                                  const WindowGeometry& convG, int threads);

// pooled (N, O, pH, pW) = maxpool(f(conv(x, w) + b)), recording pooling's arg-max (one byte per
// pooled output) in `argmax` when it is not null, as poolingForward's training mode does. f, the
// convolution layer's activation, runs on each image's output in its buffer.
void convolutionMaxPoolingForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& pooled,
                                  const FusedActivation& f, const WindowGeometry& convG,
                                  const WindowGeometry& poolG, uint8_t* argmax, float* scratch);

// The same where the convolution runs on the direct kernels (DirectConvolution.h): each work
// item, an image's block of up to 5 output channels, is pooled as soon as it is computed.
// Scratch: one item's output planes per thread.
int64_t directConvolutionMaxPoolingForwardScratchFloats(const Shape& x, const WindowGeometry& convG,
                                                        int threads);
void directConvolutionMaxPoolingForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                        Tensor& pooled, const FusedActivation& f,
                                        const WindowGeometry& convG, const WindowGeometry& poolG,
                                        uint8_t* argmax, float* scratch);

// Floats of scratch the fused weight gradient needs with `threads` OpenMP threads: every image's
// sums (directWeightGradientScratchFloats) plus one image's convolution-output gradient per thread.
int64_t convolutionMaxPoolingBackwardScratchFloats(const Shape& x, const Shape& w,
                                                   const WindowGeometry& convG, int threads);

// dw, db (db may be empty) of the convolution, given the pooled output's gradient dPooled and the
// arg-max recorded by the training forward pass.
void convolutionMaxPoolingBackwardWeights(const Tensor& x, const Tensor& dPooled,
                                          const uint8_t* argmax, Tensor& dw, Tensor& db,
                                          const WindowGeometry& convG, const WindowGeometry& poolG,
                                          float* scratch);

}  // namespace dl4cpp::cpu
