// Highway compiles this file once per x86 level (HighwayTargets.h): the kernels below are written
// once, for vectors of kLanes floats (16 at avx512, 8 at avx2), with register blocks sized to each
// level's register file.
#include "nn/backend/cpu/HighwayTargets.h"

#ifdef DL4CPP_X86_KERNELS
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nn/backend/cpu/direct/DirectConvolution.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#endif

#include <algorithm>

#include "nn/backend/cpu/AlignedRows.h"
#include "nn/backend/cpu/KernelTable.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/direct/DirectConvolution.h"
#include "nn/core/Error.h"

#ifdef DL4CPP_X86_KERNELS
HWY_BEFORE_NAMESPACE();
namespace dl4cpp::cpu::HWY_NAMESPACE {
#if DL4CPP_HWY_KERNEL_TARGET
namespace {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;
constexpr int64_t kLanes = HWY_LANES(float);

// Register blocks. Forward: B output channels x V output vectors of sums, V input vectors and a
// broadcast weight; weight gradient: B output channels x T adjacent taps of sums, T input vectors
// and one dy vector. AVX-512 has 32 registers, AVX2 16.
#if HWY_TARGET == HWY_AVX3
constexpr int kForwardChannels = 5, kForwardVectors = 4;  // 20 + 4 + 1
constexpr int kGradientChannels = 5, kGradientTaps = 5;   // 25 + 5 + 1
#else
constexpr int kForwardChannels = 4, kForwardVectors = 3;  // 12 + 3 + 1
constexpr int kGradientChannels = 2, kGradientTaps = 5;   // 10 + 5 + 1
#endif
static_assert(kForwardChannels <= DirectForward::kMaxChannels);
static_assert(kLanes <= kDirectConvolutionMaxLanes);
// Images per pass over the weight-gradient blocks: their x and one block's dy stay in cache while
// every block of taps is accumulated (LeNet's second convolution: 16 images' dy for 5 channels is
// 20 KiB).
constexpr int64_t kGradientImages = 16;

struct Extents {
  int64_t channels, inH, inW, outH, outW, kernelH, kernelW;
  int64_t inPlane() const { return inH * inW; }
  int64_t outPlane() const { return outH * outW; }
  int64_t vectors() const { return outPlane() / kLanes; }
  int64_t taps() const { return kernelH * kernelW; }
  // A vector's outputs lie in one row (runs of kLanes along rows a multiple of kLanes wide), or,
  // at 16 lanes, in two halves of 8 wherever their rows put them (rows 8, 24, ... wide).
  bool halves() const { return outW % kLanes != 0; }
};

Extents extentsOf(const Shape& x, const Shape& w, int64_t outH, int64_t outW) {
  return {x[1], x[2], x[3], outH, outW, w[2], w[3]};
}

// kLanes inputs from `low`, or (kHalves) 8 from `low` in the lower lanes and 8 from `high`.
template <bool kHalves>
HWY_INLINE V loadInputs(const float* low, const float* high) {
  const D d;
  if constexpr (kHalves) {
    const hn::Half<D> half;
    return hn::Combine(d, hn::LoadU(half, high), hn::LoadU(half, low));
  } else {
    (void)high;
    return hn::LoadU(d, low);
  }
}

// --- Forward
// ---------------------------------------------------------------------------------------

// Where in an input plane consecutive output vectors' first taps start, from vector
// `firstVector` on, with no division per vector: each vector is one run of kLanes outputs along a
// row, or (kHalves) two runs of 8.
template <bool kHalves>
class InputCursor {
 public:
  InputCursor(int64_t firstVector, const Extents& e) : inW_(e.inW), outW_(e.outW) {
    const int64_t first = firstVector * kLanes;  // the plane's first output of the vector
    rowStart_ = first / outW_ * inW_;
    column_ = first % outW_;
  }
  // The next run's offset; the cursor moves on to the run after it.
  int64_t next() {
    const int64_t offset = rowStart_ + column_;
    column_ += kRun;
    if (column_ == outW_) column_ = 0, rowStart_ += inW_;
    return offset;
  }

 private:
  static constexpr int64_t kRun = kHalves ? 8 : kLanes;
  int64_t inW_, outW_, rowStart_, column_;
};

// Outputs [firstVector, firstVector + groups · NV) of B output channels of one image, NV vectors
// at a time. `x` is the image, `w` the first channel's weights, `bias` its bias (or null), `y` its
// output plane.
template <int B, int NV, bool kHalves>
void forwardBlock(const float* x, const float* w, const float* bias, float* y, int64_t firstVector,
                  int64_t groups, const Extents& e) {
  const D d;
  const int64_t inW = e.inW, inPlane = e.inPlane(), kernelW = e.kernelW;
  const int64_t weightStride = e.channels * e.taps(), outPlane = e.outPlane();
  InputCursor<kHalves> cursor(firstVector, e);
  for (int64_t group = 0; group < groups; ++group) {
    int64_t low[NV], high[NV];
    HWY_UNROLL(8)
    for (int v = 0; v < NV; ++v) {
      low[v] = cursor.next();
      high[v] = kHalves ? cursor.next() : 0;
    }
    V acc[B][NV];
    HWY_UNROLL(8)
    for (int j = 0; j < B; ++j) {
      const V start = bias ? hn::Set(d, bias[j]) : hn::Zero(d);
      HWY_UNROLL(8)
      for (int v = 0; v < NV; ++v) acc[j][v] = start;
    }
    for (int64_t c = 0; c < e.channels; ++c)
      for (int64_t kh = 0; kh < e.kernelH; ++kh) {
        const float* row = x + c * inPlane + kh * inW;
        const float* weights = w + (c * e.kernelH + kh) * kernelW;
        for (int64_t kw = 0; kw < kernelW; ++kw) {
          V in[NV];
          HWY_UNROLL(8)
          for (int v = 0; v < NV; ++v)
            in[v] = loadInputs<kHalves>(row + kw + low[v], row + kw + high[v]);
          HWY_UNROLL(8)
          for (int j = 0; j < B; ++j) {
            const V weight = hn::Set(d, weights[j * weightStride + kw]);
            HWY_UNROLL(8)
            for (int v = 0; v < NV; ++v) acc[j][v] = hn::MulAdd(in[v], weight, acc[j][v]);
          }
        }
      }
    float* out = y + (firstVector + group * NV) * kLanes;
    HWY_UNROLL(8)
    for (int j = 0; j < B; ++j) HWY_UNROLL(8)
    for (int v = 0; v < NV; ++v) hn::StoreU(acc[j][v], d, out + j * outPlane + v * kLanes);
  }
}

using ForwardKernel = void (*)(const float*, const float*, const float*, float*, int64_t, int64_t,
                               const Extents&);

// kForwardKernels<kHalves>[B - 1][NV - 1] handles B output channels and NV vectors.
template <bool kHalves>
struct ForwardFor {
  template <int B, int NV>
  struct Pick {
    static constexpr ForwardKernel kernel = &forwardBlock<B, NV, kHalves>;
  };
};
template <bool kHalves>
constexpr auto kForwardKernels =
    kernelTable<ForwardFor<kHalves>::template Pick, kForwardChannels, kForwardVectors>();

void forwardItem(const DirectForward::Item& item, float* y) {
  const Extents e = extentsOf(item.x->shape(), item.w->shape(), item.outH, item.outW);
  const float* x = item.x->data() + item.image * e.channels * e.inPlane();
  const float* w = item.w->data() + item.firstChannel * e.channels * e.taps();
  const float* bias = item.b->empty() ? nullptr : item.b->data() + item.firstChannel;
  const auto* kernels = &kForwardKernels<false>;
  if constexpr (kLanes == 16)
    if (e.halves()) kernels = &kForwardKernels<true>;
  const auto& channelKernels = (*kernels)[static_cast<size_t>(item.channels - 1)];
  const int64_t groups = e.vectors() / kForwardVectors, rest = e.vectors() % kForwardVectors;
  if (groups > 0) channelKernels[kForwardVectors - 1](x, w, bias, y, 0, groups, e);
  if (rest > 0)
    channelKernels[static_cast<size_t>(rest - 1)](x, w, bias, y, groups * kForwardVectors, 1, e);
}

// --- Weight gradient
// -------------------------------------------------------------------------------

// Adds to `sums` (B x T vectors: [j * stride + t] for channel j, tap t) the products of T adjacent
// taps' inputs with B output channels' dy over images [0, images). `x` is the first image's input
// at the first tap (channel plane + kh·W + kw), `dy` the first image's gradient plane of the first
// channel; images are `xImage` and `dyImage` floats apart. At 16 lanes, rows 8 wide pair up (a
// vector's upper 8 lanes one row further down).
template <int B, int T, bool kRowPairs>
void gradientBlock(const float* x, const float* dy, int64_t images, int64_t xImage, int64_t dyImage,
                   float* sums, int64_t stride, bool first, const Extents& e) {
  const D d;
  const int64_t inW = e.inW, outPlane = e.outPlane(), vectors = e.vectors();
  // Vector v's first input, advanced as v goes: a row pair further down (kRowPairs), or kLanes
  // along a row and on to the next row after `runs` (a division per vector would put a 64-bit
  // division in the innermost loop).
  const int64_t runs = kRowPairs ? 1 : e.outW / kLanes;
  const int64_t rowStep = kRowPairs ? 2 * inW : inW;
  V acc[B][T];
  HWY_UNROLL(8)
  for (int j = 0; j < B; ++j) HWY_UNROLL(8)
  for (int t = 0; t < T; ++t)
    acc[j][t] = first ? hn::Zero(d) : hn::LoadU(d, sums + (j * stride + t) * kLanes);
  for (int64_t n = 0; n < images; ++n, x += xImage, dy += dyImage) {
    const float* row = x;
    int64_t run = 0;
    for (int64_t v = 0; v < vectors; ++v) {
      const float* in = row + run * kLanes;
      if (++run == runs) run = 0, row += rowStep;
      V inputs[T];
      HWY_UNROLL(8)
      for (int t = 0; t < T; ++t) inputs[t] = loadInputs<kRowPairs>(in + t, in + t + inW);
      HWY_UNROLL(8)
      for (int j = 0; j < B; ++j) {
        V g = hn::LoadU(d, dy + j * outPlane + v * kLanes);
        // Keeps g in a register: GCC would otherwise fold the load into each of the T FMAs.
        asm("" : "+v"(g.raw));
        HWY_UNROLL(8)
        for (int t = 0; t < T; ++t) acc[j][t] = hn::MulAdd(inputs[t], g, acc[j][t]);
      }
    }
  }
  HWY_UNROLL(8)
  for (int j = 0; j < B; ++j) HWY_UNROLL(8)
  for (int t = 0; t < T; ++t) hn::StoreU(acc[j][t], d, sums + (j * stride + t) * kLanes);
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

// grad[i] = the sum of the kLanes partial sums of weight i, for i in [begin, end).
void sumPartials(const float* partials, float* grad, int64_t begin, int64_t end) {
  const D d;
  for (int64_t i = begin; i < end; ++i)
    grad[i] = hn::GetLane(hn::SumOfLanes(d, hn::LoadU(d, partials + i * kLanes)));
}

// Σ dy over channel o's planes, images in order; planes are whole vectors.
float channelSum(const float* dy, int64_t o, int64_t images, int64_t outChannels,
                 int64_t outPlane) {
  const D d;
  V sum = hn::Zero(d);
  for (int64_t n = 0; n < images; ++n) {
    const float* p = dy + (n * outChannels + o) * outPlane;
    for (int64_t i = 0; i < outPlane; i += kLanes) sum = hn::Add(sum, hn::LoadU(d, p + i));
  }
  return hn::GetLane(hn::SumOfLanes(d, sum));
}

// `alignedCopy`: read x from a copy on whole cache lines (readsAlignedCopy below).
void weightGradient(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db, float* scratch,
                    bool alignedCopy) {
  Extents e = extentsOf(x.shape(), dw.shape(), dy.dim(2), dy.dim(3));
  const float* xs = x.data();
  if (alignedCopy) {
    xs = copyToAlignedRows(xs, x.dim(0) * e.channels * e.inH, e.inW,
                           scratch + dw.numel() * kDirectConvolutionMaxLanes);
    e.inW = wholeCacheLines(e.inW);
  }
  const auto* kernels = &kGradientKernels<false>;
  if constexpr (kLanes == 16)
    if (e.halves()) kernels = &kGradientKernels<true>;
  const int64_t images = x.dim(0), outChannels = dw.dim(0), taps = e.taps();
  const int64_t inImage = e.channels * e.inPlane(), outPlane = e.outPlane();
  const int64_t outImage = outChannels * outPlane, stride = e.channels * taps;
  const int64_t channelBlocks = (outChannels + kGradientChannels - 1) / kGradientChannels;
  const int64_t tapRuns = (e.kernelW + kGradientTaps - 1) / kGradientTaps;
  // A work item: one block of output channels, one input channel, one kernel row, one run of taps.
  const int64_t items = channelBlocks * e.channels * e.kernelH * tapRuns;
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
        (*kernels)[static_cast<size_t>(channels - 1)][static_cast<size_t>(width - 1)](
            xs + firstImage * inImage + c * e.inPlane() + kh * e.inW + kw,
            dys + firstImage * outImage + o * outPlane, count, inImage, outImage,
            scratch + (o * stride + tap) * kLanes, stride, firstImage == 0, e);
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
}

}  // namespace
#endif  // DL4CPP_HWY_KERNEL_TARGET
}  // namespace dl4cpp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
#endif  // DL4CPP_X86_KERNELS

#if !defined(DL4CPP_X86_KERNELS) || HWY_ONCE
namespace dl4cpp::cpu {

namespace {

#ifdef DL4CPP_X86_KERNELS
int64_t forwardChannelsPerItem() {
  return cpuIsa() >= CpuIsa::Avx512 ? N_AVX3::kForwardChannels : N_AVX2::kForwardChannels;
}
#else
int64_t forwardChannelsPerItem() { return DirectForward::kMaxChannels; }
#endif

// The weight gradient reads x from a copy whose rows start on cache lines and are whole lines long
// (AlignedRows.h) at avx2 where each output row is one vector (LeNet's second convolution): there
// every vector loads five taps of one input row, and on 12-wide rows two loads in five would
// straddle two lines. Rows several vectors wide straddle as often either way, and the avx512
// kernel's loads are half rows; neither gains from the copy, so they read x in place.
bool readsAlignedCopy(const Shape& x, const Shape& w) {
  const int64_t outW = x[3] - w[3] + 1;  // stride 1, no padding or dilation
  return cpuIsa() == CpuIsa::Avx2 && outW == 8 && x[3] % kCacheLineFloats != 0;
}

}  // namespace

bool directConvolutionFits(const WindowGeometry& g, int64_t outH, int64_t outW) {
  const bool rows = (outW == 8 && outH % 2 == 0) || (outW > 0 && outW % 16 == 0);
  return g.plain() && rows && outH > 0;
}

bool directConvolutionForwardFits(const WindowGeometry& g, int64_t outH, int64_t outW) {
  const bool rows = outW > 0 && outW % 8 == 0 && outH > 0 && outH * outW % 16 == 0;
  return g.plain() && rows;
}

bool directConvolutionSupported(const WindowGeometry& g, int64_t outH, int64_t outW) {
  return cpuIsa() >= CpuIsa::Avx2 && directConvolutionFits(g, outH, outW);
}

bool directConvolutionForwardSupported(const WindowGeometry& g, int64_t outH, int64_t outW) {
  return cpuIsa() >= CpuIsa::Avx2 && directConvolutionForwardFits(g, outH, outW);
}

DirectForward::DirectForward(const Tensor& x, const Tensor& w, const Tensor& b, int64_t outH,
                             int64_t outW, const WindowGeometry& g)
    : x_(x), w_(w), b_(b), outH_(outH), outW_(outW), channelsPerItem_(forwardChannelsPerItem()) {
  if (!directConvolutionForwardSupported(g, outH, outW))
    throw BackendError(
        "direct convolution forward: needs AVX2 or AVX-512, stride 1, no padding or dilation, "
        "and output rows a multiple of 8 wide with planes a multiple of 16");
  blocks_ = (w.dim(0) + channelsPerItem_ - 1) / channelsPerItem_;
}

int64_t DirectForward::items() const { return x_.dim(0) * blocks_; }
int64_t DirectForward::image(int64_t item) const { return item / blocks_; }
int64_t DirectForward::firstChannel(int64_t item) const {
  return item % blocks_ * channelsPerItem_;
}
int64_t DirectForward::channels(int64_t item) const {
  return std::min<int64_t>(channelsPerItem_, w_.dim(0) - firstChannel(item));
}

void DirectForward::run(int64_t item, float* y) const {
#ifdef DL4CPP_X86_KERNELS
  const Item work{&x_, &w_, &b_, outH_, outW_, image(item), firstChannel(item), channels(item)};
  highwayKernel(&N_AVX3::forwardItem, &N_AVX2::forwardItem)(work, y);
#else
  (void)item, (void)y;
#endif
}

void directConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                              const WindowGeometry& g, const FusedActivation& f) {
  const DirectForward forward(x, w, b, y.dim(2), y.dim(3), g);
  const int64_t outPlane = y.dim(2) * y.dim(3), outChannels = w.dim(0);
  float* ys = y.data();
  // A batch of one still splits over the threads (by channel block).
  parallelFor(forward.items(), [&](int64_t item) {
    const int64_t plane = forward.image(item) * outChannels + forward.firstChannel(item);
    forward.run(item, ys + plane * outPlane);
    applyFusedActivation(f, ys + plane * outPlane, forward.channels(item) * outPlane);
  });
}

int64_t directConvolutionWeightGradientScratchFloats(const Shape& x, const Shape& w) {
  const int64_t partials = w.numel() * kDirectConvolutionMaxLanes;
  if (!readsAlignedCopy(x, w)) return partials;
  return partials + alignedRowsFloats(x[0] * x[1] * x[2], x[3]);
}

void directConvolutionWeightGradient(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                     const WindowGeometry& g, float* scratch) {
  if (!directConvolutionSupported(g, dy.dim(2), dy.dim(3)))
    throw BackendError(
        "direct convolution weight gradient: needs AVX2 or AVX-512, stride 1, no padding or "
        "dilation, and output rows 8 wide (an even number of them) or a multiple of 16 wide");
#ifdef DL4CPP_X86_KERNELS
  highwayKernel(&N_AVX3::weightGradient, &N_AVX2::weightGradient)(
      x, dy, dw, db, scratch, readsAlignedCopy(x.shape(), dw.shape()));
#else
  (void)x, (void)dw, (void)db, (void)scratch;
#endif
}

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
