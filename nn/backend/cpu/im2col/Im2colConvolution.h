#pragma once
// Convolution passes on plain NCHW tensors as GEMMs with dl4cpp's sgemm (Sgemm.h), one image at a
// time.
//
// Forward (im2col + sgemm), for convolutions with few input channels (a network's first layer).
// oneDNN's direct kernels for them run in its blocked layout, which pads the output channels to a
// multiple of 16 and has to be reordered back to NCHW, a pass that costs about as much as the
// convolution itself; im2col + sgemm writes NCHW directly.
//
// Backward data (sgemm + col2im), for every convolution whose column matrix is not large
// (CpuBackend.cpp). oneDNN 2.6 has no brgemm kernel for this pass, and its direct channels-last
// kernel runs well below sgemm's speed at the same shape, plus a reorder of each argument.
#include <cstdint>

#include "nn/backend/OpTypes.h"
#include "nn/backend/cpu/Activations.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

// Floats of scratch im2colConvolutionForward needs with `threads` OpenMP threads: the weights
// with the bias appended, and per thread one image's column matrix, [C*kH*kW + 1, outH*outW], and
// sgemm's packing space.
int64_t im2colScratchFloats(const Shape& x, const Shape& w, const WindowGeometry& g, int threads);

// y (N, O, outH, outW) = f(conv(x (N, C, H, W), w (O, C, kH, kW)) + b (O, or empty)), with any
// stride, padding and dilation, f applied to each image's output while it is in cache. Images are
// spread over the OpenMP threads; `scratch` holds im2colScratchFloats(..., omp_get_max_threads())
// floats. Every output is computed by one thread in a fixed order, so results do not depend on
// the thread count.
void im2colConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                              const WindowGeometry& g, float* scratch,
                              const FusedActivation& f = {});

// One image's input and output extents.
struct ConvolutionExtents {
  int64_t channels, inH, inW, outH, outW;
};

// im2colConvolutionForward one image at a time, for callers that use each image's output while it
// is still in cache (ConvolutionPooling.h); im2colConvolutionForward is a loop over image().
class Im2colForward {
 public:
  // `scratch` as for im2colConvolutionForward; the weights (with the bias appended) are prepared
  // here, so x, w, b and the scratch must outlive the object.
  Im2colForward(const Tensor& x, const Tensor& w, const Tensor& b, const WindowGeometry& g,
                float* scratch);
  // Image n's output, O x outH x outW floats, into y, with the columns in scratch part `thread`
  // (each concurrent caller its own, below the thread count the scratch was sized for).
  void image(int64_t n, float* y, int thread) const;

 private:
  const float* x_;
  ConvolutionExtents extents_;
  WindowGeometry geometry_;
  int64_t outChannels_, taps_, rows_;
  bool bias_;
  const float* weights_;
  float* columns_ = nullptr;
  int64_t perThread_ = 0;
};

// Floats of scratch im2colConvolutionBackwardData needs with `threads` OpenMP threads: per thread
// one image's column-gradient matrix, [C*kH*kW, outH*outW], and sgemm's packing space.
int64_t col2imScratchFloats(const Shape& x, const Shape& w, const WindowGeometry& g, int threads);

// dx (N, C, H, W) = the gradient of conv(x, w) with respect to x, given dy (N, O, outH, outW) and
// w (O, C, kH, kW), with any stride, padding and dilation: per image, dcol = wᵀ · dy_n (sgemm),
// then each column entry is added to the input pixel it came from (col2im). `scratch` holds
// col2imScratchFloats(..., omp_get_max_threads()) floats. Each image is one thread's, summed in a
// fixed order, so results do not depend on the thread count. col2im runs as a gather with
// AVX2 or AVX-512 where col2imGatherSupported(g), else as a scatter (allowGather = false forces the
// scatter, for tests).
void im2colConvolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                   const WindowGeometry& g, float* scratch,
                                   bool allowGather = true);

// The shapes the gather takes: a horizontal stride of 1 and a kernel at most 32 wide (it keeps one
// mask per kernel column).
inline constexpr int64_t kCol2imGatherMaxKernelW = 32;
bool col2imGatherFits(const WindowGeometry& g);
// The gather runs: the shape fits and cpuIsa() is avx2 or avx512.
bool col2imGatherSupported(const WindowGeometry& g);

// Floats of scratch im2colConvolutionBackwardWeights needs with `threads` OpenMP threads: the sums
// of each group of 16 images, [O, C·kH·kW + 1], and per thread one image's column matrix with a
// row of ones, [C·kH·kW + 1, outH·outW], and sgemm's packing space.
int64_t im2colWeightGradientScratchFloats(const Shape& x, const Shape& w, const WindowGeometry& g,
                                          int threads);

// dw (O, C, kH, kW) and db (O, or empty) from x (N, C, H, W) and dy (N, O, outH, outW), with any
// stride, padding and dilation: per image, [dw | db]_n = dy_n · [col_n; 1]ᵀ (sgemm), accumulated
// in image order within each group of 16 images, then the groups' sums added in order
// (directWeightGradientSum), so results do not depend on the thread count. For convolutions with
// few input channels below the level of the direct kernel (DirectWeightGradient.h), where oneDNN's
// kernels run them several times slower.
void im2colConvolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                      const WindowGeometry& g, float* scratch);

// The same from the gradient of f's output, dy: each image's dz = f'(y) · dy, from f's output y
// (N, O, outH, outW), goes into a per-thread buffer while it is in cache and the image's sgemm
// reads it there, the same numbers as activationBackward into dz followed by the pass above. For a
// network's first layer, whose dz nothing else reads. Scratch: the pass's, plus one image's dz per
// thread.
int64_t im2colActivationWeightGradientScratchFloats(const Shape& x, const Shape& w,
                                                    const WindowGeometry& g, int threads);
void im2colConvolutionActivationBackwardWeights(const Tensor& x, const Tensor& y, const Tensor& dy,
                                                const FusedActivation& f, Tensor& dw, Tensor& db,
                                                const WindowGeometry& g, float* scratch);

}  // namespace dl4cpp::cpu
