#pragma once
// The index arithmetic of the convolution and pooling kernels, one output element per call:
// im2col, col2im (as a gather), max/avg pooling forward and their backward gathers. Plain C++
// compiled both by nvcc (for the kernels, which are thin grid-stride loops around these) and by
// the host compiler, so test/cuda/WindowIndexingTest.cpp checks every formula against the CPU
// backend on machines without a GPU.
#include <cstdint>

#include "nn/backend/HostDevice.h"

namespace dl4cpp::cuda {

// --- Convolution
// ----------------------------------------------------------------------------------- columns (N,
// C*kH*kW, outH*outW): for image n, row (c * kH + kh) * kW + kw, position oh * outW + ow holds the
// input value that kernel tap (kh, kw) of channel c sees at output (oh, ow), or 0 where the tap
// lies in the padding. Weights (O, C, kH, kW) read row-major as (O, C*kH*kW) use the same row
// order, so y[n] = W columns[n].
struct ConvShape {
  int64_t batch, channels, height, width;  // input
  int64_t outH, outW;
  int64_t kH, kW, sH, sW, padTop, padLeft, dH, dW;  // dH, dW: dilation (1 = none)
  DL4CPP_HOST_DEVICE int64_t rows() const { return channels * kH * kW; }
  DL4CPP_HOST_DEVICE int64_t positions() const { return outH * outW; }
};

// Element i of the column buffer, i < batch * rows() * positions().
DL4CPP_HOST_DEVICE inline float im2colElement(const float* x, const ConvShape& s, int64_t i) {
  const int64_t rows = s.rows(), positions = s.positions();
  const int64_t p = i % positions;
  const int64_t row = (i / positions) % rows;
  const int64_t n = i / (positions * rows);
  const int64_t kw = row % s.kW, kh = (row / s.kW) % s.kH, c = row / (s.kW * s.kH);
  const int64_t oh = p / s.outW, ow = p % s.outW;
  const int64_t ih = oh * s.sH - s.padTop + kh * s.dH;
  const int64_t iw = ow * s.sW - s.padLeft + kw * s.dW;
  const bool inside = ih >= 0 && ih < s.height && iw >= 0 && iw < s.width;
  return inside ? x[((n * s.channels + c) * s.height + ih) * s.width + iw] : 0.0f;
}

// Element i of dx (N, C, H, W): the sum of the column-gradient entries im2col filled from it.
// Tap (kh, kw) read input row ih at output row oh exactly when oh * sH = ih + padTop - kh * dH.
DL4CPP_HOST_DEVICE inline float col2imElement(const float* columns, const ConvShape& s, int64_t i) {
  const int64_t rows = s.rows(), positions = s.positions();
  const int64_t iw = i % s.width;
  const int64_t ih = (i / s.width) % s.height;
  const int64_t c = (i / (s.width * s.height)) % s.channels;
  const int64_t n = i / (s.width * s.height * s.channels);
  const float* image = columns + n * rows * positions;
  float sum = 0.0f;
  for (int64_t kh = 0; kh < s.kH; ++kh) {
    const int64_t th = ih + s.padTop - kh * s.dH;
    if (th < 0 || th % s.sH != 0) continue;
    const int64_t oh = th / s.sH;
    if (oh >= s.outH) continue;
    for (int64_t kw = 0; kw < s.kW; ++kw) {
      const int64_t tw = iw + s.padLeft - kw * s.dW;
      if (tw < 0 || tw % s.sW != 0) continue;
      const int64_t ow = tw / s.sW;
      if (ow >= s.outW) continue;
      sum += image[((c * s.kH + kh) * s.kW + kw) * positions + oh * s.outW + ow];
    }
  }
  return sum;
}

// --- Pooling
// ---------------------------------------------------------------------------------------
struct PoolShape {
  int64_t planes;  // N * C
  int64_t height, width, outH, outW;
  int64_t kH, kW, sH, sW, padTop, padLeft;
};

// The window of output (oh, ow) clipped to the image: rows [h0, h1), columns [w0, w1).
struct Window {
  int64_t h0, h1, w0, w1;
  DL4CPP_HOST_DEVICE int64_t area() const { return (h1 - h0) * (w1 - w0); }
};
DL4CPP_HOST_DEVICE inline Window clippedWindow(const PoolShape& s, int64_t oh, int64_t ow) {
  const int64_t hs = oh * s.sH - s.padTop, ws = ow * s.sW - s.padLeft;
  return {hs < 0 ? 0 : hs, hs + s.kH < s.height ? hs + s.kH : s.height, ws < 0 ? 0 : ws,
          ws + s.kW < s.width ? ws + s.kW : s.width};
}

// Output element i of MAX pooling; *where = the arg-max's index ih * W + iw in its image plane
// (the first maximum in window order; -1 for a window entirely in the padding). Padding is
// ignored, as if it held -infinity.
DL4CPP_HOST_DEVICE inline float maxPoolElement(const float* x, const PoolShape& s, int64_t i,
                                               int* where) {
  const int64_t ow = i % s.outW, oh = (i / s.outW) % s.outH, plane = i / (s.outW * s.outH);
  const float* image = x + plane * s.height * s.width;
  const Window win = clippedWindow(s, oh, ow);
  float best = -3.402823466e+38f;  // -FLT_MAX
  int64_t at = -1;
  for (int64_t h = win.h0; h < win.h1; ++h)
    for (int64_t w = win.w0; w < win.w1; ++w) {
      const float v = image[h * s.width + w];
      if (at < 0 || v > best) {  // strict: the first maximum wins
        best = v;
        at = h * s.width + w;
      }
    }
  *where = static_cast<int>(at);
  return best;
}

// Output element i of AVG pooling: the mean over the window's elements inside the image.
DL4CPP_HOST_DEVICE inline float avgPoolElement(const float* x, const PoolShape& s, int64_t i) {
  const int64_t ow = i % s.outW, oh = (i / s.outW) % s.outH, plane = i / (s.outW * s.outH);
  const float* image = x + plane * s.height * s.width;
  const Window win = clippedWindow(s, oh, ow);
  float sum = 0.0f;
  for (int64_t h = win.h0; h < win.h1; ++h)
    for (int64_t w = win.w0; w < win.w1; ++w) sum += image[h * s.width + w];
  return win.area() > 0 ? sum / static_cast<float>(win.area()) : 0.0f;
}

// Output positions along one axis whose window covers input position `in`:
// oh * stride - pad <= in < oh * stride - pad + k, clipped to [0, outExtent).
DL4CPP_HOST_DEVICE inline void coveringRange(int64_t in, int64_t k, int64_t stride, int64_t pad,
                                             int64_t outExtent, int64_t& first, int64_t& last) {
  const int64_t lo = in + pad - k + 1;  // the smallest oh * stride
  first = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  const int64_t hi = (in + pad) / stride;  // in + pad >= 0
  last = hi < outExtent - 1 ? hi : outExtent - 1;
}

// Input-gradient element i: MAX sums dy over the covering windows whose arg-max is this element;
// AVG (argmax == nullptr) sums each covering window's dy divided by its area.
DL4CPP_HOST_DEVICE inline float poolBackwardElement(const float* dy, const int* argmax,
                                                    const PoolShape& s, int64_t i) {
  const int64_t iw = i % s.width, ih = (i / s.width) % s.height, plane = i / (s.width * s.height);
  const int64_t outPlane = plane * s.outH * s.outW;
  int64_t oh0, oh1, ow0, ow1;
  coveringRange(ih, s.kH, s.sH, s.padTop, s.outH, oh0, oh1);
  coveringRange(iw, s.kW, s.sW, s.padLeft, s.outW, ow0, ow1);
  const int self = static_cast<int>(ih * s.width + iw);
  float sum = 0.0f;
  for (int64_t oh = oh0; oh <= oh1; ++oh)
    for (int64_t ow = ow0; ow <= ow1; ++ow) {
      const int64_t o = outPlane + oh * s.outW + ow;
      if (argmax) {
        if (argmax[o] == self) sum += dy[o];
      } else {
        const int64_t area = clippedWindow(s, oh, ow).area();
        if (area > 0) sum += dy[o] / static_cast<float>(area);
      }
    }
  return sum;
}

}  // namespace dl4cpp::cuda
