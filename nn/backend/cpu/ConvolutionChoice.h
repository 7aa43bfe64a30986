#pragma once
// Which kernel runs each convolution pass on the CPU: one ordered table per pass, shared by
// CpuConvolution.cpp and the fused steps (CpuBackend's convolution + pooling and convolution +
// activation kernels) so that a fused kernel computes the bits the separate ops would. Internal to
// nn/backend/cpu/.
//
// Each table lists its algorithms in order of preference (selectCpuAlgorithm, CpuAlgorithm.h, runs
// the first one at or below the ISA level that takes the shape, unless DL4CPP_CPU_ALGORITHM forces
// one); the reasons for the order are the comments on the entries. oneDNN's entry, last, takes
// every shape; its run is null because CpuConvolution.cpp runs it from the primitive cache.
#include <cstdint>
#include <string_view>

#include "nn/backend/OpTypes.h"
#include "nn/backend/cpu/Activations.h"
#include "nn/backend/cpu/CpuAlgorithm.h"
#include "nn/backend/cpu/CpuIsa.h"
#include "nn/backend/cpu/direct/DirectConvolution.h"
#include "nn/backend/cpu/direct/DirectWeightGradient.h"
#include "nn/backend/cpu/im2col/Im2colConvolution.h"
#include "nn/backend/cpu/onednn/DnnlPrimitives.h"
#include "nn/backend/cpu/winograd/WinogradConvolution.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

class CpuBackend;

using namespace onednn;  // NOLINT(google-build-using-namespace): internal header, one namespace

// How oneDNN runs a convolution, by its input channel count (weights [O, C, kH, kW]). With many
// input channels oneDNN's channels-last (NHWC) kernels vectorise over channels and beat its blocked
// (nChw16c) ones, which pad C to a multiple of 16 (LeNet's 20 input channels to 32); the reorders
// from NCHW cost the same either way. With few input channels the blocked kernels vectorise over
// space and win. Input and output channel counts that are both multiples of 16
// (fillsChannelBlocks) go to the blocked kernels too: no channel is padded.
constexpr int64_t kChannelsLastMinInputChannels = 8;
inline bool hasFewInputChannels(const Shape& weights) {
  return weights[1] < kChannelsLastMinInputChannels;
}
inline bool fillsChannelBlocks(const Shape& weights) {
  return weights[0] % 16 == 0 && weights[1] % 16 == 0;
}
inline dnnl::memory::desc convActivationDesc(const Shape& s, const Shape& weights) {
  if (hasFewInputChannels(weights) || fillsChannelBlocks(weights)) return anyDesc(s);
  return {dimsOf(s), kF32, Tag::nhwc};
}

// The Winograd kernels' shapes by window size: 3x3 or 5x5 at stride 1 (winogradConvolutionFits)
// with 8 or more input channels. With fewer, the transforms' cost is not repaid by the channel
// sums.
inline bool winogradFits(const Shape& weights, const WindowGeometry& g, int64_t kernel) {
  return g.kernelH == kernel && !hasFewInputChannels(weights) && winogradConvolutionFits(g);
}
// F(4x4, 3x3) blocks the 4x4 output tiles of one image at a time: with fewer than 8 of them (an
// output of 8x8 or less) the blocks are too small for its products, and oneDNN's direct kernels
// are faster (performance.md, "Each convolution algorithm against oneDNN": 64x7x7 -> 64).
inline bool winograd3x3Fits(const Shape& weights, const WindowGeometry& g, int64_t outH,
                            int64_t outW) {
  return winogradFits(weights, g, 3) && ((outH + 3) / 4) * ((outW + 3) / 4) >= 8;
}
// With one block of 16 channels in and out, F(4x4, 3x3)'s channel sums are too short to repay its
// transforms at avx512, where oneDNN's blocked direct kernel is faster even with its reorders
// (performance.md, "Each convolution algorithm against oneDNN": 16x28x28 -> 16).
inline bool isOneChannelBlock(const Shape& weights) { return weights[0] == 16 && weights[1] == 16; }

// --- Forward -------------------------------------------------------------------------------------
// y (of outH x outW) = f(conv(x, w) + b). The fused kernels (ConvolutionPooling.h) ask `kernel`.
enum class ForwardKernel { WINOGRAD, DIRECT, IM2COL, ONEDNN };
struct ConvolutionForwardAlgorithm {
  std::string_view name;
  ForwardKernel kernel;
  CpuIsa minIsa;
  const char* takes;  // the shapes `fits` takes, in words
  bool (*fits)(const Shape& weights, const WindowGeometry& g, int64_t outH, int64_t outW);
  // Scratch floats for `threads` threads; null where the kernel needs none.
  int64_t (*scratchFloats)(const Shape& x, const Shape& w, const WindowGeometry& g, int threads);
  // y = f(conv(x, w) + b); null for oneDNN (f then applied by the caller).
  void (*run)(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, const WindowGeometry& g,
              float* scratch, const FusedActivation& f);
  // Where the rule passes it over for a later entry (CpuAlgorithm.h); nowhere by default.
  CpuAlgorithmYield<const Shape&, const WindowGeometry&, int64_t, int64_t> yield{};
};
// Winograd F(4x4, 5x5) first: on LeNet's second convolution it beats the direct kernels, which
// also take it. The direct kernels (stride 1, unpadded, rows of 8 or multiples of 16) read and
// write NCHW where it lies, where oneDNN's fastest kernels run channels-last and reorder at every
// call. With few input channels im2col + sgemm saves the reorder of oneDNN's blocked output.
inline void winogradForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                            const WindowGeometry& g, float* scratch, const FusedActivation& f) {
  winogradConvolutionForward(x, w, b, y, g, scratch, f);
}
inline constexpr ConvolutionForwardAlgorithm kConvolutionForwardAlgorithms[] = {
    {"winograd_5x5", ForwardKernel::WINOGRAD, CpuIsa::Avx2,
     "5x5 windows at stride 1, 8 or more input channels",
     [](const Shape& w, const WindowGeometry& g, int64_t, int64_t) {
       return winogradFits(w, g, 5);
     },
     winogradForwardScratchFloats, winogradForward},
    {"direct", ForwardKernel::DIRECT, CpuIsa::Avx2,
     "stride 1, no padding or dilation, output rows a multiple of 8 wide in planes a multiple of "
     "16",
     [](const Shape&, const WindowGeometry& g, int64_t outH, int64_t outW) {
       return directConvolutionForwardFits(g, outH, outW);
     },
     nullptr,
     [](const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y, const WindowGeometry& g,
        float*, const FusedActivation& f) { directConvolutionForward(x, w, b, y, g, f); }},
    {"winograd_3x3",
     ForwardKernel::WINOGRAD,
     CpuIsa::Avx2,
     "3x3 windows at stride 1, 8 or more input channels, 8 or more 4x4 output tiles",
     [](const Shape& w, const WindowGeometry& g, int64_t outH, int64_t outW) {
       return winograd3x3Fits(w, g, outH, outW);
     },
     winogradForwardScratchFloats,
     winogradForward,
     {CpuIsa::Avx512, [](const Shape& w, const WindowGeometry&, int64_t,
                         int64_t) { return isOneChannelBlock(w); }}},
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

// --- Backward data -------------------------------------------------------------------------------
// dx = the gradient of conv(x, w) with respect to x, from dy.
enum class BackwardDataKernel { WINOGRAD, COL2IM, ONEDNN };
struct ConvolutionBackwardDataAlgorithm {
  std::string_view name;
  BackwardDataKernel kernel;
  CpuIsa minIsa;
  const char* takes;
  bool (*fits)(const Shape& dx, const Shape& w, const WindowGeometry& g);
  int64_t (*scratchFloats)(const Shape& dx, const Shape& w, const WindowGeometry& g, int threads);
  void (*run)(const Tensor& dy, const Tensor& w, Tensor& dx, const WindowGeometry& g,
              float* scratch);
  // Where the rule passes it over for a later entry (CpuAlgorithm.h); nowhere by default.
  CpuAlgorithmYield<const Shape&, const Shape&, const WindowGeometry&> yield{};
};
// Largest column matrix of one image (C·kH·kW × outH·outW floats, 4 MiB) for which backward data
// runs as sgemm + col2im; beyond it the per-thread matrices stop fitting in cache and oneDNN's
// direct kernel, which needs none, is kept. The bound is a judgement, not a measured crossover.
constexpr int64_t kCol2imMaxColumnFloats = int64_t{1} << 20;
// The Winograd kernels where they take the shape (F(4x4, 3x3): the forward pass over dy with the
// weights turned; F(4x4, 5x5): the forward pass's adjoint on its tiles). Else sgemm + col2im, which
// writes NCHW where it lies, unless the channels fill oneDNN's blocks (its blocked kernel needs no
// reorder of padded channels there) or one image's column matrix is large.
inline void winogradBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                 const WindowGeometry& g, float* scratch) {
  winogradConvolutionBackwardData(dy, w, dx, g, scratch);
}
inline constexpr ConvolutionBackwardDataAlgorithm kConvolutionBackwardDataAlgorithms[] = {
    {"winograd_5x5", BackwardDataKernel::WINOGRAD, CpuIsa::Avx2,
     "5x5 windows at stride 1, 8 or more input channels",
     [](const Shape&, const Shape& w, const WindowGeometry& g) { return winogradFits(w, g, 5); },
     winogradBackwardDataScratchFloats, winogradBackwardData},
    {"winograd_3x3",
     BackwardDataKernel::WINOGRAD,
     CpuIsa::Avx2,
     "3x3 windows at stride 1, 8 or more input channels, 8 or more 4x4 tiles of dx",
     [](const Shape& dx, const Shape& w, const WindowGeometry& g) {
       return winograd3x3Fits(w, g, dx[2], dx[3]);
     },
     winogradBackwardDataScratchFloats,
     winogradBackwardData,
     {CpuIsa::Avx512,
      [](const Shape&, const Shape& w, const WindowGeometry&) { return isOneChannelBlock(w); }}},
    {"col2im", BackwardDataKernel::COL2IM, CpuIsa::Baseline,
     "one image's column matrix of at most 1 Mi floats, channels not both multiples of 16",
     [](const Shape& dx, const Shape& w, const WindowGeometry& g) {
       return col2imScratchFloats(dx, w, g, 1) <= kCol2imMaxColumnFloats && !fillsChannelBlocks(w);
     },
     col2imScratchFloats,
     [](const Tensor& dy, const Tensor& w, Tensor& dx, const WindowGeometry& g, float* scratch) {
       im2colConvolutionBackwardData(dy, w, dx, g, scratch);
     }},
    {"onednn", BackwardDataKernel::ONEDNN, CpuIsa::Baseline, "every convolution",
     [](const Shape&, const Shape&, const WindowGeometry&) { return true; }, nullptr, nullptr},
};
inline const ConvolutionBackwardDataAlgorithm& selectConvolutionBackwardData(
    const Shape& dx, const Shape& w, const WindowGeometry& g) {
  return selectCpuAlgorithm("conv_backward_data", kConvolutionBackwardDataAlgorithms, dx, w, g);
}

// --- Weight gradient -----------------------------------------------------------------------------
// dw and db (or empty) from x and dy (of outH x outW). The fused kernels ask `kernel`.
enum class WeightGradientKernel { WINOGRAD, DIRECT, DIRECT_FEW_CHANNELS, IM2COL, ONEDNN };
struct ConvolutionWeightGradientAlgorithm {
  std::string_view name;
  WeightGradientKernel kernel;
  CpuIsa minIsa;
  const char* takes;
  bool (*fits)(const Shape& w, const WindowGeometry& g, int64_t outH, int64_t outW);
  int64_t (*scratchFloats)(const Shape& x, const Shape& w, const WindowGeometry& g, int threads);
  void (*run)(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db, const WindowGeometry& g,
              float* scratch);
  // Where the rule passes it over for a later entry (CpuAlgorithm.h); nowhere by default.
  CpuAlgorithmYield<const Shape&, const WindowGeometry&, int64_t, int64_t> yield{};
};
inline void winogradWeightGradient(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                   const WindowGeometry& g, float* scratch) {
  winogradConvolutionBackwardWeights(x, dy, dw, db, g, scratch);
}
// The Winograd kernels where they take the shape, except at avx512 on 3x3 channels that fill
// oneDNN's blocks, where oneDNN's blocked direct kernel is faster. Then the direct kernels at
// stride 1 without padding: rows of 8 or multiples of 16 (DirectConvolution.h), or few input
// channels (a first layer, DirectWeightGradient.h), both reading dy where it lies, where oneDNN's
// kernel would reorder it into padded channel blocks. Then, for few input channels, im2col + sgemm
// below avx512: oneDNN's kernels below avx512 run a first layer's weight gradient several times
// slower than that, at avx512 they are the faster choice for these shapes.
inline constexpr ConvolutionWeightGradientAlgorithm kConvolutionWeightGradientAlgorithms[] = {
    {"winograd_5x5", WeightGradientKernel::WINOGRAD, CpuIsa::Avx2,
     "5x5 windows at stride 1, 8 or more input channels",
     [](const Shape& w, const WindowGeometry& g, int64_t, int64_t) {
       return winogradFits(w, g, 5);
     },
     winogradBackwardWeightsScratchFloats, winogradWeightGradient},
    {"winograd_3x3",
     WeightGradientKernel::WINOGRAD,
     CpuIsa::Avx2,
     "3x3 windows at stride 1, 8 or more input channels, 8 or more 4x4 output tiles",
     [](const Shape& w, const WindowGeometry& g, int64_t outH, int64_t outW) {
       return winograd3x3Fits(w, g, outH, outW);
     },
     winogradBackwardWeightsScratchFloats,
     winogradWeightGradient,
     {CpuIsa::Avx512, [](const Shape& w, const WindowGeometry&, int64_t,
                         int64_t) { return fillsChannelBlocks(w); }}},
    {"direct", WeightGradientKernel::DIRECT, CpuIsa::Avx2,
     "stride 1, no padding or dilation, output rows 8 wide (an even number of them) or a multiple "
     "of 16 wide",
     [](const Shape&, const WindowGeometry& g, int64_t outH, int64_t outW) {
       return directConvolutionFits(g, outH, outW);
     },
     [](const Shape& x, const Shape& w, const WindowGeometry&, int) {
       return directConvolutionWeightGradientScratchFloats(x, w);
     },
     directConvolutionWeightGradient},
    {"direct_few_channels", WeightGradientKernel::DIRECT_FEW_CHANNELS, CpuIsa::Avx2,
     "stride 1, no padding or dilation, fewer than 8 input channels",
     [](const Shape& w, const WindowGeometry& g, int64_t, int64_t) {
       return hasFewInputChannels(w) && directWeightGradientFits(g);
     },
     [](const Shape& x, const Shape& w, const WindowGeometry&, int) {
       return directWeightGradientScratchFloats(x, w);
     },
     directWeightGradient},
    {"im2col",
     WeightGradientKernel::IM2COL,
     CpuIsa::Baseline,
     "fewer than 8 input channels",
     [](const Shape& w, const WindowGeometry&, int64_t, int64_t) { return hasFewInputChannels(w); },
     im2colWeightGradientScratchFloats,
     im2colConvolutionBackwardWeights,
     {CpuIsa::Avx512, nullptr}},
    {"onednn", WeightGradientKernel::ONEDNN, CpuIsa::Baseline, "every convolution",
     [](const Shape&, const WindowGeometry&, int64_t, int64_t) { return true; }, nullptr, nullptr},
};
inline const ConvolutionWeightGradientAlgorithm& selectConvolutionWeightGradient(
    const Shape& w, const WindowGeometry& g, int64_t outH, int64_t outW) {
  return selectCpuAlgorithm("conv_backward_weights", kConvolutionWeightGradientAlgorithms, w, g,
                            outH, outW);
}

// The passes on dl4cpp's own kernels (f applied as they go, forward); false (nothing done) where
// oneDNN runs them (CpuConvolution.cpp).
bool ownConvolutionForward(CpuBackend& core, const Tensor& x, const Tensor& w, const Tensor& b,
                           const FusedActivation& f, Tensor& y, const WindowGeometry& g);

}  // namespace dl4cpp::cpu
