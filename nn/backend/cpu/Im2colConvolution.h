#pragma once
// Forward convolution on plain NCHW tensors as im2col + oneDNN's sgemm, one image at a time, for
// convolutions with few input channels (a network's first layer). oneDNN's direct kernels for
// them run in its blocked layout, which pads the output channels to a multiple of 16 and has to
// be reordered back to NCHW: for LeNet's first convolution (1 -> 20 channels, 5x5, 28x28 input,
// batch 128, one Zen 5 core) that reorder alone took as long as the convolution (0.68 + 0.65 ms),
// while im2col + sgemm writes NCHW directly (0.56 ms).
#include <cstdint>

#include <dl4cpp/nn/backend/OpTypes.h>
#include <dl4cpp/nn/tensor/Tensor.h>

namespace dl4cpp::cpu {

// Floats of scratch im2colConvolutionForward needs with `threads` OpenMP threads: the weights
// with the bias appended, and one image's column matrix, [C*kH*kW + 1, outH*outW], per thread.
int64_t im2colScratchFloats(const Shape& x, const Shape& w, const WindowGeometry& g, int threads);

// y (N, O, outH, outW) = conv(x (N, C, H, W), w (O, C, kH, kW)) + b (O, or empty), with any
// stride, padding and dilation. Images are spread over the OpenMP threads; `scratch` holds
// im2colScratchFloats(..., omp_get_max_threads()) floats. Every output is computed by one
// thread in a fixed order, so results do not depend on the thread count.
void im2colConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                              const WindowGeometry& g, float* scratch);

}  // namespace dl4cpp::cpu
