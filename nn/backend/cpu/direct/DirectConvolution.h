#pragma once
// Forward pass and weight gradient of a convolution at stride 1 without padding or dilation whose
// output rows are 8 wide (an even number of them) or a multiple of 16 wide, as direct kernels on
// plain NCHW tensors at the avx512 and avx2 levels (one Highway source, HighwayTargets.h): LeNet's
// second convolution (20 -> 50 channels, 5x5, 12x12 input, 8x8 output); the forward pass also for
// rows of any multiple of 8 (LeNet's first, 24 wide).
//
// oneDNN's fastest kernels for that convolution run in channels-last layout, so every call
// reordered its activations from NCHW and back (four reorders per step), and each primitive
// execution allocates. Here every vector holds consecutive outputs of a plane (16 lanes: two 8-wide
// rows, or 16 outputs of one row; 8 lanes: 8 outputs of one row), so the plane is read and written
// where it lies.
//
// Forward: a block of output channels times output vectors (5 x 4 at avx512, 4 x 3 at avx2) keeps
// its sums in registers while the input vectors of every tap are loaded once and each weight is
// broadcast once. Weight gradient: a block of output channels times horizontally adjacent taps
// (5 x 5 at avx512, 2 x 5 at avx2) keeps its sums in registers over a chunk of images, with dy
// loaded once per output vector.
#include <cstdint>

#include "nn/backend/OpTypes.h"
#include "nn/backend/cpu/Activations.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

// The shapes the kernels take: `g` has a stride and dilation of 1 and no padding, and the output
// (outH, outW) has rows 8 wide and an even number of them, or rows a multiple of 16 wide.
bool directConvolutionFits(const WindowGeometry& g, int64_t outH, int64_t outW);

// The forward pass takes more: output rows any multiple of 8 wide, in planes a multiple of 16
// (each vector's two 8-wide halves loaded from wherever their rows lie; LeNet's first
// convolution, 24-wide rows).
bool directConvolutionForwardFits(const WindowGeometry& g, int64_t outH, int64_t outW);

// The kernels run: the shape fits and cpuIsa() is avx2 or avx512.
bool directConvolutionSupported(const WindowGeometry& g, int64_t outH, int64_t outW);
bool directConvolutionForwardSupported(const WindowGeometry& g, int64_t outH, int64_t outW);

// y (N, O, outH, outW) = f(conv(x (N, C, H, W), w (O, C, kH, kW)) + b (O, or empty)), where
// directConvolutionForwardSupported, f applied to each work item's planes while they are in cache.
// Images are spread over the OpenMP threads; every output is one thread's sum in a fixed order, so
// results do not depend on the thread count.
void directConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                              const WindowGeometry& g, const FusedActivation& f = {});

// The most lanes of a direct kernel's vectors at any level (avx512's).
inline constexpr int64_t kDirectConvolutionMaxLanes = 16;

// directConvolutionForward's work items, (image, block of up to kMaxChannels output channels), for
// callers that use each item's output while it is in cache (ConvolutionPooling.h); the forward pass
// is a loop over run(item). x, w and b must outlive the object.
class DirectForward {
 public:
  static constexpr int64_t kMaxChannels = 5;  // output channels per item, at any level

  // One item's work, as the level's kernel takes it.
  struct Item {
    const Tensor *x, *w, *b;
    int64_t outH, outW, image, firstChannel, channels;
  };

  // Throws BackendError unless directConvolutionForwardSupported(g, outH, outW).
  DirectForward(const Tensor& x, const Tensor& w, const Tensor& b, int64_t outH, int64_t outW,
                const WindowGeometry& g);
  int64_t items() const;
  int64_t image(int64_t item) const;
  int64_t firstChannel(int64_t item) const;
  int64_t channels(int64_t item) const;
  // The item's output planes, channels(item) x outH x outW floats, into y.
  void run(int64_t item, float* y) const;

 private:
  const Tensor& x_;
  const Tensor& w_;
  const Tensor& b_;
  int64_t outH_, outW_, channelsPerItem_, blocks_ = 0;
};

// Floats of scratch directConvolutionWeightGradient needs for x and w: a vector of partial sums per
// weight, and where the avx2 kernel reads x from a copy with rows on whole cache lines (rows of 8
// outputs, inputs not already on whole lines), that copy.
int64_t directConvolutionWeightGradientScratchFloats(const Shape& x, const Shape& w);

// dw (O, C, kH, kW) and db (O, or empty) from x (N, C, H, W) and dy (N, O, outH, outW), where
// directConvolutionSupported. The weights are spread over the OpenMP threads; each weight's sum
// runs over the images in order, so results do not depend on the thread count.
void directConvolutionWeightGradient(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                     const WindowGeometry& g, float* scratch);

}  // namespace dl4cpp::cpu
