#pragma once
// The CPU backend. Tensors cross this interface in plain layouts (nchw / oihw / nc / oi: the
// layouts of the network's flat buffers). At the AVX-512 level (CpuIsa.h), everything a LeNet-like
// network needs runs on dl4cpp's own kernels, which allocate nothing per call: dense layers and
// im2col / col2im on its sgemm (Sgemm.h), stride-1 convolutions on direct kernels
// (DirectConvolution.h, DirectWeightGradient.h), MAX pooling without padding (MaxPooling.h) and,
// where a convolution feeds it, the pair image by image (a planned step: ConvolutionPoolingStep.h),
// the activations without transcendentals (Activations.h), batch normalisation
// (BatchNormalization.h), losses and updater steps (CpuFlatOps.cpp). The rest runs on oneDNN
// primitives cached per shape: other convolutions (channels-last or oneDNN's blocked layout by
// input channel count, see CpuBackend.cpp, reordering at their boundary into scratch_, which only
// lives during one call), AVG pooling and the activations that need exp or tanh.
#include <oneapi/dnnl/dnnl.hpp>

#include "nn/backend/Backend.h"
#include "nn/backend/cpu/Activations.h"
#include "nn/backend/cpu/PrimitiveCache.h"

namespace dl4cpp::cpu {

class CpuBackend final : public Backend {
 public:
  CpuBackend();

  void bindToCurrentThread(int numThreads) override;

  void convolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                          const WindowGeometry& g) override;
  void convolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                               const WindowGeometry& g) override;
  void convolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                  const WindowGeometry& g) override;
  void poolingForward(PoolingKind kind, const Tensor& x, Tensor& y, const WindowGeometry& g,
                      bool training, Tensor& workspace) override;
  void poolingBackward(PoolingKind kind, const Tensor& dy, Tensor& dx, const WindowGeometry& g,
                       const Tensor& workspace) override;
  std::vector<std::unique_ptr<NetworkStep>> planSteps(
      const std::vector<LayerDescription>& layers) override;
  void batchNormForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                                Tensor& y, Tensor& batchMean, Tensor& batchVariance) override;
  void batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 const Tensor& mean, const Tensor& variance, float eps,
                                 Tensor& y) override;
  void batchNormBackward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                         const Tensor& batchMean, const Tensor& batchVariance, float eps,
                         Tensor& dx, Tensor& dgamma, Tensor& dbeta) override;
  void innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y) override;
  void innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx) override;
  void innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                   Tensor& db) override;
  void activationForward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) override;
  void activationBackward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y,
                          const Tensor& dy, Tensor& dx) override;
  double lossForwardBackward(LossKind loss, ActivationKind activation, float alpha, const Tensor& z,
                             const Tensor& y, const Tensor& labels, Tensor& dz) override;
  double lossScore(LossKind loss, const Tensor& y, const Tensor& labels) override;
  void movingAverage(Tensor& average, const Tensor& value, float decay) override;
  void dropoutMask(uint64_t seed, float retainProbability, Tensor& mask) override;
  void multiply(const Tensor& x, const Tensor& y, Tensor& z) override;
  void updaterStep(const UpdaterParams& u, const RegularizationParams& r, int64_t iteration,
                   Tensor& param, Tensor& grad, Tensor& state) override;
  void scale(Tensor& y, float a) override;
  double sumOfSquares(const Tensor& x) override;
  void stageBatch(const Tensor& features, const Tensor& labels, Tensor& deviceFeatures,
                  Tensor& deviceLabels) override;
  void globalPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, Tensor& y) override;
  void globalPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& y,
                             const Tensor& dy, Tensor& dx) override;
  void lrnForward(const LrnParams& p, const Tensor& x, Tensor& y, bool training,
                  Tensor& workspace) override;
  void lrnBackward(const LrnParams& p, const Tensor& x, const Tensor& dy, Tensor& dx,
                   const Tensor& workspace) override;
  void zeroPaddingForward(const Tensor& x, Tensor& y, const Padding2d& p) override;
  void zeroPaddingBackward(const Tensor& dy, Tensor& dx, const Padding2d& p) override;
  void copy(const Tensor& src, Tensor& dst) override;
  double sumOfAbsolutes(const Tensor& x) override;
  void clipByValue(Tensor& y, float threshold) override;

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

 private:
  // The forward pass on dl4cpp's own kernels, f applied as they go; false (nothing done) where
  // oneDNN runs it.
  bool ownConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b,
                             const FusedActivation& f, Tensor& y, const WindowGeometry& g);
  // Binds `pointers` to the entry's memories (same order as argIds) and executes it.
  void execute(CachedPrimitive& entry, std::initializer_list<const void*> pointers);
  // scratch_ holding at least `floats` floats (it grows only for new shapes).
  float* scratch(int64_t floats);
  // An inference-mode LRN on oneDNN's JIT kernel, where it has one for the shape (then faster than
  // the loops of CpuLrn.cpp); false, having done nothing, where it has only its reference kernel.
  bool lrnInferenceOnDnnl(const LrnParams& p, const Tensor& x, Tensor& y);

  dnnl::engine engine_;
  dnnl::stream stream_;
  PrimitiveCache cache_;
  // Convolutions' reordered copies of their arguments, column matrices or per-image sums, needed
  // only during one call: one arena sized for the largest call instead of buffers per shape.
  Tensor scratch_;
};

}  // namespace dl4cpp::cpu
