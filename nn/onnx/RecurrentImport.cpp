#include "nn/onnx/RecurrentImport.h"

namespace dl4cpp::onnx {

std::vector<float> dl4cppRecurrentParams(RecurrentCell cell, const OnnxRecurrentWeights& onnx) {
  const int64_t f = onnx.inputSize, h = onnx.hiddenSize;
  if (cell == RecurrentCell::SimpleRnn) {
    // W (F, H), RW (H, H), b (H): ONNX's W and R transposed.
    std::vector<float> params(f * h + h * h + h);
    float* pw = params.data();
    float* prw = pw + f * h;
    float* pb = prw + h * h;
    for (int64_t j = 0; j < h; ++j) {
      for (int64_t k = 0; k < f; ++k) pw[k * h + j] = onnx.w[j * f + k];
      for (int64_t k = 0; k < h; ++k) prw[k * h + j] = onnx.r[j * h + k];
      pb[j] = onnx.b.empty() ? 0.0f : onnx.b[j] + onnx.b[h + j];
    }
    return params;
  }
  // ONNX's gate blocks [i | o | f | c] in rows; dl4cpp's [a(=c) | f | o | i] in columns.
  constexpr int64_t kDl4cppBlock[4] = {3, 2, 1, 0};
  const bool graves = cell == RecurrentCell::GravesLstm;
  const int64_t ld = 4 * h + (graves ? 3 : 0);  // RW's row length
  std::vector<float> params(f * 4 * h + h * ld + 4 * h);
  float* pw = params.data();
  float* prw = pw + f * 4 * h;
  float* pb = prw + h * ld;
  for (int64_t g = 0; g < 4; ++g) {
    const int64_t to = kDl4cppBlock[g] * h;
    for (int64_t j = 0; j < h; ++j) {
      const int64_t row = g * h + j;
      for (int64_t k = 0; k < f; ++k) pw[k * 4 * h + to + j] = onnx.w[row * f + k];
      for (int64_t k = 0; k < h; ++k) prw[k * ld + to + j] = onnx.r[row * h + k];
      pb[to + j] = onnx.b.empty() ? 0.0f : onnx.b[row] + onnx.b[4 * h + row];
    }
  }
  if (graves)
    for (int64_t j = 0; j < h; ++j) {
      float* peep = prw + j * ld + 4 * h;  // wFF, wOO, wGG
      peep[0] = onnx.p[2 * h + j];
      peep[1] = onnx.p[h + j];
      peep[2] = onnx.p[j];
    }
  return params;
}

}  // namespace dl4cpp::onnx
