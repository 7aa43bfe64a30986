#pragma once
// The formulas of the CUDA backend's batch normalisation, compiled by nvcc for the kernels
// (CudaBatchNorm.cu) and by the host compiler for test/cuda/BatchNormMathTest.cpp, which checks
// them against the CPU backend (oneDNN) without a GPU.
//
// x is (N, C, S) in memory, S = H * W for images and 1 for rows; channel c's M = N * S values are
// x[(n * C + c) * S + s]. Statistics are formed in double over one channel in a fixed order.
#include <math.h>

#include <cstdint>

#include "nn/backend/HostDevice.h"

namespace dl4cpp::cuda {

struct BatchNormShape {
  int64_t batch, channels, spatial;
  DL4CPP_HOST_DEVICE int64_t perChannel() const { return batch * spatial; }
  // The memory index of the j-th value (j < perChannel()) of channel c.
  DL4CPP_HOST_DEVICE int64_t index(int64_t c, int64_t j) const {
    return ((j / spatial) * channels + c) * spatial + j % spatial;
  }
  // The channel of the value at memory index i.
  DL4CPP_HOST_DEVICE int64_t channelOf(int64_t i) const { return (i / spatial) % channels; }
};

DL4CPP_HOST_DEVICE inline float inverseStd(float variance, float eps) {
  return 1.0f / sqrtf(variance + eps);
}

// y = gamma (x - mean) / sqrt(variance + eps) + beta.
DL4CPP_HOST_DEVICE inline float batchNormElement(float x, float mean, float invStd, float gamma,
                                                 float beta) {
  return gamma * ((x - mean) * invStd) + beta;
}

// The activation a batch normalisation may apply to its values (NormalizationOps.h): the ReLU op's
// max(v, 0) (0 for a NaN), and the gradient reaching v from dy, the gradient of y = max(v, 0).
DL4CPP_HOST_DEVICE inline float fusedRelu(float v) { return v > 0.0f ? v : 0.0f; }
DL4CPP_HOST_DEVICE inline float fusedReluGradient(float y, float dy) {
  return y > 0.0f ? dy : 0.0f * dy;
}

// dx from dy, the normalised input xhat and the channel's sums of dy (= dbeta) and dy * xhat
// (= dgamma) over its M values: gamma invStd (dy - sumDy / M - xhat sumDyXhat / M).
DL4CPP_HOST_DEVICE inline float batchNormInputGradient(float dy, float xhat, float gamma,
                                                       float invStd, float sumDy, float sumDyXhat,
                                                       int64_t m) {
  const float inverseM = 1.0f / static_cast<float>(m);
  return gamma * invStd * (dy - sumDy * inverseM - xhat * sumDyXhat * inverseM);
}

}  // namespace dl4cpp::cuda
