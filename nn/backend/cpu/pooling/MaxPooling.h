#pragma once
// MAX pooling on plain NCHW tensors without oneDNN, for windows without padding (LeNet's 2x2/2).
// oneDNN's pooling on plain layouts transposes into its blocked layout and back inside every
// call; these loops read and write NCHW directly. Forward results equal oneDNN's bit for bit: the
// first maximum in window order wins ties (as in oneDNN, a NaN never wins). Backward adds each
// gradient at its arg-max: oneDNN's bits where windows do not overlap; where they do, a pixel that
// is the arg-max of several windows may sum their gradients in another order than oneDNN's.
#include <cstdint>

#include "nn/backend/OpTypes.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

// True when the direct loops handle the window: no padding, no dilation, at most 256 positions
// (the arg-max is recorded as one byte per output).
bool directMaxPoolingApplies(const WindowGeometry& g);

// Floats of workspace a training forward needs for output y: one byte per output element.
int64_t maxPoolingWorkspaceFloats(const Shape& y);

// x (N, C, H, W) -> y (N, C, outH, outW). With `argmax` (training), records each output's
// position in its window (kh * kernelW + kw) there, one byte per output. 2x2 windows of stride 2
// run on vectors where cpuIsa() is avx2 or avx512; allowVectors = false forces the scalar loop
// (for tests), with the same bits.
void maxPoolingForward(const Tensor& x, Tensor& y, const WindowGeometry& g, uint8_t* argmax,
                       bool allowVectors = true);

// dx = 0, then dx[arg-max of each output] += dy. Vectors as in maxPoolingForward.
void maxPoolingBackward(const Tensor& dy, Tensor& dx, const WindowGeometry& g,
                        const uint8_t* argmax, bool allowVectors = true);

// The extents of one (n, c) plane: input inH x inW, output outH x outW.
struct PlaneExtents {
  int64_t inH, inW, outH, outW;
};

// The same two passes over `planes` consecutive planes, on the calling thread (for callers that
// pool an image as soon as they have computed it; the functions above split planes over the
// OpenMP threads and call these).
void maxPoolingForwardPlanes(const float* x, float* y, uint8_t* argmax, int64_t planes,
                             const PlaneExtents& e, const WindowGeometry& g,
                             bool allowVectors = true);
void maxPoolingBackwardPlanes(const float* dy, float* dx, const uint8_t* argmax, int64_t planes,
                              const PlaneExtents& e, const WindowGeometry& g,
                              bool allowVectors = true);

}  // namespace dl4cpp::cpu
