#pragma once
// Which kernel runs a convolution pass on the CPU: the shape rules CpuConvolution.cpp and the fused
// steps (CpuBackend's convolution + pooling and convolution + activation kernels) share, so that a
// fused kernel computes the bits the separate ops would. Internal to nn/backend/cpu/.
#include <cstdint>
#include <string_view>

#include "nn/backend/OpTypes.h"
#include "nn/backend/cpu/Activations.h"
#include "nn/backend/cpu/CpuAlgorithm.h"
#include "nn/backend/cpu/CpuIsa.h"
#include "nn/backend/cpu/DirectConvolution.h"
#include "nn/backend/cpu/DirectWeightGradient.h"
#include "nn/backend/cpu/DnnlPrimitives.h"
#include "nn/backend/cpu/Im2colConvolution.h"
#include "nn/backend/cpu/WinogradConvolution.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

class CpuBackend;

using namespace onednn;  // NOLINT(google-build-using-namespace): internal header, one namespace

// Forward and backward weights of convolutions at stride 1 without padding whose output rows are
// 8 or a multiple of 16 wide run on direct kernels on NCHW (DirectConvolution.h), faster than
// oneDNN's channels-last kernels with their reorders, unless dl4cpp's Winograd kernels take them
// (below). Otherwise:
//
// How a convolution runs, by its input channel count (weights [O, C, kH, kW]). With many input
// channels oneDNN's channels-last (NHWC) kernels vectorise over channels and beat its blocked
// (nChw16c) ones, which pad C to a multiple of 16 (LeNet's 20 input channels to 32); the reorders
// from NCHW cost the same either way. With few input channels the blocked kernels vectorise over
// space and win, but the forward pass goes to im2col + sgemm instead
// (Im2colConvolution.h), which saves the reorder of the blocked kernel's padded output, and
// backward weights at stride 1 without padding to a direct kernel (DirectWeightGradient.h), which
// saves the reorder of dy into that layout. Backward data is sgemm + col2im (below) and uses
// oneDNN only for large images. Input and output channel counts that are both multiples of 16
// (fillsChannelBlocks) go to the blocked kernels instead (no channel is padded), in every pass
// the Winograd kernels do not run.
constexpr int64_t kChannelsLastMinInputChannels = 8;
inline bool hasFewInputChannels(const Shape& weights) {
  return weights[1] < kChannelsLastMinInputChannels;
}
// Convolutions whose input and output channel counts are multiples of 16 (VGG-style 32 and 64)
// fill oneDNN's 16-channel blocks without padding, and its blocked kernels beat the channels-last
// ones on them, in every pass dl4cpp's own kernels do not run (`bench_lenet_breakdown --network
// vgg` times each pass).
inline bool fillsChannelBlocks(const Shape& weights) {
  return weights[0] % 16 == 0 && weights[1] % 16 == 0;
}
// 3x3 convolutions at stride 1 with 8 or more input channels run forward and backward data on
// dl4cpp's Winograd F(4x4, 3x3) kernels (WinogradConvolution.h) at avx2 and avx512: faster than
// oneDNN's direct kernels, and at avx512 than oneDNN's own F(4x4, 3x3) Winograd kernels on VGG's
// 32- and 64-channel layers.
inline bool runsOwnWinograd(const Shape& weights, const WindowGeometry& g) {
  return g.kernelH == 3 && !hasFewInputChannels(weights) && winogradConvolutionSupported(g);
}
// Their weight gradient too, except at avx512 on channels that fill oneDNN's blocks: there
// oneDNN's direct blocked kernel is faster than dl4cpp's Winograd one.
inline bool runsOwnWinogradWeightGradient(const Shape& weights, const WindowGeometry& g) {
  return runsOwnWinograd(weights, g) &&
         !(cpuIsa() >= CpuIsa::Avx512 && fillsChannelBlocks(weights));
}
// 5x5 convolutions with 8 or more input channels (LeNet's second) run every pass on dl4cpp's
// Winograd F(4x4, 5x5) kernels at avx2 and avx512, where they beat the direct kernels and, backward
// data, sgemm + col2im: with images in the lanes, every transform runs on whole vectors even on
// LeNet's small images.
inline bool runsOwnWinograd5x5(const Shape& weights, const WindowGeometry& g) {
  return g.kernelH == 5 && !hasFewInputChannels(weights) && winogradConvolutionSupported(g);
}
// The weight gradient CpuBackend::convolutionBackwardWeights runs as im2col + sgemm. Below AVX-512
// oneDNN's kernels run a first layer's weight gradient several times slower than that; at AVX-512
// they are the faster choice for the shapes the direct kernel does not take.
inline bool runsIm2colWeightGradient(const Shape& weights, const WindowGeometry& g,
                                     const Tensor& dy) {
  return !runsOwnWinogradWeightGradient(weights, g) && !runsOwnWinograd5x5(weights, g) &&
         !directConvolutionSupported(g, dy.dim(2), dy.dim(3)) && hasFewInputChannels(weights) &&
         !directWeightGradientSupported(g) && cpuIsa() < CpuIsa::Avx512;
}
// Which kernel runs a convolution's forward pass (y of outH x outW): one table, one choice for the
// pass alone and for the fused kernels that must compute its bits (ConvolutionPooling.h). In order
// of preference; the first entry at or below the ISA level that takes the shape runs
// (selectCpuAlgorithm, CpuAlgorithm.h), unless DL4CPP_CPU_ALGORITHM forces one.
enum class ForwardKernel { WINOGRAD, DIRECT, IM2COL, ONEDNN };
struct ConvolutionForwardAlgorithm {
  std::string_view name;
  ForwardKernel kernel;
  CpuIsa minIsa;
  const char* takes;  // the shapes `fits` takes, in words
  bool (*fits)(const Shape& weights, const WindowGeometry& g, int64_t outH, int64_t outW);
  // Scratch floats for `threads` threads; null where the kernel needs none.
  int64_t (*scratchFloats)(const Shape& x, const Shape& w, const WindowGeometry& g, int threads);
  // y = f(conv(x, w) + b); null for oneDNN's primitive, which CpuConvolution.cpp runs from its
  // cache (f then applied by the caller).
  void (*run)(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, const WindowGeometry& g,
              float* scratch, const FusedActivation& f);
};
inline const ConvolutionForwardAlgorithm kConvolutionForwardAlgorithms[] = {
    {"winograd_5x5", ForwardKernel::WINOGRAD, CpuIsa::Avx2,
     "5x5 windows the Winograd kernels take, 8 or more input channels",
     [](const Shape& w, const WindowGeometry& g, int64_t, int64_t) {
       return g.kernelH == 5 && !hasFewInputChannels(w) && winogradConvolutionFits(g);
     },
     winogradForwardScratchFloats,
     [](const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, const WindowGeometry& g,
        float* scratch,
        const FusedActivation& f) { winogradConvolutionForward(x, w, b, y, g, scratch, f); }},
    {"direct", ForwardKernel::DIRECT, CpuIsa::Avx2,
     "stride 1, no padding or dilation, output rows 8 or a multiple of 16 wide",
     [](const Shape&, const WindowGeometry& g, int64_t outH, int64_t outW) {
       return directConvolutionForwardFits(g, outH, outW);
     },
     nullptr,
     [](const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, const WindowGeometry& g,
        float*, const FusedActivation& f) { directConvolutionForward(x, w, b, y, g, f); }},
    {"winograd_3x3", ForwardKernel::WINOGRAD, CpuIsa::Avx2,
     "3x3 windows the Winograd kernels take, 8 or more input channels",
     [](const Shape& w, const WindowGeometry& g, int64_t, int64_t) {
       return g.kernelH == 3 && !hasFewInputChannels(w) && winogradConvolutionFits(g);
     },
     winogradForwardScratchFloats,
     [](const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, const WindowGeometry& g,
        float* scratch,
        const FusedActivation& f) { winogradConvolutionForward(x, w, b, y, g, scratch, f); }},
    {"im2col", ForwardKernel::IM2COL, CpuIsa::Baseline, "fewer than 8 input channels",
     [](const Shape& w, const WindowGeometry&, int64_t, int64_t) { return hasFewInputChannels(w); },
     im2colScratchFloats,
     [](const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, const WindowGeometry& g,
        float* scratch,
        const FusedActivation& f) { im2colConvolutionForward(x, w, b, y, g, scratch, f); }},
    {"onednn", ForwardKernel::ONEDNN, CpuIsa::Baseline, "every convolution",
     [](const Shape&, const WindowGeometry&, int64_t, int64_t) { return true; }, nullptr, nullptr},
};
inline const ConvolutionForwardAlgorithm& selectConvolutionForward(const Shape& weights,
                                                                   const WindowGeometry& g,
                                                                   int64_t outH, int64_t outW) {
  return selectCpuAlgorithm("conv_forward", kConvolutionForwardAlgorithms, weights, g, outH, outW);
}
inline ForwardKernel forwardKernel(const Shape& weights, const WindowGeometry& g, int64_t outH,
                                   int64_t outW) {
  return selectConvolutionForward(weights, g, outH, outW).kernel;
}
inline dnnl::memory::desc convActivationDesc(const Shape& s, const Shape& weights) {
  if (hasFewInputChannels(weights) || fillsChannelBlocks(weights)) return anyDesc(s);
  return {dimsOf(s), kF32, Tag::nhwc};
}

// Largest column matrix of one image (C·kH·kW × outH·outW floats, 4 MiB) for which backward data
// runs as sgemm + col2im (faster than oneDNN's kernel on LeNet's second convolution, which needs
// 32 Ki floats); beyond it the per-thread matrices stop fitting in cache and oneDNN's direct
// kernel, which needs none, is kept. The bound is a judgement, not a measured crossover.
constexpr int64_t kCol2imMaxColumnFloats = int64_t{1} << 20;

// The forward pass on dl4cpp's own kernels, f applied as they go; false (nothing done) where
// oneDNN runs it (CpuConvolution.cpp).
bool ownConvolutionForward(CpuBackend& core, const Tensor& x, const Tensor& w, const Tensor& b,
                           const FusedActivation& f, Tensor& y, const WindowGeometry& g);

}  // namespace dl4cpp::cpu
