// The CPU backend's convolution family (ops/ConvolutionOps.h): each convolution pass runs the
// algorithm its table in ConvolutionChoice.h picks, one of dl4cpp's own kernels or oneDNN's
// primitive, cached per shape (channels-last or oneDNN's blocked layout by input channel count,
// reordering at their boundary into the backend's scratch); inner products on dl4cpp's sgemm
// (InnerProduct.h).
#include <omp.h>

#include <memory>
#include <utility>

#include "nn/backend/cpu/ConvolutionChoice.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/direct/DirectConvolution.h"
#include "nn/backend/cpu/gemm/InnerProduct.h"
#include "nn/backend/cpu/im2col/Im2colConvolution.h"
#include "nn/backend/cpu/winograd/WinogradConvolution.h"

namespace dl4cpp::cpu {

namespace {

class CpuConvolution final : public ConvolutionImpl {
 public:
  explicit CpuConvolution(CpuBackend& core) : core_(core) {}
  void convolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                          const WindowGeometry& g) override;
  void convolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                               const WindowGeometry& g) override;
  void convolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                  const WindowGeometry& g) override;
  void convolutionBackwardDataAfterWeights(const Tensor& dy, const Tensor& w, Tensor& dx,
                                           const WindowGeometry& g) override;
  void innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y) override;
  void innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx) override;
  void innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                   Tensor& db) override;

 private:
  // oneDNN's entry for the data gradient of these shapes (its first argument dy).
  CachedPrimitive& backwardDataEntry(const Tensor& dy, const Tensor& w, Tensor& dx,
                                     const WindowGeometry& g);

  CpuBackend& core_;
  // What the last weight gradient left of dy in the scratch arena: oneDNN's reorder of it into its
  // kernel's layout, at the arena's start (dy is each oneDNN gradient entry's first argument).
  // The data gradient that ConvolutionOps::convolutionBackward runs next reads it there instead of
  // reordering dy again, when its kernel wants the same layout. Null when the last weight gradient
  // left none.
  const float* reorderedDy_ = nullptr;
  dnnl::memory::desc reorderedDyLayout_;
};

}  // namespace

bool ownConvolutionForward(CpuBackend& core, const Tensor& x, const Tensor& w, const Tensor& b,
                           const FusedActivation& f, Tensor& y, const WindowGeometry& g) {
  const ConvolutionForwardAlgorithm& a = selectConvolutionForward(w.shape(), g, y.dim(2), y.dim(3));
  if (a.run == nullptr) return false;
  float* scratch =
      a.scratchFloats == nullptr
          ? nullptr
          : core.scratch(a.scratchFloats(x.shape(), w.shape(), g, omp_get_max_threads()));
  a.run(x, w, b, y, g, scratch, f);
  return true;
}

void CpuConvolution::convolutionForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                        Tensor& y, const WindowGeometry& g) {
  if (ownConvolutionForward(core_, x, w, b, {}, y, g)) return;
  const bool bias = !b.empty();
  PrimitiveKey key("conv_forward");
  key.add(bias);
  addGeometry(addShape(addShape(key, x.shape()), w.shape()), g);
  CachedPrimitive& e = core_.cache().get(key, [&] {
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
          return dnnl::convolution_forward::primitive_desc(desc, core_.engine());
        },
        core_.engine(), args);
  });
  if (bias)
    core_.execute(e, {x.data(), w.data(), y.data(), b.data()});
  else
    core_.execute(e, {x.data(), w.data(), y.data()});
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

CachedPrimitive& CpuConvolution::backwardDataEntry(const Tensor& dy, const Tensor& w, Tensor& dx,
                                                   const WindowGeometry& g) {
  PrimitiveKey key("conv_backward_data");
  addGeometry(addShape(addShape(key, dx.shape()), w.shape()), g);
  return core_.cache().get(key, [&] {
    const auto diffSrc = plainDesc(dx.shape()), wei = plainDesc(w.shape()),
               diffDst = plainDesc(dy.shape());
    return makeEntry<dnnl::convolution_backward_data::primitive_desc,
                     dnnl::convolution_backward_data>(
        "convolution backward-data",
        [&] {
          auto hint = convForwardHint(core_.engine(), dx.shape(), w.shape(), dy.shape(), g);
          auto desc = dnnl::convolution_backward_data::desc(
              algorithm::convolution_direct, convActivationDesc(dx.shape(), w.shape()),
              anyDesc(w.shape()), convActivationDesc(dy.shape(), w.shape()), strides(g),
              dilation(g), padBefore(g), padAfter(g));
          return dnnl::convolution_backward_data::primitive_desc(desc, core_.engine(), hint);
        },
        core_.engine(),
        {{DNNL_ARG_DIFF_DST, diffDst}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DIFF_SRC, diffSrc}});
  });
}

void CpuConvolution::convolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                             const WindowGeometry& g) {
  const ConvolutionBackwardDataAlgorithm& a =
      selectConvolutionBackwardData(dx.shape(), w.shape(), g);
  if (a.run != nullptr) {
    a.run(dy, w, dx, g,
          core_.scratch(a.scratchFloats(dx.shape(), w.shape(), g, omp_get_max_threads())));
    return;
  }
  core_.execute(backwardDataEntry(dy, w, dx, g), {dy.data(), w.data(), dx.data()});
}

void CpuConvolution::convolutionBackwardDataAfterWeights(const Tensor& dy, const Tensor& w,
                                                         Tensor& dx, const WindowGeometry& g) {
  const float* reordered = std::exchange(reorderedDy_, nullptr);
  if (reordered != dy.data() || selectConvolutionBackwardData(dx.shape(), w.shape(), g).run) {
    convolutionBackwardData(dy, w, dx, g);
    return;
  }
  CachedPrimitive& e = backwardDataEntry(dy, w, dx, g);
  const CachedArg& diffDst = e.args.front();
  const bool sameLayout = diffDst.internal && diffDst.scratchOffset == 0 &&
                          diffDst.internal.get_desc() == reorderedDyLayout_ &&
                          core_.scratchHolds(e.scratchBytes);
  core_.execute(e, {dy.data(), w.data(), dx.data()}, sameLayout ? 0 : -1);
}

void CpuConvolution::convolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                                Tensor& db, const WindowGeometry& g) {
  reorderedDy_ = nullptr;  // whatever an earlier call left is not this dy's
  const ConvolutionWeightGradientAlgorithm& a =
      selectConvolutionWeightGradient(dw.shape(), g, dy.dim(2), dy.dim(3));
  if (a.run != nullptr) {
    a.run(x, dy, dw, db, g,
          core_.scratch(a.scratchFloats(x.shape(), dw.shape(), g, omp_get_max_threads())));
    return;
  }
  const bool bias = !db.empty();
  PrimitiveKey key("conv_backward_weights");
  key.add(bias);
  addGeometry(addShape(addShape(key, x.shape()), dw.shape()), g);
  CachedPrimitive& e = core_.cache().get(key, [&] {
    const auto src = plainDesc(x.shape()), diffWei = plainDesc(dw.shape()),
               diffDst = plainDesc(dy.shape());
    // dy first: its reorder lands at the arena's start, where the data gradient finds it.
    std::vector<std::pair<int, dnnl::memory::desc>> args{
        {DNNL_ARG_DIFF_DST, diffDst}, {DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_WEIGHTS, diffWei}};
    if (bias) args.emplace_back(DNNL_ARG_DIFF_BIAS, plainDesc(db.shape()));
    return makeEntry<dnnl::convolution_backward_weights::primitive_desc,
                     dnnl::convolution_backward_weights>(
        "convolution backward-weights",
        [&] {
          auto hint = convForwardHint(core_.engine(), x.shape(), dw.shape(), dy.shape(), g);
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
          return dnnl::convolution_backward_weights::primitive_desc(desc, core_.engine(), hint);
        },
        core_.engine(), args);
  });
  if (bias)
    core_.execute(e, {dy.data(), x.data(), dw.data(), db.data()});
  else
    core_.execute(e, {dy.data(), x.data(), dw.data()});
  const CachedArg& diffDst = e.args.front();
  if (diffDst.internal && diffDst.scratchOffset == 0) {
    reorderedDy_ = dy.data();
    reorderedDyLayout_ = diffDst.internal.get_desc();
  }
}

// --- Inner product -------------------------------------------------------------------------------

void CpuConvolution::innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                         Tensor& y) {
  const int64_t floats =
      innerProductScratchFloats(x.dim(0), w.dim(1), w.dim(0), omp_get_max_threads());
  cpu::innerProductForward(x, w, b, y, core_.scratch(floats));
}

void CpuConvolution::innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx) {
  const int64_t floats =
      innerProductScratchFloats(dy.dim(0), w.dim(1), w.dim(0), omp_get_max_threads());
  cpu::innerProductBackwardData(dy, w, dx, core_.scratch(floats));
}

void CpuConvolution::innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                                 Tensor& db) {
  const int64_t floats =
      innerProductScratchFloats(x.dim(0), dw.dim(1), dw.dim(0), omp_get_max_threads());
  cpu::innerProductBackwardWeights(x, dy, dw, db, core_.scratch(floats));
}

std::unique_ptr<ConvolutionImpl> makeCpuConvolution(CpuBackend& core) {
  return std::make_unique<CpuConvolution>(core);
}

}  // namespace dl4cpp::cpu
