#pragma once
// The index arithmetic of the CUDA backend's zero padding (Backend::zeroPaddingForward /
// Backward), one element per call. Plain C++ compiled by nvcc for the kernels and by the host
// compiler for test/cuda/PaddingMathTest.cpp, which checks it against the CPU backend.
#include <cstdint>

#include "nn/backend/HostDevice.h"
#include "nn/backend/OpTypes.h"

namespace dl4cpp::cuda {

struct PaddingShape {
  int64_t height, width;  // of the input planes
  Padding2d p;
  DL4CPP_HOST_DEVICE int64_t outH() const { return height + p.top + p.bottom; }
  DL4CPP_HOST_DEVICE int64_t outW() const { return width + p.left + p.right; }
};

// Element i of the padded output: the input element it frames, or 0.
DL4CPP_HOST_DEVICE inline float paddedElement(const float* x, const PaddingShape& s, int64_t i) {
  const int64_t ow = i % s.outW(), oh = (i / s.outW()) % s.outH(),
                plane = i / (s.outW() * s.outH());
  const int64_t h = oh - s.p.top, w = ow - s.p.left;
  const bool inside = h >= 0 && h < s.height && w >= 0 && w < s.width;
  return inside ? x[(plane * s.height + h) * s.width + w] : 0.0f;
}

// Element i of the input gradient: the padded gradient's element at the same place.
DL4CPP_HOST_DEVICE inline float croppedElement(const float* dy, const PaddingShape& s, int64_t i) {
  const int64_t w = i % s.width, h = (i / s.width) % s.height, plane = i / (s.width * s.height);
  return dy[(plane * s.outH() + h + s.p.top) * s.outW() + w + s.p.left];
}

}  // namespace dl4cpp::cuda
