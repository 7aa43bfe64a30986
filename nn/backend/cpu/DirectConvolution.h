#pragma once
// Forward pass and weight gradient of a convolution at stride 1 without padding or dilation whose
// output rows are 8 wide (an even number of them) or a multiple of 16 wide, as direct AVX-512
// kernels on plain NCHW tensors: LeNet's second convolution (20 -> 50 channels, 5x5, 12x12 input,
// 8x8 output); the forward pass also for rows of any multiple of 8 (LeNet's first, 24 wide).
//
// oneDNN's fastest kernels for that convolution run in channels-last layout, so every call
// reordered its activations from NCHW and back (four reorders per step), and each primitive
// execution allocates. Here every 16-lane vector holds 16 consecutive outputs of a plane (two
// 8-wide rows, or 16 outputs of one row), so the plane is read and written where it lies.
//
// Forward: a block of up to 5 output channels times up to 4 output vectors keeps its 20 sums in
// registers while the input vectors of every tap are loaded once and each weight is broadcast
// once. Weight gradient: a block of up to 5 output channels times up to 5 horizontally adjacent
// taps keeps 25 sums in registers over a chunk of images, with dy loaded once per output vector.
#include <dl4cpp/nn/backend/OpTypes.h>
#include <dl4cpp/nn/tensor/Tensor.h>

#include <cstdint>

namespace dl4cpp::cpu {

// The shapes the kernels take: `g` has a stride and dilation of 1 and no padding, and the output
// (outH, outW) has rows 8 wide and an even number of them, or rows a multiple of 16 wide.
bool directConvolutionFits(const WindowGeometry& g, int64_t outH, int64_t outW);

// The forward pass takes more: output rows any multiple of 8 wide, in planes a multiple of 16
// (each vector's two 8-wide halves loaded from wherever their rows lie; LeNet's first
// convolution, 24-wide rows).
bool directConvolutionForwardFits(const WindowGeometry& g, int64_t outH, int64_t outW);

// The kernels run: the shape fits and cpuIsa() is AVX-512.
bool directConvolutionSupported(const WindowGeometry& g, int64_t outH, int64_t outW);
bool directConvolutionForwardSupported(const WindowGeometry& g, int64_t outH, int64_t outW);

// y (N, O, outH, outW) = conv(x (N, C, H, W), w (O, C, kH, kW)) + b (O, or empty), where
// directConvolutionForwardSupported. Images are spread over the OpenMP threads; every output is
// one thread's sum in a fixed order, so results do not depend on the thread count.
void directConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                              const WindowGeometry& g);

// directConvolutionForward's work items, (image, block of up to 5 output channels), for callers
// that use each item's output while it is in cache (ConvolutionPooling.h); the forward pass is a
// loop over run(item). x, w and b must outlive the object.
class DirectForward {
 public:
  static constexpr int64_t kMaxChannels = 5;  // output channels per item

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
  int64_t outH_, outW_, blocks_;
};

// Floats of scratch directConvolutionWeightGradient needs: 16 partial sums per weight.
int64_t directConvolutionWeightGradientScratchFloats(const Shape& w);

// dw (O, C, kH, kW) and db (O, or empty) from x (N, C, H, W) and dy (N, O, outH, outW), where
// directConvolutionSupported. The weights are spread over the OpenMP threads; each weight's sum
// runs over the images in order, so results do not depend on the thread count.
void directConvolutionWeightGradient(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                     const WindowGeometry& g, float* scratch);

}  // namespace dl4cpp::cpu
