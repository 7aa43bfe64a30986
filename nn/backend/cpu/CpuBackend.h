#pragma once
// The CPU backend: the shared state of its op families (one file each: Cpu<Family>.cpp) and the
// fused steps it plans. Tensors cross this interface in plain layouts (nchw / oihw / nc / oi: the
// layouts of the network's flat buffers). At the AVX-512 level (CpuIsa.h), everything a LeNet-like
// network needs runs on dl4cpp's own kernels, which allocate nothing per call: dense layers and
// im2col / col2im on its sgemm (Sgemm.h), stride-1 convolutions on direct kernels
// (DirectConvolution.h, DirectWeightGradient.h), MAX pooling without padding (MaxPooling.h) and,
// where a convolution feeds it, the pair image by image (a planned step: ConvolutionPoolingStep.h),
// the activations without transcendentals (Activations.h), batch normalisation
// (BatchNormalization.h), losses and updater steps (CpuElementwise.cpp). The rest runs on oneDNN
// primitives cached per shape: other convolutions (channels-last or oneDNN's blocked layout by
// input channel count, see ConvolutionChoice.h, reordering at their boundary into scratch_, which
// only lives during one call), AVG pooling and the activations that need exp or tanh.
#include <oneapi/dnnl/dnnl.hpp>

#include "nn/backend/Backend.h"
#include "nn/backend/cpu/Activations.h"
#include "nn/backend/cpu/onednn/PrimitiveCache.h"

namespace dl4cpp::cpu {

class CpuBackend final : public Backend {
 public:
  CpuBackend();
  ~CpuBackend() override;

  void bindToCurrentThread(int numThreads) override;
  std::vector<std::unique_ptr<NetworkStep>> planSteps(
      const std::vector<LayerDescription>& layers) override;

  // A convolution feeding MAX pooling, the kernels of the fused step (ConvolutionPoolingStep.h):
  // pooled = maxpool(f(conv(x, w) + b)), with the arg-max in `workspace` when training, the same
  // numbers as convolutionForward into convOutput, activationForward(f) on it and
  // poolingForward(MAX) from it. Image by image (ConvolutionPooling.h) where the kernels allow,
  // which leaves convOutput (N, O, outH, outW) untouched; elsewhere the three ops through it.
  void convolutionMaxPoolingForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                    const FusedActivation& f, Tensor& convOutput, Tensor& pooled,
                                    const WindowGeometry& convG, const WindowGeometry& poolG,
                                    bool training, Tensor& workspace);
  // dw, db (db may be empty) from x and the pooled output's gradient dPooled: the same numbers as
  // poolingBackward(MAX) into convOutputGrad followed by convolutionBackwardWeights, and likewise
  // fused where the kernels allow, leaving convOutputGrad untouched.
  void convolutionMaxPoolingBackwardWeights(const Tensor& x, const Tensor& dPooled,
                                            const Tensor& workspace, Tensor& convOutputGrad,
                                            Tensor& dw, Tensor& db, const WindowGeometry& convG,
                                            const WindowGeometry& poolG);

  // A convolution and its activation f (FusedActivation), the kernels of the planned step
  // ConvolutionActivationStep.h: y = f(conv(x, w) + b), the same numbers as convolutionForward
  // and activationForward(f) on y in turn, f applied to each work item's output while it is in
  // cache where dl4cpp's own kernels run the convolution.
  void convolutionActivationForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                    const FusedActivation& f, Tensor& y, const WindowGeometry& g);
  // dw, db from x, f's output y and its gradient dy: the same numbers as activationBackward(f)
  // into dz followed by convolutionBackwardWeights from dz. Where the weight gradient runs as
  // im2col + sgemm, image by image, each image's dz in cache, leaving dz untouched.
  void convolutionActivationBackwardWeights(const Tensor& x, const Tensor& y, const Tensor& dy,
                                            const FusedActivation& f, Tensor& dz, Tensor& dw,
                                            Tensor& db, const WindowGeometry& g);

  // Number of cached primitives (tests use it to prove shapes are cached, not rebuilt).
  size_t cachedPrimitives() const { return cache_.size(); }

  // --- What the families (Cpu<Family>.cpp) share -------------------------------------------------
  const dnnl::engine& engine() const { return engine_; }
  PrimitiveCache& cache() { return cache_; }
  // Binds `pointers` to the entry's memories (same order as argIds) and executes it. With
  // `preparedInput` (an index into pointers), that input's reorder is skipped: its internal buffer
  // already holds it, left in the scratch arena by the previous call (CpuConvolution.cpp's shared
  // reorder of dy); the caller checks that the arena need not grow (scratchHolds).
  void execute(CachedPrimitive& entry, std::initializer_list<const void*> pointers,
               int preparedInput = -1);
  // The scratch arena holding at least `floats` floats (it grows only for new shapes); valid
  // during one op.
  float* scratch(int64_t floats);
  // Whether the arena already holds `bytes`, so that scratch() keeps its contents.
  bool scratchHolds(size_t bytes) const {
    return static_cast<size_t>(scratch_.numel()) * sizeof(float) >= bytes;
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  PrimitiveCache cache_;
  // Convolutions' reordered copies of their arguments, column matrices or per-image sums, needed
  // only during one call: one arena sized for the largest call instead of buffers per shape.
  Tensor scratch_;
  // The families, each in its own file; the fused kernels call them directly (not through the
  // dispatch), since a planned step is observed once, as a whole (Backend::runPlanned).
  std::unique_ptr<ConvolutionImpl> convolution_;
  std::unique_ptr<PoolingImpl> pooling_;
  std::unique_ptr<NormalizationImpl> normalization_;
  std::unique_ptr<ElementwiseImpl> elementwise_;
  std::unique_ptr<TransformImpl> transform_;
  std::unique_ptr<RecurrentImpl> recurrent_;
};

// Each family's CPU implementation, defined in its own file (CpuConvolution.cpp, CpuPooling.cpp,
// CpuNormalization.cpp, CpuElementwise.cpp, CpuTransform.cpp, CpuRecurrent.cpp) on the backend's
// shared state.
std::unique_ptr<ConvolutionImpl> makeCpuConvolution(CpuBackend& core);
std::unique_ptr<PoolingImpl> makeCpuPooling(CpuBackend& core);
std::unique_ptr<NormalizationImpl> makeCpuNormalization(CpuBackend& core);
std::unique_ptr<ElementwiseImpl> makeCpuElementwise(CpuBackend& core);
std::unique_ptr<TransformImpl> makeCpuTransform(CpuBackend& core);
std::unique_ptr<RecurrentImpl> makeCpuRecurrent(CpuBackend& core);

}  // namespace dl4cpp::cpu
