#include "nn/backend/cpu/CpuBackend.h"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <string>
#include <string_view>

#include "nn/backend/cpu/Activations.h"
#include "nn/backend/cpu/ConvolutionActivationStep.h"
#include "nn/backend/cpu/ConvolutionPooling.h"
#include "nn/backend/cpu/ConvolutionPoolingStep.h"
#include "nn/backend/cpu/CpuBatchNorm.h"
#include "nn/backend/cpu/CpuIsa.h"
#include "nn/backend/cpu/DirectConvolution.h"
#include "nn/backend/cpu/DirectWeightGradient.h"
#include "nn/backend/cpu/Im2colConvolution.h"
#include "nn/backend/cpu/InnerProduct.h"
#include "nn/backend/cpu/MaxPooling.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/WinogradConvolution.h"

namespace dl4cpp::cpu {

namespace {

using dnnl::algorithm;
using dnnl::prop_kind;
using Dims = dnnl::memory::dims;
using Tag = dnnl::memory::format_tag;
constexpr auto kF32 = dnnl::memory::data_type::f32;

Dims dimsOf(const Shape& s) { return Dims(s.begin(), s.end()); }

// Plain row-major layout of any rank up to 4.
dnnl::memory::desc plainDesc(const Shape& s) {
  static constexpr Tag kTags[] = {Tag::undef, Tag::a, Tag::ab, Tag::abc, Tag::abcd};
  return {dimsOf(s), kF32, kTags[s.rank()]};
}
dnnl::memory::desc flatDesc(int64_t numel) { return {Dims{numel}, kF32, Tag::a}; }
// Lets a primitive choose its layout (convolution weights, and the activations of convolutions
// with few input channels, for which oneDNN picks its blocked layout and direct JIT kernels);
// makeEntry adds the reorders at its boundary.
dnnl::memory::desc anyDesc(const Shape& s) { return {dimsOf(s), kF32, Tag::any}; }

// Forward and backward weights of convolutions at stride 1 without padding whose output rows are
// 8 or a multiple of 16 wide run on direct kernels on NCHW (DirectConvolution.h), faster than
// oneDNN's channels-last kernels with their reorders, unless dl4cpp's Winograd kernels take them
// (below). Otherwise:
//
// How a convolution runs, by its input channel count (weights [O, C, kH, kW]). With many input
// channels oneDNN's channels-last (NHWC) kernels vectorise over channels and beat its blocked
// (nChw16c) ones, which pad C to a multiple of 16 (LeNet's 20 input channels to 32); the reorders
// from NCHW cost the same either way. With few input channels the blocked kernels vectorise over
// space and win, but the forward pass goes to im2col + sgemm instead
// (Im2colConvolution.h), which saves the reorder of the blocked kernel's padded output, and
// backward weights at stride 1 without padding to a direct kernel (DirectWeightGradient.h), which
// saves the reorder of dy into that layout. Backward data is sgemm + col2im (below) and uses
// oneDNN only for large images. Input and output channel counts that are both multiples of 16
// (fillsChannelBlocks) go to the blocked kernels instead (no channel is padded), in every pass
// the Winograd kernels do not run.
constexpr int64_t kChannelsLastMinInputChannels = 8;
bool hasFewInputChannels(const Shape& weights) {
  return weights[1] < kChannelsLastMinInputChannels;
}
// Convolutions whose input and output channel counts are multiples of 16 (VGG-style 32 and 64)
// fill oneDNN's 16-channel blocks without padding, and its blocked kernels beat the channels-last
// ones on them, in every pass dl4cpp's own kernels do not run (`bench_lenet_breakdown --network
// vgg` times each pass).
bool fillsChannelBlocks(const Shape& weights) {
  return weights[0] % 16 == 0 && weights[1] % 16 == 0;
}
// 3x3 convolutions at stride 1 with 8 or more input channels run forward and backward data on
// dl4cpp's Winograd F(4x4, 3x3) kernels (WinogradConvolution.h) at avx2 and avx512: faster than
// oneDNN's direct kernels, and at avx512 than oneDNN's own F(4x4, 3x3) Winograd kernels on VGG's
// 32- and 64-channel layers.
bool runsOwnWinograd(const Shape& weights, const WindowGeometry& g) {
  return g.kernelH == 3 && !hasFewInputChannels(weights) && winogradConvolutionSupported(g);
}
// Their weight gradient too, except at avx512 on channels that fill oneDNN's blocks: there
// oneDNN's direct blocked kernel is faster than dl4cpp's Winograd one.
bool runsOwnWinogradWeightGradient(const Shape& weights, const WindowGeometry& g) {
  return runsOwnWinograd(weights, g) &&
         !(cpuIsa() >= CpuIsa::Avx512 && fillsChannelBlocks(weights));
}
// 5x5 convolutions with 8 or more input channels (LeNet's second) run every pass on dl4cpp's
// Winograd F(4x4, 5x5) kernels at avx2 and avx512, where they beat the direct kernels and, backward
// data, sgemm + col2im: with images in the lanes, every transform runs on whole vectors even on
// LeNet's small images.
bool runsOwnWinograd5x5(const Shape& weights, const WindowGeometry& g) {
  return g.kernelH == 5 && !hasFewInputChannels(weights) && winogradConvolutionSupported(g);
}
// The weight gradient CpuBackend::convolutionBackwardWeights runs as im2col + sgemm. Below AVX-512
// oneDNN's kernels run a first layer's weight gradient several times slower than that; at AVX-512
// they are the faster choice for the shapes the direct kernel does not take.
bool runsIm2colWeightGradient(const Shape& weights, const WindowGeometry& g, const Tensor& dy) {
  return !runsOwnWinogradWeightGradient(weights, g) && !runsOwnWinograd5x5(weights, g) &&
         !directConvolutionSupported(g, dy.dim(2), dy.dim(3)) && hasFewInputChannels(weights) &&
         !directWeightGradientSupported(g) && cpuIsa() < CpuIsa::Avx512;
}
// Which kernel runs a convolution's forward pass (y of outH x outW): one choice for the pass alone
// and for the fused kernels that must compute its bits (ConvolutionPooling.h).
enum class ForwardKernel { WINOGRAD, DIRECT, IM2COL, ONEDNN };
ForwardKernel forwardKernel(const Shape& weights, const WindowGeometry& g, int64_t outH,
                            int64_t outW) {
  const bool direct = directConvolutionForwardSupported(g, outH, outW);
  if (runsOwnWinograd5x5(weights, g) || (!direct && runsOwnWinograd(weights, g)))
    return ForwardKernel::WINOGRAD;
  if (direct) return ForwardKernel::DIRECT;
  if (hasFewInputChannels(weights)) return ForwardKernel::IM2COL;
  return ForwardKernel::ONEDNN;
}
dnnl::memory::desc convActivationDesc(const Shape& s, const Shape& weights) {
  if (hasFewInputChannels(weights) || fillsChannelBlocks(weights)) return anyDesc(s);
  return {dimsOf(s), kF32, Tag::nhwc};
}

// Largest column matrix of one image (C·kH·kW × outH·outW floats, 4 MiB) for which backward data
// runs as sgemm + col2im (faster than oneDNN's kernel on LeNet's second convolution, which needs
// 32 Ki floats); beyond it the per-thread matrices stop fitting in cache and oneDNN's direct
// kernel, which needs none, is kept. The bound is a judgement, not a measured crossover.
constexpr int64_t kCol2imMaxColumnFloats = int64_t{1} << 20;

PrimitiveKey& addShape(PrimitiveKey& k, const Shape& s) {
  k.add(s.rank());
  for (int64_t d : s) k.add(d);
  return k;
}
PrimitiveKey& addGeometry(PrimitiveKey& k, const WindowGeometry& g) {
  return k.add(g.kernelH)
      .add(g.kernelW)
      .add(g.strideH)
      .add(g.strideW)
      .add(g.padTop)
      .add(g.padLeft)
      .add(g.padBottom)
      .add(g.padRight)
      .add(g.dilationH)
      .add(g.dilationW);
}
Dims strides(const WindowGeometry& g) { return {g.strideH, g.strideW}; }
Dims kernel(const WindowGeometry& g) { return {g.kernelH, g.kernelW}; }
Dims padBefore(const WindowGeometry& g) { return {g.padTop, g.padLeft}; }
Dims padAfter(const WindowGeometry& g) { return {g.padBottom, g.padRight}; }
Dims dilation(const WindowGeometry& g) { return {g.dilationH - 1, g.dilationW - 1}; }  // 0-based

bool isOutput(int id) {
  return id == DNNL_ARG_DST || id == DNNL_ARG_DIFF_SRC || id == DNNL_ARG_DIFF_WEIGHTS ||
         id == DNNL_ARG_DIFF_BIAS;
}

// Builds a cache entry, turning oneDNN's exceptions into DnnlError naming the op. `args` gives each
// argument's plain (caller) layout; where the primitive wants another one, the entry gets an
// internal buffer in that layout and a reorder to or from the caller's.
template <typename PrimitiveDesc, typename Primitive, typename Describe>
CachedPrimitive makeEntry(const char* op, Describe&& describe, const dnnl::engine& engine,
                          const std::vector<std::pair<int, dnnl::memory::desc>>& args) {
  try {
    PrimitiveDesc pd = describe();
    CachedPrimitive e;
    e.primitive = Primitive(pd);
    for (const auto& [id, plain] : args) {
      CachedArg a;
      a.id = id;
      a.output = isOutput(id);
      a.user = dnnl::memory(plain, engine, static_cast<void*>(nullptr));
      const dnnl::memory::desc wanted = pd.query_md(dnnl::query::exec_arg_md, id);
      if (id != DNNL_ARG_WORKSPACE && wanted != plain) {
        a.internal = dnnl::memory(wanted, engine, static_cast<void*>(nullptr));
        a.scratchOffset = e.scratchBytes;
        e.scratchBytes += (wanted.get_size() + 63) / 64 * 64;
        a.reorder =
            a.output ? dnnl::reorder(dnnl::reorder::primitive_desc(engine, wanted, engine, plain))
                     : dnnl::reorder(dnnl::reorder::primitive_desc(engine, plain, engine, wanted));
      }
      e.args.push_back(std::move(a));
    }
    e.workspaceBytes = pd.workspace_desc().get_size();
    return e;
  } catch (const dnnl::error& err) {
    throw DnnlError(std::string("oneDNN could not create ") + op + ": " + err.what());
  }
}

dnnl::algorithm poolingAlgorithm(PoolingKind kind) {
  return kind == PoolingKind::MAX ? algorithm::pooling_max : algorithm::pooling_avg_exclude_padding;
}

// The activations left on oneDNN (those with transcendentals) as its eltwise algorithms. Backward
// reads their output where the *_use_dst_for_bwd form exists, else (activationBackwardNeedsInput)
// their input. SELU is oneDNN's ELU with SELU's alpha, scaled by lambda afterwards.
struct Eltwise {
  dnnl::algorithm algorithm = dnnl::algorithm::undef;
  float alpha = 0.0f;
};
Eltwise eltwiseAlgorithm(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::TANH:
      return {algorithm::eltwise_tanh_use_dst_for_bwd};
    case ActivationKind::SIGMOID:
      return {algorithm::eltwise_logistic_use_dst_for_bwd};
    case ActivationKind::ELU:
      return {algorithm::eltwise_elu_use_dst_for_bwd, 1.0f};
    case ActivationKind::SELU:
      return {algorithm::eltwise_elu, static_cast<float>(kSeluAlpha)};
    case ActivationKind::GELU:
      return {algorithm::eltwise_swish, 1.702f};  // x sigma(1.702 x) is swish with alpha 1.702
    case ActivationKind::GELU_PRECISE:
      return {algorithm::eltwise_gelu_tanh};
    case ActivationKind::SWISH:
      return {algorithm::eltwise_swish, 1.0f};
    case ActivationKind::SOFTPLUS:
      return {algorithm::eltwise_soft_relu};
    default:
      throw BackendError("eltwiseAlgorithm: not a oneDNN eltwise activation");
  }
}

}  // namespace

namespace {

// The ISA level is chosen before oneDNN's first use, so that DL4CPP_MAX_CPU_ISA can still cap it.
dnnl::engine cpuEngine() {
  cpuIsa();
  return dnnl::engine(dnnl::engine::kind::cpu, 0);
}

}  // namespace

// The thread that makes a backend may call its kernels without binding first (a layer's forward on
// a DeviceContext of its own): it is kept within OMP_THREAD_LIMIT from the start.
CpuBackend::CpuBackend() : engine_(cpuEngine()), stream_(engine_) { bindToCurrentThread(0); }

void CpuBackend::bindToCurrentThread(int numThreads) { cpu::setThreadsWithinLimit(numThreads); }

float* CpuBackend::scratch(int64_t floats) {
  if (scratch_.numel() < floats) scratch_ = Tensor(Shape{floats});
  return scratch_.data();
}

void CpuBackend::execute(CachedPrimitive& e, std::initializer_list<const void*> pointers) {
  // The C API with stack arrays: the C++ execute() takes an unordered_map, which allocates.
  auto run = [this](const dnnl::primitive& p, int n, const dnnl_exec_arg_t* args) {
    const dnnl_status_t status = dnnl_primitive_execute(p.get(), stream_.get(), n, args);
    if (status != dnnl_success)
      throw DnnlError("dnnl_primitive_execute failed with status " + std::to_string(status));
  };
  char* arena = reinterpret_cast<char*>(
      scratch(static_cast<int64_t>((e.scratchBytes + sizeof(float) - 1) / sizeof(float))));
  std::array<dnnl_exec_arg_t, 8> args{};
  size_t n = 0;
  for (const void* p : pointers) {
    CachedArg& a = e.args[n];
    a.user.set_data_handle(const_cast<void*>(p));
    if (a.internal) a.internal.set_data_handle(arena + a.scratchOffset);
    if (a.reorder && !a.output) {
      const dnnl_exec_arg_t reorderArgs[] = {{DNNL_ARG_FROM, a.user.get()},
                                             {DNNL_ARG_TO, a.internal.get()}};
      run(a.reorder, 2, reorderArgs);
    }
    args[n] = {a.id, a.internal ? a.internal.get() : a.user.get()};
    ++n;
  }
  run(e.primitive, static_cast<int>(n), args.data());
  for (CachedArg& a : e.args) {
    if (!a.reorder || !a.output) continue;
    const dnnl_exec_arg_t reorderArgs[] = {{DNNL_ARG_FROM, a.internal.get()},
                                           {DNNL_ARG_TO, a.user.get()}};
    run(a.reorder, 2, reorderArgs);
  }
  stream_.wait();
}

// --- Convolution
// -----------------------------------------------------------------------------------

bool CpuBackend::ownConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                       const FusedActivation& f, Tensor& y,
                                       const WindowGeometry& g) {
  const int threads = omp_get_max_threads();
  switch (forwardKernel(w.shape(), g, y.dim(2), y.dim(3))) {
    case ForwardKernel::WINOGRAD:
      winogradConvolutionForward(
          x, w, b, y, g, scratch(winogradForwardScratchFloats(x.shape(), w.shape(), g, threads)),
          f);
      return true;
    case ForwardKernel::DIRECT:
      directConvolutionForward(x, w, b, y, g, f);
      return true;
    case ForwardKernel::IM2COL:
      im2colConvolutionForward(x, w, b, y, g,
                               scratch(im2colScratchFloats(x.shape(), w.shape(), g, threads)), f);
      return true;
    case ForwardKernel::ONEDNN:
      break;
  }
  return false;
}

void CpuBackend::convolutionActivationForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                              const FusedActivation& f, Tensor& y,
                                              const WindowGeometry& g) {
  checkFusedActivation(f, "convolutionActivationForward");
  if (ownConvolutionForward(x, w, b, f, y, g)) return;
  convolutionForward(x, w, b, y, g);
  activationForward(f.kind, f.alpha, y, y);
}

void CpuBackend::convolutionActivationBackwardWeights(const Tensor& x, const Tensor& y,
                                                      const Tensor& dy, const FusedActivation& f,
                                                      Tensor& dz, Tensor& dw, Tensor& db,
                                                      const WindowGeometry& g) {
  checkFusedActivation(f, "convolutionActivationBackwardWeights");
  if (runsIm2colWeightGradient(dw.shape(), g, dy)) {
    const int64_t floats = im2colActivationWeightGradientScratchFloats(x.shape(), dw.shape(), g,
                                                                       omp_get_max_threads());
    im2colConvolutionActivationBackwardWeights(x, y, dy, f, dw, db, g, scratch(floats));
    return;
  }
  activationBackward(f.kind, f.alpha, Tensor(), y, dy, dz);
  convolutionBackwardWeights(x, dz, dw, db, g);
}

void CpuBackend::convolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                                    const WindowGeometry& g) {
  if (ownConvolutionForward(x, w, b, {}, y, g)) return;
  const bool bias = !b.empty();
  PrimitiveKey key;
  key.add(static_cast<int64_t>(OpId::ConvForward)).add(bias);
  addGeometry(addShape(addShape(key, x.shape()), w.shape()), g);
  CachedPrimitive& e = cache_.get(key, [&] {
    const auto src = plainDesc(x.shape()), wei = plainDesc(w.shape()), dst = plainDesc(y.shape());
    std::vector<std::pair<int, dnnl::memory::desc>> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
    if (bias) args.emplace_back(DNNL_ARG_BIAS, plainDesc(b.shape()));
    return makeEntry<dnnl::convolution_forward::primitive_desc, dnnl::convolution_forward>(
        "convolution forward",
        [&] {
          // The layouts the kernel runs in; makeEntry reorders from the plain ones above.
          const auto kernelSrc = convActivationDesc(x.shape(), w.shape());
          const auto kernelWei = anyDesc(w.shape());
          const auto kernelDst = convActivationDesc(y.shape(), w.shape());
          constexpr auto kTraining = prop_kind::forward_training;
          constexpr auto kDirect = algorithm::convolution_direct;
          auto desc = bias ? dnnl::convolution_forward::desc(
                                 kTraining, kDirect, kernelSrc, kernelWei, plainDesc(b.shape()),
                                 kernelDst, strides(g), dilation(g), padBefore(g), padAfter(g))
                           : dnnl::convolution_forward::desc(
                                 kTraining, kDirect, kernelSrc, kernelWei, kernelDst, strides(g),
                                 dilation(g), padBefore(g), padAfter(g));
          return dnnl::convolution_forward::primitive_desc(desc, engine_);
        },
        engine_, args);
  });
  if (bias)
    execute(e, {x.data(), w.data(), y.data(), b.data()});
  else
    execute(e, {x.data(), w.data(), y.data()});
}

namespace {
dnnl::convolution_forward::primitive_desc convForwardHint(const dnnl::engine& engine,
                                                          const Shape& x, const Shape& w,
                                                          const Shape& y, const WindowGeometry& g) {
  auto desc = dnnl::convolution_forward::desc(
      prop_kind::forward_training, algorithm::convolution_direct, convActivationDesc(x, w),
      anyDesc(w), plainDesc(Shape{w[0]}), convActivationDesc(y, w), strides(g), dilation(g),
      padBefore(g), padAfter(g));
  return {desc, engine};
}
}  // namespace

void CpuBackend::convolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                         const WindowGeometry& g) {
  if (runsOwnWinograd(w.shape(), g) || runsOwnWinograd5x5(w.shape(), g)) {
    const int64_t floats =
        winogradBackwardDataScratchFloats(dx.shape(), w.shape(), g, omp_get_max_threads());
    winogradConvolutionBackwardData(dy, w, dx, g, scratch(floats));
    return;
  }
  // Else sgemm + col2im (Im2colConvolution.h) unless one image's column matrix is large, where
  // oneDNN's direct kernel, which needs none, is the safer choice, or the channels fill oneDNN's
  // blocks, where its blocked kernel is faster.
  if (col2imScratchFloats(dx.shape(), w.shape(), g, 1) <= kCol2imMaxColumnFloats &&
      !fillsChannelBlocks(w.shape())) {
    const int64_t floats = col2imScratchFloats(dx.shape(), w.shape(), g, omp_get_max_threads());
    im2colConvolutionBackwardData(dy, w, dx, g, scratch(floats));
    return;
  }
  PrimitiveKey key;
  key.add(static_cast<int64_t>(OpId::ConvBackwardData));
  addGeometry(addShape(addShape(key, dx.shape()), w.shape()), g);
  CachedPrimitive& e = cache_.get(key, [&] {
    const auto diffSrc = plainDesc(dx.shape()), wei = plainDesc(w.shape()),
               diffDst = plainDesc(dy.shape());
    return makeEntry<dnnl::convolution_backward_data::primitive_desc,
                     dnnl::convolution_backward_data>(
        "convolution backward-data",
        [&] {
          auto hint = convForwardHint(engine_, dx.shape(), w.shape(), dy.shape(), g);
          auto desc = dnnl::convolution_backward_data::desc(
              algorithm::convolution_direct, convActivationDesc(dx.shape(), w.shape()),
              anyDesc(w.shape()), convActivationDesc(dy.shape(), w.shape()), strides(g),
              dilation(g), padBefore(g), padAfter(g));
          return dnnl::convolution_backward_data::primitive_desc(desc, engine_, hint);
        },
        engine_,
        {{DNNL_ARG_DIFF_DST, diffDst}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DIFF_SRC, diffSrc}});
  });
  execute(e, {dy.data(), w.data(), dx.data()});
}

void CpuBackend::convolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                            Tensor& db, const WindowGeometry& g) {
  if (runsOwnWinogradWeightGradient(dw.shape(), g) || runsOwnWinograd5x5(dw.shape(), g)) {
    const int64_t floats =
        winogradBackwardWeightsScratchFloats(x.shape(), dw.shape(), g, omp_get_max_threads());
    winogradConvolutionBackwardWeights(x, dy, dw, db, g, scratch(floats));
    return;
  }
  if (directConvolutionSupported(g, dy.dim(2), dy.dim(3))) {
    const int64_t floats = directConvolutionWeightGradientScratchFloats(x.shape(), dw.shape());
    directConvolutionWeightGradient(x, dy, dw, db, g, scratch(floats));
    return;
  }
  if (hasFewInputChannels(dw.shape()) && directWeightGradientSupported(g)) {
    const int64_t floats = directWeightGradientScratchFloats(x.shape(), dw.shape());
    directWeightGradient(x, dy, dw, db, g, scratch(floats));
    return;
  }
  if (runsIm2colWeightGradient(dw.shape(), g, dy)) {
    const int64_t floats =
        im2colWeightGradientScratchFloats(x.shape(), dw.shape(), g, omp_get_max_threads());
    im2colConvolutionBackwardWeights(x, dy, dw, db, g, scratch(floats));
    return;
  }
  const bool bias = !db.empty();
  PrimitiveKey key;
  key.add(static_cast<int64_t>(OpId::ConvBackwardWeights)).add(bias);
  addGeometry(addShape(addShape(key, x.shape()), dw.shape()), g);
  CachedPrimitive& e = cache_.get(key, [&] {
    const auto src = plainDesc(x.shape()), diffWei = plainDesc(dw.shape()),
               diffDst = plainDesc(dy.shape());
    std::vector<std::pair<int, dnnl::memory::desc>> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, diffDst}, {DNNL_ARG_DIFF_WEIGHTS, diffWei}};
    if (bias) args.emplace_back(DNNL_ARG_DIFF_BIAS, plainDesc(db.shape()));
    return makeEntry<dnnl::convolution_backward_weights::primitive_desc,
                     dnnl::convolution_backward_weights>(
        "convolution backward-weights",
        [&] {
          auto hint = convForwardHint(engine_, x.shape(), dw.shape(), dy.shape(), g);
          // The layouts the kernel runs in; makeEntry reorders from the plain ones above.
          const auto kernelSrc = convActivationDesc(x.shape(), dw.shape());
          const auto kernelDiffWei = anyDesc(dw.shape());
          const auto kernelDiffDst = convActivationDesc(dy.shape(), dw.shape());
          auto desc = bias ? dnnl::convolution_backward_weights::desc(
                                 algorithm::convolution_direct, kernelSrc, kernelDiffWei,
                                 plainDesc(db.shape()), kernelDiffDst, strides(g), dilation(g),
                                 padBefore(g), padAfter(g))
                           : dnnl::convolution_backward_weights::desc(
                                 algorithm::convolution_direct, kernelSrc, kernelDiffWei,
                                 kernelDiffDst, strides(g), dilation(g), padBefore(g), padAfter(g));
          return dnnl::convolution_backward_weights::primitive_desc(desc, engine_, hint);
        },
        engine_, args);
  });
  if (bias)
    execute(e, {x.data(), dy.data(), dw.data(), db.data()});
  else
    execute(e, {x.data(), dy.data(), dw.data()});
}

// --- Pooling
// ---------------------------------------------------------------------------------------

namespace {
dnnl::pooling_forward::primitive_desc poolForwardDesc(const dnnl::engine& engine, PoolingKind kind,
                                                      const Shape& x, const Shape& y,
                                                      const WindowGeometry& g, bool training) {
  auto desc = dnnl::pooling_forward::desc(
      training ? prop_kind::forward_training : prop_kind::forward_inference, poolingAlgorithm(kind),
      plainDesc(x), plainDesc(y), strides(g), kernel(g), padBefore(g), padAfter(g));
  return {desc, engine};
}
}  // namespace

void CpuBackend::poolingForward(PoolingKind kind, const Tensor& x, Tensor& y,
                                const WindowGeometry& g, bool training, Tensor& workspace) {
  if (kind == PoolingKind::MAX && directMaxPoolingApplies(g)) {
    uint8_t* argmax = nullptr;
    if (training) {
      const int64_t floats = maxPoolingWorkspaceFloats(y.shape());
      if (workspace.numel() < floats) workspace = Tensor(Shape{floats});
      argmax = reinterpret_cast<uint8_t*>(workspace.data());
    }
    maxPoolingForward(x, y, g, argmax);
    return;
  }
  PrimitiveKey key;
  key.add(static_cast<int64_t>(OpId::PoolForward)).add(static_cast<int64_t>(kind)).add(training);
  addGeometry(addShape(key, x.shape()), g);
  CachedPrimitive& e = cache_.get(key, [&] {
    auto pd = poolForwardDesc(engine_, kind, x.shape(), y.shape(), g, training);
    std::vector<std::pair<int, dnnl::memory::desc>> args{{DNNL_ARG_SRC, plainDesc(x.shape())},
                                                         {DNNL_ARG_DST, plainDesc(y.shape())}};
    if (pd.workspace_desc().get_size() > 0)
      args.emplace_back(DNNL_ARG_WORKSPACE, pd.workspace_desc());
    return makeEntry<dnnl::pooling_forward::primitive_desc, dnnl::pooling_forward>(
        "pooling forward", [&] { return pd; }, engine_, args);
  });
  if (e.workspaceBytes == 0) {
    execute(e, {x.data(), y.data()});
    return;
  }
  const int64_t floats =
      static_cast<int64_t>((e.workspaceBytes + sizeof(float) - 1) / sizeof(float));
  if (workspace.numel() < floats) workspace = Tensor(Shape{floats});
  execute(e, {x.data(), y.data(), workspace.data()});
}

void CpuBackend::poolingBackward(PoolingKind kind, const Tensor& dy, Tensor& dx,
                                 const WindowGeometry& g, const Tensor& workspace) {
  if (kind == PoolingKind::MAX && directMaxPoolingApplies(g)) {
    if (workspace.numel() < maxPoolingWorkspaceFloats(dy.shape()))
      throw BackendError(
          "poolingBackward: MAX pooling needs the workspace of a training-mode "
          "poolingForward with the same shapes; run forward(training=true) first");
    maxPoolingBackward(dy, dx, g, reinterpret_cast<const uint8_t*>(workspace.data()));
    return;
  }
  PrimitiveKey key;
  key.add(static_cast<int64_t>(OpId::PoolBackward)).add(static_cast<int64_t>(kind));
  addGeometry(addShape(key, dx.shape()), g);
  CachedPrimitive& e = cache_.get(key, [&] {
    auto hint = poolForwardDesc(engine_, kind, dx.shape(), dy.shape(), g, true);
    std::vector<std::pair<int, dnnl::memory::desc>> args{
        {DNNL_ARG_DIFF_DST, plainDesc(dy.shape())}, {DNNL_ARG_DIFF_SRC, plainDesc(dx.shape())}};
    if (hint.workspace_desc().get_size() > 0)
      args.emplace_back(DNNL_ARG_WORKSPACE, hint.workspace_desc());
    return makeEntry<dnnl::pooling_backward::primitive_desc, dnnl::pooling_backward>(
        "pooling backward",
        [&] {
          auto desc = dnnl::pooling_backward::desc(poolingAlgorithm(kind), plainDesc(dx.shape()),
                                                   plainDesc(dy.shape()), strides(g), kernel(g),
                                                   padBefore(g), padAfter(g));
          return dnnl::pooling_backward::primitive_desc(desc, engine_, hint);
        },
        engine_, args);
  });
  if (e.workspaceBytes == 0) {
    execute(e, {dy.data(), dx.data()});
    return;
  }
  if (workspace.numel() * static_cast<int64_t>(sizeof(float)) <
      static_cast<int64_t>(e.workspaceBytes))
    throw BackendError(
        "poolingBackward: MAX pooling needs the workspace of a training-mode "
        "poolingForward with the same shapes; run forward(training=true) first");
  execute(e, {dy.data(), dx.data(), workspace.data()});
}

// --- A convolution feeding MAX pooling -----------------------------------------------------------
// Fused image by image (ConvolutionPooling.h, or WinogradConvolution.h forward) where the unfused
// ops would run the convolution on the direct kernels, as im2col + sgemm or as dl4cpp's Winograd
// kernels (forward) or on the direct weight-gradient kernel (backward) and the pooling on the
// direct loops, so that the results are the same bits; elsewhere the ops in turn.
// ConvolutionPoolingStep.h plans the pairs.

std::vector<std::unique_ptr<NetworkStep>> CpuBackend::planSteps(
    const std::vector<LayerDescription>& layers) {
  std::vector<std::unique_ptr<NetworkStep>> steps;
  for (size_t i = 0; i < layers.size(); ++i) {
    const int first = static_cast<int>(i);
    std::unique_ptr<NetworkStep> step = planConvolutionMaxPooling(*this, layers, first);
    if (!step) step = planConvolutionActivation(*this, layers, first);
    if (!step) continue;
    i += static_cast<size_t>(step->count() - 1);
    steps.push_back(std::move(step));
  }
  return steps;
}

void CpuBackend::convolutionMaxPoolingForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                              const FusedActivation& f, Tensor& convOutput,
                                              Tensor& pooled, const WindowGeometry& convG,
                                              const WindowGeometry& poolG, bool training,
                                              Tensor& workspace) {
  checkFusedActivation(f, "convolutionMaxPoolingForward");
  const ForwardKernel kernel =
      forwardKernel(w.shape(), convG, convOutput.dim(2), convOutput.dim(3));
  if (kernel == ForwardKernel::ONEDNN || !directMaxPoolingApplies(poolG)) {
    convolutionForward(x, w, b, convOutput, convG);
    activationForward(f.kind, f.alpha, convOutput, convOutput);
    poolingForward(PoolingKind::MAX, convOutput, pooled, poolG, training, workspace);
    return;
  }
  uint8_t* argmax = nullptr;
  if (training) {
    const int64_t floats = maxPoolingWorkspaceFloats(pooled.shape());
    if (workspace.numel() < floats) workspace = Tensor(Shape{floats});
    argmax = reinterpret_cast<uint8_t*>(workspace.data());
  }
  const int threads = omp_get_max_threads();
  if (kernel == ForwardKernel::WINOGRAD) {
    const int64_t floats =
        winogradConvolutionMaxPoolingForwardScratchFloats(x.shape(), w.shape(), convG, threads);
    winogradConvolutionMaxPoolingForward(x, w, b, pooled, f, convG, poolG, argmax, scratch(floats));
    return;
  }
  if (kernel == ForwardKernel::DIRECT) {
    const int64_t floats =
        directConvolutionMaxPoolingForwardScratchFloats(x.shape(), convG, threads);
    directConvolutionMaxPoolingForward(x, w, b, pooled, f, convG, poolG, argmax, scratch(floats));
    return;
  }
  const int64_t floats =
      convolutionMaxPoolingForwardScratchFloats(x.shape(), w.shape(), convG, threads);
  cpu::convolutionMaxPoolingForward(x, w, b, pooled, f, convG, poolG, argmax, scratch(floats));
}

void CpuBackend::convolutionMaxPoolingBackwardWeights(const Tensor& x, const Tensor& dPooled,
                                                      const Tensor& workspace,
                                                      Tensor& convOutputGrad, Tensor& dw,
                                                      Tensor& db, const WindowGeometry& convG,
                                                      const WindowGeometry& poolG) {
  const bool directGradient =
      !directConvolutionSupported(convG, convOutputGrad.dim(2), convOutputGrad.dim(3)) &&
      hasFewInputChannels(dw.shape()) && directWeightGradientSupported(convG);
  if (!directGradient || !directMaxPoolingApplies(poolG)) {
    poolingBackward(PoolingKind::MAX, dPooled, convOutputGrad, poolG, workspace);
    convolutionBackwardWeights(x, convOutputGrad, dw, db, convG);
    return;
  }
  if (workspace.numel() < maxPoolingWorkspaceFloats(dPooled.shape()))
    throw BackendError(
        "convolutionMaxPoolingBackwardWeights: needs the workspace of a training-mode "
        "convolutionMaxPoolingForward with the same shapes");
  const int64_t floats = convolutionMaxPoolingBackwardScratchFloats(x.shape(), dw.shape(), convG,
                                                                    omp_get_max_threads());
  cpu::convolutionMaxPoolingBackwardWeights(x, dPooled,
                                            reinterpret_cast<const uint8_t*>(workspace.data()), dw,
                                            db, convG, poolG, scratch(floats));
}

// --- Batch normalisation
// ---------------------------------------------------------------------------------
// Plain loops (BatchNormalization.h).

void CpuBackend::batchNormForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                          float eps, Tensor& y, Tensor& batchMean,
                                          Tensor& batchVariance) {
  cpu::batchNormForwardTraining(x, gamma, beta, eps, y, batchMean, batchVariance);
}

void CpuBackend::batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                           const Tensor& mean, const Tensor& variance, float eps,
                                           Tensor& y) {
  cpu::batchNormForwardInference(x, gamma, beta, mean, variance, eps, y);
}

void CpuBackend::batchNormBackward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                                   const Tensor& batchMean, const Tensor& batchVariance, float eps,
                                   Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  cpu::batchNormBackward(x, dy, gamma, batchMean, batchVariance, eps, dx, dgamma, dbeta);
}

// --- Inner product
// ---------------------------------------------------------------------------------

void CpuBackend::innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y) {
  const int64_t floats =
      innerProductScratchFloats(x.dim(0), w.dim(1), w.dim(0), omp_get_max_threads());
  cpu::innerProductForward(x, w, b, y, scratch(floats));
}

void CpuBackend::innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx) {
  const int64_t floats =
      innerProductScratchFloats(dy.dim(0), w.dim(1), w.dim(0), omp_get_max_threads());
  cpu::innerProductBackwardData(dy, w, dx, scratch(floats));
}

void CpuBackend::innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                             Tensor& db) {
  const int64_t floats =
      innerProductScratchFloats(x.dim(0), dw.dim(1), dw.dim(0), omp_get_max_threads());
  cpu::innerProductBackwardWeights(x, dy, dw, db, scratch(floats));
}

// --- Activations -----------------------------------------------------------------------------
// The activations without transcendentals run on dl4cpp's loops (Activations.h), which allocate
// nothing per call. The others stay on oneDNN's eltwise primitives (eltwiseAlgorithm): its JIT
// kernels vectorise tanh and exp, which plain loops get from GCC only under -ffast-math.

void CpuBackend::activationForward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) {
  switch (kind) {
    case ActivationKind::IDENTITY:
      if (y.data() != x.data()) y.copyFrom(x);
      return;
    case ActivationKind::RELU:
      reluForward(x, y);
      return;
    case ActivationKind::LEAKYRELU:
      leakyReluForward(alpha, x, y);
      return;
    case ActivationKind::SOFTMAX:
      softmaxForward(x, y);
      return;
    case ActivationKind::HARDTANH:
    case ActivationKind::HARDSIGMOID:
    case ActivationKind::RELU6:
      clippedLinearForward(clippedLinear(kind), x, y);
      return;
    default:
      break;
  }
  const Eltwise eltwise = eltwiseAlgorithm(kind);
  PrimitiveKey key;
  key.add(static_cast<int64_t>(OpId::EltwiseForward))
      .add(static_cast<int64_t>(kind))
      .add(y.numel());
  CachedPrimitive& e = cache_.get(key, [&] {
    const auto md = flatDesc(y.numel());
    return makeEntry<dnnl::eltwise_forward::primitive_desc, dnnl::eltwise_forward>(
        "eltwise forward",
        [&] {
          dnnl::eltwise_forward::desc desc(prop_kind::forward_training, eltwise.algorithm, md,
                                           eltwise.alpha, 0.0f);
          return dnnl::eltwise_forward::primitive_desc(desc, engine_);
        },
        engine_, {{DNNL_ARG_SRC, md}, {DNNL_ARG_DST, md}});
  });
  execute(e, {x.data(), y.data()});
  if (kind == ActivationKind::SELU) scale(y, static_cast<float>(kSeluLambda));
}

void CpuBackend::activationBackward(ActivationKind kind, float alpha, const Tensor& x,
                                    const Tensor& y, const Tensor& dy, Tensor& dx) {
  switch (kind) {
    case ActivationKind::IDENTITY:
      if (dx.data() != dy.data()) dx.copyFrom(dy);
      return;
    case ActivationKind::RELU:
      reluBackward(0.0f, y, dy, dx);
      return;
    case ActivationKind::LEAKYRELU:
      reluBackward(alpha, y, dy, dx);
      return;
    case ActivationKind::SOFTMAX:
      softmaxBackward(y, dy, dx);
      return;
    case ActivationKind::HARDTANH:
    case ActivationKind::HARDSIGMOID:
    case ActivationKind::RELU6:
      clippedLinearBackward(clippedLinear(kind), y, dy, dx);
      return;
    case ActivationKind::SELU:
      seluBackward(y, dy, dx);
      return;
    default:
      break;
  }
  const Eltwise eltwise = eltwiseAlgorithm(kind);
  // What the algorithm's backward reads: the output (its *_use_dst_for_bwd form) or the input.
  const bool fromInput = activationBackwardNeedsInput(kind);
  const Tensor& read = fromInput ? x : y;
  if (read.numel() != y.numel())
    throw BackendError(
        "activationBackward: this activation's backward pass reads its input x "
        "(activationBackwardNeedsInput), which was not given");
  PrimitiveKey key;
  key.add(static_cast<int64_t>(OpId::EltwiseBackward))
      .add(static_cast<int64_t>(kind))
      .add(y.numel());
  CachedPrimitive& e = cache_.get(key, [&] {
    const auto md = flatDesc(y.numel());
    return makeEntry<dnnl::eltwise_backward::primitive_desc, dnnl::eltwise_backward>(
        "eltwise backward",
        [&] {
          dnnl::eltwise_forward::desc fdesc(prop_kind::forward_training, eltwise.algorithm, md,
                                            eltwise.alpha, 0.0f);
          dnnl::eltwise_forward::primitive_desc hint(fdesc, engine_);
          dnnl::eltwise_backward::desc desc(eltwise.algorithm, md, md, eltwise.alpha, 0.0f);
          return dnnl::eltwise_backward::primitive_desc(desc, engine_, hint);
        },
        engine_,
        {{fromInput ? DNNL_ARG_SRC : DNNL_ARG_DST, md},
         {DNNL_ARG_DIFF_DST, md},
         {DNNL_ARG_DIFF_SRC, md}});
  });
  execute(e, {read.data(), dy.data(), dx.data()});
}

// --- Local response normalisation in inference (CpuLrn.cpp has the rest) ----------------------

bool CpuBackend::lrnInferenceOnDnnl(const LrnParams& p, const Tensor& x, Tensor& y) {
  PrimitiveKey key;
  key.add(static_cast<int64_t>(OpId::LrnInference))
      .add(p.depth)
      .add(std::bit_cast<int32_t>(p.k))
      .add(std::bit_cast<int32_t>(p.alpha))
      .add(std::bit_cast<int32_t>(p.beta));
  addShape(key, x.shape());
  CachedPrimitive& e = cache_.get(key, [&] {
    const auto md = plainDesc(x.shape());
    bool jit = false;
    CachedPrimitive entry = makeEntry<dnnl::lrn_forward::primitive_desc, dnnl::lrn_forward>(
        "lrn forward",
        [&] {
          // oneDNN divides alpha by the window size, DL4J does not.
          const dnnl::lrn_forward::desc desc(prop_kind::forward_inference,
                                             algorithm::lrn_across_channels, md, p.depth,
                                             p.alpha * static_cast<float>(p.depth), p.beta, p.k);
          dnnl::lrn_forward::primitive_desc pd(desc, engine_);
          jit = std::string_view(pd.impl_info_str()).find("ref") == std::string_view::npos;
          return pd;
        },
        engine_, {{DNNL_ARG_SRC, md}, {DNNL_ARG_DST, md}});
    return jit ? std::move(entry) : CachedPrimitive{};  // an empty entry: the loops, every time
  });
  if (!e.primitive) return false;
  execute(e, {x.data(), y.data()});
  return true;
}

}  // namespace dl4cpp::cpu
