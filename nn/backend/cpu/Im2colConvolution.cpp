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
          const float* in = x + (c * e.inH + ih) * e.inW;  // input row ih; column offsetW + ow * s
          std::fill(out, out + first, 0.0f);
          if (s == 1)
            std::copy(in + offsetW + first, in + offsetW + last, out + first);
          else
            for (int64_t ow = first; ow < last; ++ow) out[ow] = in[offsetW + ow * s];
          std::fill(out + last, out + e.outW, 0.0f);
        }
      }
}

// Rows of a column matrix, and columns of the extended weights: the kernel taps plus the row of
// ones that multiplies the bias. Scratch holds the weights [O, depth] first, then one column
// matrix [depth, outH * outW] per thread.
int64_t scratchDepth(const Shape& x, const Shape& w) { return x[1] * w[2] * w[3] + 1; }

}  // namespace

int64_t im2colScratchFloats(const Shape& x, const Shape& w, const WindowGeometry& g,
                            int threads) {
  const int64_t depth = scratchDepth(x, w);
  return w[0] * depth + threads * depth * g.outH(x[2]) * g.outW(x[3]);
}

void im2colConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                              const WindowGeometry& g, float* scratch) {
  const Extents e{x.dim(1), x.dim(2), x.dim(3), y.dim(2), y.dim(3)};
  const int64_t images = x.dim(0), outChannels = w.dim(0);
  const int64_t taps = e.channels * g.kernelH * g.kernelW, positions = e.outH * e.outW;
  // The bias rides in the GEMM: weights [O, taps + 1] with the bias as last column, times columns
  // [taps + 1, P] whose last row is ones. Filling the output with the bias first and accumulating
  // into it (beta = 1) cost a fifth more on LeNet's first layer.
  const bool bias = !b.empty();
  const int64_t rows = scratchDepth(x.shape(), w.shape());  // stride of the scratch blocks
  const int64_t depth = bias ? taps + 1 : taps;             // rows the GEMM reads
  const float* weights = w.data();
  if (bias) {
    float* extended = scratch;
    for (int64_t o = 0; o < outChannels; ++o) {
      std::copy_n(w.data() + o * taps, taps, extended + o * depth);
      extended[o * depth + taps] = b.data()[o];
    }
    weights = extended;
  }
  float* columns = scratch + outChannels * rows;
  const float* xs = x.data();
  float* ys = y.data();
  std::atomic<dnnl_status_t> failure{dnnl_success};
  // Inside the parallel region oneDNN's sgemm runs on the calling thread only.
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < images; ++n) {
    float* col = columns + omp_get_thread_num() * rows * positions;
    im2col(xs + n * e.channels * e.inH * e.inW, col, e, g);
    if (bias) std::fill(col + taps * positions, col + depth * positions, 1.0f);
    // Row-major y_n[O, P] = weights[O, depth] * col[depth, P].
    float* out = ys + n * outChannels * positions;
    const dnnl_status_t s = dnnl_sgemm('N', 'N', outChannels, positions, depth, 1.0f, weights,
                                       depth, col, positions, 0.0f, out, positions);
    if (s != dnnl_success) failure = s;
  }
  if (failure != dnnl_success)
    throw DnnlError("im2col convolution: dnnl_sgemm failed with status " +
                    std::to_string(static_cast<int>(failure.load())));
}

}  // namespace dl4cpp::cpu
