#include <dl4cpp/nn/Error.h>
#include <dl4cpp/nn/backend/cpu/Avx512Sum.h>
#include <dl4cpp/nn/backend/cpu/CpuIsa.h>
#include <dl4cpp/nn/backend/cpu/DirectConvolution.h>
#include <dl4cpp/nn/backend/cpu/KernelTable.h>
#include <dl4cpp/nn/backend/cpu/ParallelFor.h>
#include <dl4cpp/nn/backend/cpu/X86Kernels.h>

#include <algorithm>

namespace dl4cpp::cpu {

namespace {

struct Extents {
  int64_t channels, inH, inW, outH, outW, kernelH, kernelW;
  int64_t inPlane() const { return inH * inW; }
  int64_t outPlane() const { return outH * outW; }
  int64_t vectors() const { return outPlane() / 16; }
  int64_t taps() const { return kernelH * kernelW; }
  // Where in an input plane the first tap of output vector v starts: rows of 8 pair up (the upper
  // 8 lanes one input row further down), wider rows split into runs of 16.
  int64_t inputOffset(int64_t v) const {
    if (outW == 8) return 2 * v * inW;
    const int64_t runs = outW / 16;
    return v / runs * inW + v % runs * 16;
  }
  // The same for the forward pass's half vectors, when rows are a multiple of 8 wide but not of
  // 16: half h covers outputs 8h .. 8h + 7 of the plane, which lie in one row (LeNet's first
  // convolution: 24-wide rows, a vector's halves in one row or in two).
  int64_t halfOffset(int64_t h) const { return 8 * h / outW * inW + 8 * h % outW; }
};

#ifdef DL4CPP_X86_KERNELS
// 8 floats from `low` in lanes 0-7, 8 from `high` in lanes 8-15.
__attribute__((target("avx512f"), always_inline)) inline __m512 loadHalves(const float* low,
                                                                           const float* high) {
  const __m256d l = _mm256_castps_pd(_mm256_loadu_ps(low));
  const __m256d h = _mm256_castps_pd(_mm256_loadu_ps(high));
  // (The maskz form: GCC 12's plain one reads an undefined register and warns.)
  return _mm512_castpd_ps(_mm512_maskz_insertf64x4(0xFF, _mm512_castpd256_pd512(l), h, 1));
}

// 16 inputs seen by one tap for one output vector: two 8-wide rows, or 16 of one row.
template <bool kRowPairs>
__attribute__((target("avx512f"), always_inline)) inline __m512 loadInputs(const float* p,
                                                                           int64_t inW) {
  if constexpr (kRowPairs) {
    return loadHalves(p, p + inW);
  } else {
    (void)inW;
    return _mm512_loadu_ps(p);
  }
}

// --- Forward
// ---------------------------------------------------------------------------------------

// Blocks of up to 5 output channels x 4 output vectors: 20 sums, 4 input vectors and a broadcast
// weight in registers. (LeNet's 50 channels and 64-output planes split into 10 such blocks per
// image, each covering its whole plane.)
constexpr int kForwardChannels = DirectForward::kMaxChannels;
constexpr int kForwardVectors = 4;

// Outputs [firstVector, firstVector + V) of B output channels of one image. `x` is the image,
// `w` the first channel's weights, `bias` its bias (or null), `y` its output plane.
template <int B, int V, bool kHalfRows>
__attribute__((target("avx512f"))) void forwardBlock(const float* x, const float* w,
                                                     const float* bias, float* y,
                                                     int64_t firstVector, const Extents& e) {
  const int64_t inW = e.inW, inPlane = e.inPlane(), kernelW = e.kernelW;
  const int64_t weightStride = e.channels * e.taps();
  // Input offsets of each vector's low and high 8 lanes (with runs of 16, the high half follows).
  int64_t low[V], high[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    low[v] = kHalfRows ? e.halfOffset(2 * (firstVector + v)) : e.inputOffset(firstVector + v);
    high[v] = kHalfRows ? e.halfOffset(2 * (firstVector + v) + 1) : low[v] + 8;
  }
  __m512 acc[B][V];
#pragma GCC unroll 8
  for (int j = 0; j < B; ++j) {
    const __m512 start = bias ? _mm512_set1_ps(bias[j]) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) acc[j][v] = start;
  }
  for (int64_t c = 0; c < e.channels; ++c)
    for (int64_t kh = 0; kh < e.kernelH; ++kh) {
      const float* row = x + c * inPlane + kh * inW;
      const float* weights = w + (c * e.kernelH + kh) * kernelW;
      for (int64_t kw = 0; kw < kernelW; ++kw) {
        __m512 in[V];
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v)
          in[v] = kHalfRows ? loadHalves(row + kw + low[v], row + kw + high[v])
                            : _mm512_loadu_ps(row + kw + low[v]);
#pragma GCC unroll 8
        for (int j = 0; j < B; ++j) {
          const __m512 weight = _mm512_set1_ps(weights[j * weightStride + kw]);
#pragma GCC unroll 8
          for (int v = 0; v < V; ++v) acc[j][v] = _mm512_fmadd_ps(in[v], weight, acc[j][v]);
        }
      }
    }
  const int64_t outPlane = e.outPlane();
#pragma GCC unroll 8
  for (int j = 0; j < B; ++j)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v)
      _mm512_storeu_ps(y + j * outPlane + (firstVector + v) * 16, acc[j][v]);
}

using ForwardKernel = void (*)(const float*, const float*, const float*, float*, int64_t,
                               const Extents&);

// kForwardKernels<kHalfRows>[B - 1][V - 1] handles B output channels and V vectors.
template <bool kHalfRows>
struct ForwardFor {
  template <int B, int V>
  struct Pick {
    static constexpr ForwardKernel kernel = &forwardBlock<B, V, kHalfRows>;
  };
};
template <bool kHalfRows>
constexpr auto kForwardKernels =
    kernelTable<ForwardFor<kHalfRows>::template Pick, kForwardChannels, kForwardVectors>();

// --- Weight gradient
// -------------------------------------------------------------------------------

// Blocks of up to 5 output channels x 5 adjacent taps: 25 sums, 5 input vectors and one dy vector
// in registers (31 of 32).
constexpr int kGradientChannels = 5;
constexpr int kGradientTaps = 5;
// Images per pass over the blocks: their x and one block's dy stay in cache while every block of
// taps is accumulated (LeNet's second convolution: 16 images' dy for 5 channels is 20 KiB).
constexpr int64_t kGradientImages = 16;

// Adds to `sums` (B x T vectors: [j * stride + t] for channel j, tap t) the products of T adjacent
// taps' inputs with B output channels' dy over images [0, images). `x` is the first image's input
// at the first tap (channel plane + kh·W + kw), `dy` the first image's gradient plane of the first
// channel; images are `xImage` and `dyImage` floats apart.
template <int B, int T, bool kRowPairs>
__attribute__((target("avx512f"))) void gradientBlock(const float* x, const float* dy,
                                                      int64_t images, int64_t xImage,
                                                      int64_t dyImage, float* sums, int64_t stride,
                                                      bool first, const Extents& e) {
  const int64_t inW = e.inW, outPlane = e.outPlane(), vectors = e.vectors();
  __m512 acc[B][T];
#pragma GCC unroll 8
  for (int j = 0; j < B; ++j)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t)
      acc[j][t] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(sums + (j * stride + t) * 16);
  for (int64_t n = 0; n < images; ++n, x += xImage, dy += dyImage)
    for (int64_t v = 0; v < vectors; ++v) {
      const float* in = x + e.inputOffset(v);
      __m512 inputs[T];
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) inputs[t] = loadInputs<kRowPairs>(in + t, inW);
#pragma GCC unroll 8
      for (int j = 0; j < B; ++j) {
        __m512 g = _mm512_loadu_ps(dy + j * outPlane + v * 16);
        // Keeps g in a register: GCC would otherwise fold the load into each of the T FMAs.
        asm("" : "+v"(g));
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) acc[j][t] = _mm512_fmadd_ps(inputs[t], g, acc[j][t]);
      }
    }
#pragma GCC unroll 8
  for (int j = 0; j < B; ++j)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) _mm512_storeu_ps(sums + (j * stride + t) * 16, acc[j][t]);
}

using GradientKernel = void (*)(const float*, const float*, int64_t, int64_t, int64_t, float*,
                                int64_t, bool, const Extents&);

// kGradientKernels<kRowPairs>[B - 1][T - 1] handles B output channels and T taps.
template <bool kRowPairs>
struct GradientFor {
  template <int B, int T>
  struct Pick {
    static constexpr GradientKernel kernel = &gradientBlock<B, T, kRowPairs>;
  };
};
template <bool kRowPairs>
constexpr auto kGradientKernels =
    kernelTable<GradientFor<kRowPairs>::template Pick, kGradientChannels, kGradientTaps>();

// grad[i] = the sum of the 16 partial sums of weight i, for i in [begin, end).
__attribute__((target("avx512f"))) void sumPartials(const float* partials, float* grad,
                                                    int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) grad[i] = sumOfLanes(_mm512_loadu_ps(partials + i * 16));
}

// Σ dy over channel o's planes, images in order; planes are whole vectors.
__attribute__((target("avx512f"))) float channelSum(const float* dy, int64_t o, int64_t images,
                                                    int64_t outChannels, int64_t outPlane) {
  __m512 sum = _mm512_setzero_ps();
  for (int64_t n = 0; n < images; ++n) {
    const float* d = dy + (n * outChannels + o) * outPlane;
    for (int64_t i = 0; i < outPlane; i += 16) sum = _mm512_add_ps(sum, _mm512_loadu_ps(d + i));
  }
  return sumOfLanes(sum);
}

Extents extentsOf(const Tensor& x, const Shape& w, const Shape& y) {
  return {x.dim(1), x.dim(2), x.dim(3), y[2], y[3], w[2], w[3]};
}
#endif

bool plainWindow(const WindowGeometry& g) {
  return g.strideH == 1 && g.strideW == 1 && g.dilationH == 1 && g.dilationW == 1 &&
         g.padTop == 0 && g.padLeft == 0 && g.padBottom == 0 && g.padRight == 0;
}

}  // namespace

bool directConvolutionFits(const WindowGeometry& g, int64_t outH, int64_t outW) {
  const bool rows = (outW == 8 && outH % 2 == 0) || (outW > 0 && outW % 16 == 0);
  return plainWindow(g) && rows && outH > 0;
}

bool directConvolutionForwardFits(const WindowGeometry& g, int64_t outH, int64_t outW) {
  const bool rows = outW > 0 && outW % 8 == 0 && outH > 0 && outH * outW % 16 == 0;
  return plainWindow(g) && rows;
}

bool directConvolutionSupported(const WindowGeometry& g, int64_t outH, int64_t outW) {
  return cpuIsa() >= CpuIsa::Avx512 && directConvolutionFits(g, outH, outW);
}

bool directConvolutionForwardSupported(const WindowGeometry& g, int64_t outH, int64_t outW) {
  return cpuIsa() >= CpuIsa::Avx512 && directConvolutionForwardFits(g, outH, outW);
}

DirectForward::DirectForward(const Tensor& x, const Tensor& w, const Tensor& b, int64_t outH,
                             int64_t outW, const WindowGeometry& g)
    : x_(x),
      w_(w),
      b_(b),
      outH_(outH),
      outW_(outW),
      blocks_((w.dim(0) + kMaxChannels - 1) / kMaxChannels) {
  if (!directConvolutionForwardSupported(g, outH, outW))
    throw BackendError(
        "direct convolution forward: needs AVX-512, stride 1, no padding or dilation, and output "
        "rows a multiple of 8 wide with planes a multiple of 16");
}

int64_t DirectForward::items() const { return x_.dim(0) * blocks_; }
int64_t DirectForward::image(int64_t item) const { return item / blocks_; }
int64_t DirectForward::firstChannel(int64_t item) const { return item % blocks_ * kMaxChannels; }
int64_t DirectForward::channels(int64_t item) const {
  return std::min<int64_t>(kMaxChannels, w_.dim(0) - firstChannel(item));
}

void DirectForward::run(int64_t item, float* y) const {
#ifdef DL4CPP_X86_KERNELS
  const Extents e = extentsOf(x_, w_.shape(), Shape{x_.dim(0), w_.dim(0), outH_, outW_});
  const auto& kernels = e.outW % 16 == 0 ? kForwardKernels<false> : kForwardKernels<true>;
  const int64_t o = firstChannel(item), count = channels(item);
  const float* x = x_.data() + image(item) * e.channels * e.inPlane();
  const float* w = w_.data() + o * e.channels * e.taps();
  const float* bias = b_.empty() ? nullptr : b_.data() + o;
  for (int64_t v = 0; v < e.vectors(); v += kForwardVectors) {
    const int64_t vectors = std::min<int64_t>(kForwardVectors, e.vectors() - v);
    kernels[static_cast<size_t>(count - 1)][static_cast<size_t>(vectors - 1)](x, w, bias, y, v, e);
  }
#else
  (void)item, (void)y;
#endif
}

void directConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                              const WindowGeometry& g) {
  const DirectForward forward(x, w, b, y.dim(2), y.dim(3), g);
  const int64_t outPlane = y.dim(2) * y.dim(3), outChannels = w.dim(0);
  float* ys = y.data();
  // A batch of one still splits over the threads (by channel block).
  parallelFor(forward.items(), [&](int64_t item) {
    const int64_t plane = forward.image(item) * outChannels + forward.firstChannel(item);
    forward.run(item, ys + plane * outPlane);
  });
}

int64_t directConvolutionWeightGradientScratchFloats(const Shape& w) { return w.numel() * 16; }

void directConvolutionWeightGradient(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                     const WindowGeometry& g, float* scratch) {
  if (!directConvolutionSupported(g, dy.dim(2), dy.dim(3)))
    throw BackendError(
        "direct convolution weight gradient: needs AVX-512, stride 1, no padding or dilation, "
        "and output rows 8 wide (an even number of them) or a multiple of 16 wide");
#ifdef DL4CPP_X86_KERNELS
  const Extents e = extentsOf(x, dw.shape(), dy.shape());
  const auto& kernels = e.outW == 8 ? kGradientKernels<true> : kGradientKernels<false>;
  const int64_t images = x.dim(0), outChannels = dw.dim(0), taps = e.taps();
  const int64_t inImage = e.channels * e.inPlane(), outPlane = e.outPlane();
  const int64_t outImage = outChannels * outPlane, stride = e.channels * taps;
  const int64_t channelBlocks = (outChannels + kGradientChannels - 1) / kGradientChannels;
  const int64_t tapRuns = (e.kernelW + kGradientTaps - 1) / kGradientTaps;
  // A work item: one block of output channels, one input channel, one kernel row, one run of taps.
  const int64_t items = channelBlocks * e.channels * e.kernelH * tapRuns;
  const float* xs = x.data();
  const float* dys = dy.data();
  // Each thread owns a range of items and passes over it once per chunk of images; an item's
  // chunks are added in image order.
  parallelRanges(items, [&](int64_t begin, int64_t end) {
    for (int64_t firstImage = 0; firstImage < images; firstImage += kGradientImages) {
      const int64_t count = std::min(kGradientImages, images - firstImage);
      for (int64_t item = begin; item < end; ++item) {
        const int64_t run = item % tapRuns, kh = item / tapRuns % e.kernelH;
        const int64_t c = item / (tapRuns * e.kernelH) % e.channels;
        const int64_t o = item / (tapRuns * e.kernelH * e.channels) * kGradientChannels;
        const int64_t kw = run * kGradientTaps;
        const int64_t channels = std::min<int64_t>(kGradientChannels, outChannels - o);
        const int64_t width = std::min<int64_t>(kGradientTaps, e.kernelW - kw);
        const int64_t tap = c * taps + kh * e.kernelW + kw;
        kernels[static_cast<size_t>(channels - 1)][static_cast<size_t>(width - 1)](
            xs + firstImage * inImage + c * e.inPlane() + kh * e.inW + kw,
            dys + firstImage * outImage + o * outPlane, count, inImage, outImage,
            scratch + (o * stride + tap) * 16, stride, firstImage == 0, e);
      }
    }
  });
  float* grad = dw.data();
  parallelRanges(dw.numel(),
                 [&](int64_t begin, int64_t end) { sumPartials(scratch, grad, begin, end); });
  if (db.empty()) return;
  float* bias = db.data();
  parallelFor(outChannels,
              [&](int64_t o) { bias[o] = channelSum(dys, o, images, outChannels, outPlane); });
#else
  (void)x, (void)dw, (void)db, (void)scratch;
#endif
}

}  // namespace dl4cpp::cpu
