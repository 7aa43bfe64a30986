#include <dl4cpp/nn/backend/cpu/Im2colConvolution.h>

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <string>

#include <dl4cpp/nn/Error.h>

namespace dl4cpp::cpu {

namespace {

struct Extents {
  int64_t channels, inH, inW, outH, outW;
};

// Row (c, kh, kw) of the column matrix holds, for every output position, the input pixel that
// kernel tap sees there (0 in the padding).
void im2col(const float* x, float* col, const Extents& e, const WindowGeometry& g) {
  const int64_t positions = e.outH * e.outW;
  float* row = col;
  for (int64_t c = 0; c < e.channels; ++c)
    for (int64_t kh = 0; kh < g.kernelH; ++kh)
      for (int64_t kw = 0; kw < g.kernelW; ++kw, row += positions) {
        // Output columns whose tap lands inside the input: ow in [first, last).
        const int64_t offsetW = kw * g.dilationW - g.padLeft;
        const int64_t s = g.strideW;
        const int64_t first = std::clamp<int64_t>((-offsetW + s - 1) / s, 0, e.outW);
        const int64_t last = std::clamp<int64_t>((e.inW - offsetW + s - 1) / s, first, e.outW);
        for (int64_t oh = 0; oh < e.outH; ++oh) {
          float* out = row + oh * e.outW;
          const int64_t ih = oh * g.strideH - g.padTop + kh * g.dilationH;
          if (ih < 0 || ih >= e.inH) {
            std::fill(out, out + e.outW, 0.0f);
            continue;
          }
          const float* in = x + (c * e.inH + ih) * e.inW + offsetW;
          std::fill(out, out + first, 0.0f);
          if (g.strideW == 1)
            std::copy(in + first, in + last, out + first);
          else
            for (int64_t ow = first; ow < last; ++ow) out[ow] = in[ow * g.strideW];
          std::fill(out + last, out + e.outW, 0.0f);
        }
      }
}

}  // namespace

int64_t im2colColumnFloats(const Shape& x, const Shape& w, const WindowGeometry& g) {
  return x[1] * w[2] * w[3] * g.outH(x[2]) * g.outW(x[3]);
}

void im2colConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                              const WindowGeometry& g, float* scratch) {
  const Extents e{x.dim(1), x.dim(2), x.dim(3), y.dim(2), y.dim(3)};
  const int64_t images = x.dim(0), outChannels = w.dim(0);
  const int64_t depth = e.channels * g.kernelH * g.kernelW, positions = e.outH * e.outW;
  const int64_t columnFloats = depth * positions;
  const float* xs = x.data();
  const float* ws = w.data();
  const float* bias = b.empty() ? nullptr : b.data();
  float* ys = y.data();
  std::atomic<dnnl_status_t> failure{dnnl_success};
  // Inside the parallel region oneDNN's sgemm runs on the calling thread only.
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < images; ++n) {
    float* col = scratch + omp_get_thread_num() * columnFloats;
    im2col(xs + n * e.channels * e.inH * e.inW, col, e, g);
    float* out = ys + n * outChannels * positions;
    for (int64_t o = 0; o < outChannels; ++o)
      std::fill(out + o * positions, out + (o + 1) * positions, bias ? bias[o] : 0.0f);
    // Row-major out[O, P] = W[O, CK] * col[CK, P] + out.
    const dnnl_status_t s = dnnl_sgemm('N', 'N', outChannels, positions, depth, 1.0f, ws, depth,
                                       col, positions, 1.0f, out, positions);
    if (s != dnnl_success) failure = s;
  }
  if (failure != dnnl_success)
    throw DnnlError("im2col convolution: dnnl_sgemm failed with status " +
                    std::to_string(static_cast<int>(failure.load())));
}

}  // namespace dl4cpp::cpu
