// The CPU backend's core: what its families share (the oneDNN engine and stream, the primitive
// cache, the scratch arena) and the fused steps it plans (ConvolutionPoolingStep.h,
// ConvolutionActivationStep.h). The ops themselves are in Cpu<Family>.cpp.
#include "nn/backend/cpu/CpuBackend.h"

#include <omp.h>

#include <string>

#include "nn/backend/cpu/Activations.h"
#include "nn/backend/cpu/ConvolutionChoice.h"
#include "nn/backend/cpu/CpuIsa.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/PoolingChoice.h"
#include "nn/backend/cpu/direct/DirectConvolution.h"
#include "nn/backend/cpu/direct/DirectWeightGradient.h"
#include "nn/backend/cpu/fusion/ConvolutionActivationStep.h"
#include "nn/backend/cpu/fusion/ConvolutionPooling.h"
#include "nn/backend/cpu/fusion/ConvolutionPoolingStep.h"
#include "nn/backend/cpu/im2col/Im2colConvolution.h"
#include "nn/backend/cpu/pooling/MaxPooling.h"
#include "nn/backend/cpu/winograd/WinogradConvolution.h"

namespace dl4cpp::cpu {

namespace {

// The ISA level is chosen before oneDNN's first use, so that DL4CPP_MAX_CPU_ISA can still cap it.
dnnl::engine cpuEngine() {
  cpuIsa();
  return dnnl::engine(dnnl::engine::kind::cpu, 0);
}

}  // namespace

// The thread that makes a backend may call its kernels without binding first (a layer's forward on
// a DeviceContext of its own): it is kept within OMP_THREAD_LIMIT from the start.
CpuBackend::CpuBackend()
    : engine_(cpuEngine()),
      stream_(engine_),
      convolution_(makeCpuConvolution(*this)),
      pooling_(makeCpuPooling(*this)),
      normalization_(makeCpuNormalization(*this)),
      elementwise_(makeCpuElementwise(*this)),
      transform_(makeCpuTransform(*this)),
      recurrent_(makeCpuRecurrent(*this)) {
  install(*convolution_, *pooling_, *normalization_, *elementwise_, *transform_, recurrent_.get());
  bindToCurrentThread(0);
}

CpuBackend::~CpuBackend() = default;

void CpuBackend::bindToCurrentThread(int numThreads) { cpu::setThreadsWithinLimit(numThreads); }

float* CpuBackend::scratch(int64_t floats) {
  if (scratch_.numel() < floats) scratch_ = Tensor(Shape{floats});
  return scratch_.data();
}

void CpuBackend::execute(CachedPrimitive& e, std::initializer_list<const void*> pointers,
                         int preparedInput) {
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
    if (a.reorder && !a.output && static_cast<int>(n) != preparedInput) {
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

void CpuBackend::convolutionActivationForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                              const FusedActivation& f, Tensor& y,
                                              const WindowGeometry& g) {
  checkFusedActivation(f, "convolutionActivationForward");
  if (ownConvolutionForward(*this, x, w, b, f, y, g)) return;
  convolution_->convolutionForward(x, w, b, y, g);
  elementwise_->activationForward(f.kind, f.alpha, y, y);
}

void CpuBackend::convolutionActivationBackwardWeights(const Tensor& x, const Tensor& y,
                                                      const Tensor& dy, const FusedActivation& f,
                                                      Tensor& dz, Tensor& dw, Tensor& db,
                                                      const WindowGeometry& g) {
  checkFusedActivation(f, "convolutionActivationBackwardWeights");
  if (selectConvolutionWeightGradient(dw.shape(), g, dy.dim(2), dy.dim(3)).kernel ==
      WeightGradientKernel::IM2COL) {
    const int64_t floats = im2colActivationWeightGradientScratchFloats(x.shape(), dw.shape(), g,
                                                                       omp_get_max_threads());
    im2colConvolutionActivationBackwardWeights(x, y, dy, f, dw, db, g, scratch(floats));
    return;
  }
  elementwise_->activationBackward(f.kind, f.alpha, Tensor(), y, dy, dz);
  convolution_->convolutionBackwardWeights(x, dz, dw, db, g);
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
  if (kernel == ForwardKernel::ONEDNN ||
      selectPooling(PoolingKind::MAX, poolG).kernel != PoolingKernel::DIRECT_MAX) {
    convolution_->convolutionForward(x, w, b, convOutput, convG);
    elementwise_->activationForward(f.kind, f.alpha, convOutput, convOutput);
    pooling_->poolingForward(PoolingKind::MAX, convOutput, pooled, poolG, training, workspace);
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
  const bool directGradient = selectConvolutionWeightGradient(
                                  dw.shape(), convG, convOutputGrad.dim(2), convOutputGrad.dim(3))
                                  .kernel == WeightGradientKernel::DIRECT_FEW_CHANNELS;
  if (!directGradient ||
      selectPooling(PoolingKind::MAX, poolG).kernel != PoolingKernel::DIRECT_MAX) {
    pooling_->poolingBackward(PoolingKind::MAX, dPooled, convOutputGrad, poolG, workspace);
    convolution_->convolutionBackwardWeights(x, convOutputGrad, dw, db, convG);
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

}  // namespace dl4cpp::cpu
