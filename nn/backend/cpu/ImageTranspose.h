#pragma once
// NCHW <-> NHWC conversion, as a transpose of each image's [rows, cols] matrix.
//
// oneDNN's channels-last convolutions (LeNet's 20 -> 50) take NHWC arguments while dl4cpp's tensors
// are NCHW; oneDNN 2.6's generic reorder ("jit:uni") converted LeNet's (128, 20, 12, 12) input in
// 0.116 ms and its (128, 50, 8, 8) output back in 0.126 ms on one Zen 5 core, four of them per
// training step. Here 16x16 tiles are transposed in AVX-512 registers: 0.040 and 0.041 ms against
// oneDNN's 0.102 and 0.110 in the same run.
#include <cstdint>

namespace dl4cpp::cpu {

// For each of `images` consecutive [rows, cols] row-major matrices in src, writes its transpose
// [cols, rows] to the same place in dst: NCHW -> NHWC with rows = C, cols = H·W, and NHWC -> NCHW
// with rows = H·W, cols = C. src and dst must not overlap. Images are spread over the OpenMP
// threads. Runs with AVX-512 where the processor has it; allowAvx512 = false forces the scalar
// loop (for tests).
void transposeImages(const float* src, float* dst, int64_t images, int64_t rows, int64_t cols,
                     bool allowAvx512 = true);

}  // namespace dl4cpp::cpu
