#pragma once
// The weight gradient of a convolution with few input channels at stride 1 without padding or
// dilation (a network's first layer; LeNet's 1 -> 20 channels, 5x5), as a direct kernel on plain
// NCHW tensors at the avx512 and avx2 levels (one Highway source, HighwayTargets.h).
//
// oneDNN's kernel for it runs in its blocked layout, so dy (N, 20, 24, 24) would first be
// reordered into 16-channel blocks padded to 32 channels: 9.4 MB at batch 128, written and read
// again per step. Here dy is read where it lies. For each run of 16 outputs along a row (8 at
// avx2), a few output channels' dy vectors and the input row at a few horizontally adjacent taps
// are loaded once each, and every (channel, tap) pair accumulates their product in its own
// register; the registers' lanes are summed when the image is done.
#include <cstdint>

#include "nn/backend/OpTypes.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

// The shapes the kernel takes: `g` has a stride and dilation of 1 and no padding.
bool directWeightGradientFits(const WindowGeometry& g);
// The kernel runs: the shape fits and cpuIsa() is avx2 or avx512.
bool directWeightGradientSupported(const WindowGeometry& g);

// Floats of scratch directWeightGradient needs: each image's sums, [O, C·kH·kW + 1].
int64_t directWeightGradientScratchFloats(const Shape& x, const Shape& w);

// dw (O, C, kH, kW) and db (O, or empty) from x (N, C, H, W) and dy (N, O, outH, outW), where
// directWeightGradientSupported(g). Images are spread over the OpenMP threads; each image's sums
// are one thread's, then added in image order, so results do not depend on the thread count.
void directWeightGradient(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                          const WindowGeometry& g, float* scratch);

// directWeightGradient's two stages, for callers that produce each image's dy on the fly
// (ConvolutionPooling.h): one image's sums, [O, C·kH·kW + 1] at `sums` (its slot in the scratch:
// image n's at n · O · (C·kH·kW + 1)), from that image's x (C, H, W) and dy (O, outH, outW);
// then dw and db, the images' sums added in image order. Same conditions as directWeightGradient.
void directWeightGradientImage(const float* x, const float* dy, float* sums, const Shape& xShape,
                               const Shape& dwShape, const WindowGeometry& g);
void directWeightGradientSum(const float* sums, int64_t images, Tensor& dw, Tensor& db);

}  // namespace dl4cpp::cpu
