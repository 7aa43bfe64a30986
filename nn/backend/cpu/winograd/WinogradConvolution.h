#pragma once
// The three passes of 3x3 and 5x5 convolutions at stride 1 (forward, backward data, weight
// gradient) as Winograd convolutions on plain NCHW tensors, at the avx512 and avx2 levels (one
// Highway source, HighwayTargets.h): the VGG-style layers (32 and 64 channels, padding 1), for
// which oneDNN has no Winograd kernel below AVX-512, and LeNet's second convolution.
//
// Each block of t x t outputs (a tile) is computed from the input patch around it: the patch is
// transformed (V = Bᵀ d B), the weights once per call (U = G g Gᵀ), and the products of the
// transformed tile are sums over input channels: for each position, a matrix product of U (output
// x input channels) and V (input channels x tiles). The products go back to outputs through
// Aᵀ M A. Every pass runs F(4x4, 3x3) at 3x3, 36 multiply-adds per 4x4 outputs and input channel
// where a direct convolution needs 144 (F(2x2, 3x3) would need 64). F(4x4, 3x3)'s transforms have
// larger coefficients: its results are about ten times further from the exact sums than
// F(2x2, 3x3)'s were (ConvolutionTest bounds them). Work is split into items of one image's tile
// rows (or of whole images), each item's transformed tiles held in per-thread scratch while they
// are in cache, and each output is one item's sum in a fixed order: results do not depend on the
// thread count. The transforms take vectors of consecutive tiles across tile rows (WinogradPlan.h);
// the 3x3 weight gradient sums with tiles in the lanes.
//
// Backward data at 3x3 is the same forward pass over dy, with each weight plane turned by 180
// degrees, input and output channels swapped and the padding k - 1 - p.
//
// At 5x5 every pass runs F(4x4, 5x5) with images in the lanes (WinogradPlan.h, LanePlan;
// WinogradImageLanes.cpp): 64 multiply-adds per 4x4 outputs and input channel where a direct
// convolution needs 400 and F(2x2, 5x5) 144, its results about twice as far from the exact sums as
// F(2x2, 5x5)'s. Backward data runs as the forward pass's adjoint, on its tiles: dM = A dY Aᵀ, the
// products with the forward weights transposed, and each tile's B dV Bᵀ added into dx where its
// patch lies (as a forward pass over dy it would take a tile per 4x4 of dx: 9 on LeNet's 12x12
// against 4). The weight gradient sums with output channels in the lanes.
#include <cstdint>

#include "nn/backend/OpTypes.h"
#include "nn/backend/cpu/Activations.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

// The shapes the kernels take: a 3x3 or 5x5 kernel at stride 1 without dilation, each padding
// from 0 to the kernel size - 1.
bool winogradConvolutionFits(const WindowGeometry& g);

// The kernels run: the shape fits and cpuIsa() is avx2 or avx512.
bool winogradConvolutionSupported(const WindowGeometry& g);

// Floats of scratch the passes need on `threads` OpenMP threads (x and dx: the layer's input).
int64_t winogradForwardScratchFloats(const Shape& x, const Shape& w, const WindowGeometry& g,
                                     int threads);
int64_t winogradBackwardDataScratchFloats(const Shape& dx, const Shape& w, const WindowGeometry& g,
                                          int threads);

// y (N, O, outH, outW) = f(conv(x (N, C, H, W), w (O, C, k, k)) + b (O, or empty)), f applied to
// each item's rows while they are in cache.
void winogradConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                                const WindowGeometry& g, float* scratch,
                                const FusedActivation& f = {});

// pooled = maxpool(f(conv(x, w) + b)), image by image: each image's convolution output stays in a
// per-thread buffer, f runs on it there and it is pooled from there (maxPoolingForwardPlanes),
// with the same bits as the forward pass, the activation and maxPoolingForward in turn; the
// arg-max as maxPoolingForward records it when `argmax` is not null.
int64_t winogradConvolutionMaxPoolingForwardScratchFloats(const Shape& x, const Shape& w,
                                                          const WindowGeometry& g, int threads);
void winogradConvolutionMaxPoolingForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                          Tensor& pooled, const FusedActivation& f,
                                          const WindowGeometry& g, const WindowGeometry& poolG,
                                          uint8_t* argmax, float* scratch);

// dx (N, C, H, W) = the gradient of that convolution's input, from dy (N, O, outH, outW).
void winogradConvolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                     const WindowGeometry& g, float* scratch);

// dw (O, C, k, k) and db (O, or empty) = the gradients of the weights and bias, from x and dy.
// The images are summed in up to 16 chunks of consecutive images, the chunks' parts then added in
// chunk order: the result does not depend on the thread count either.
int64_t winogradBackwardWeightsScratchFloats(const Shape& x, const Shape& dw,
                                             const WindowGeometry& g, int threads);
void winogradConvolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                        const WindowGeometry& g, float* scratch);

}  // namespace dl4cpp::cpu
