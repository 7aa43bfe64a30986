// The CPU backend's pooling family (ops/PoolingOps.h). Windowed pooling runs the algorithm
// PoolingChoice.h's table picks: MAX pooling without padding on dl4cpp's loops (MaxPooling.h), the
// rest on oneDNN primitives cached per shape.
//
// Global pooling on the CPU: one reduction per (n, c) plane, planes split across the OpenMP
// threads. Plain loops rather than oneDNN: its pooling with a whole-plane window is slower forward
// (it reorders the plain layout into its blocked one inside every call) and no faster backward,
// and its reduction primitive is slower for SUM and, a reference kernel for the p-norm, far slower
// for PNORM.
#include <algorithm>
#include <cmath>
#include <memory>

#include "nn/backend/IntegerPower.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/PoolingChoice.h"
#include "nn/backend/cpu/onednn/DnnlPrimitives.h"
#include "nn/backend/cpu/pooling/MaxPooling.h"

namespace dl4cpp::cpu {

namespace {

class CpuPooling final : public PoolingImpl {
 public:
  explicit CpuPooling(CpuBackend& core) : core_(core) {}
  void poolingForward(PoolingKind kind, const Tensor& x, Tensor& y, const WindowGeometry& g,
                      bool training, Tensor& workspace) override;
  void poolingBackward(PoolingKind kind, const Tensor& dy, Tensor& dx, const WindowGeometry& g,
                       const Tensor& workspace) override;
  void globalPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, Tensor& y) override;
  void globalPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& y,
                             const Tensor& dy, Tensor& dx) override;

 private:
  CpuBackend& core_;
};

}  // namespace

using namespace onednn;  // NOLINT(google-build-using-namespace)

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

void directMaxPoolingForward(const Tensor& x, Tensor& y, const WindowGeometry& g, bool training,
                             Tensor& workspace) {
  uint8_t* argmax = nullptr;
  if (training) {
    const int64_t floats = maxPoolingWorkspaceFloats(y.shape());
    if (workspace.numel() < floats) workspace = Tensor(Shape{floats});
    argmax = reinterpret_cast<uint8_t*>(workspace.data());
  }
  maxPoolingForward(x, y, g, argmax);
}

void directMaxPoolingBackward(const Tensor& dy, Tensor& dx, const WindowGeometry& g,
                              const Tensor& workspace) {
  if (workspace.numel() < maxPoolingWorkspaceFloats(dy.shape()))
    throw BackendError(
        "poolingBackward: MAX pooling needs the workspace of a training-mode "
        "poolingForward with the same shapes; run forward(training=true) first");
  maxPoolingBackward(dy, dx, g, reinterpret_cast<const uint8_t*>(workspace.data()));
}

void CpuPooling::poolingForward(PoolingKind kind, const Tensor& x, Tensor& y,
                                const WindowGeometry& g, bool training, Tensor& workspace) {
  const PoolingAlgorithm& a = selectPooling(kind, g);
  if (a.forward != nullptr) {
    a.forward(x, y, g, training, workspace);
    return;
  }
  PrimitiveKey key("pool_forward");
  key.add(static_cast<int64_t>(kind)).add(training);
  addGeometry(addShape(key, x.shape()), g);
  CachedPrimitive& e = core_.cache().get(key, [&] {
    auto pd = poolForwardDesc(core_.engine(), kind, x.shape(), y.shape(), g, training);
    std::vector<std::pair<int, dnnl::memory::desc>> args{{DNNL_ARG_SRC, plainDesc(x.shape())},
                                                         {DNNL_ARG_DST, plainDesc(y.shape())}};
    if (pd.workspace_desc().get_size() > 0)
      args.emplace_back(DNNL_ARG_WORKSPACE, pd.workspace_desc());
    return makeEntry<dnnl::pooling_forward::primitive_desc, dnnl::pooling_forward>(
        "pooling forward", [&] { return pd; }, core_.engine(), args);
  });
  if (e.workspaceBytes == 0) {
    core_.execute(e, {x.data(), y.data()});
    return;
  }
  const int64_t floats =
      static_cast<int64_t>((e.workspaceBytes + sizeof(float) - 1) / sizeof(float));
  if (workspace.numel() < floats) workspace = Tensor(Shape{floats});
  core_.execute(e, {x.data(), y.data(), workspace.data()});
}

void CpuPooling::poolingBackward(PoolingKind kind, const Tensor& dy, Tensor& dx,
                                 const WindowGeometry& g, const Tensor& workspace) {
  const PoolingAlgorithm& a = selectPooling(kind, g);
  if (a.backward != nullptr) {
    a.backward(dy, dx, g, workspace);
    return;
  }
  PrimitiveKey key("pool_backward");
  key.add(static_cast<int64_t>(kind));
  addGeometry(addShape(key, dx.shape()), g);
  CachedPrimitive& e = core_.cache().get(key, [&] {
    auto hint = poolForwardDesc(core_.engine(), kind, dx.shape(), dy.shape(), g, true);
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
          return dnnl::pooling_backward::primitive_desc(desc, core_.engine(), hint);
        },
        core_.engine(), args);
  });
  if (e.workspaceBytes == 0) {
    core_.execute(e, {dy.data(), dx.data()});
    return;
  }
  if (workspace.numel() * static_cast<int64_t>(sizeof(float)) <
      static_cast<int64_t>(e.workspaceBytes))
    throw BackendError(
        "poolingBackward: MAX pooling needs the workspace of a training-mode "
        "poolingForward with the same shapes; run forward(training=true) first");
  core_.execute(e, {dy.data(), dx.data(), workspace.data()});
}

namespace {

// The largest value of a plane; a NaN never replaces a number (as in SubsamplingLayer's MAX).
// Eight running maxima let the compiler keep them in vector registers.
float planeMax(const float* x, int64_t n) {
  constexpr int kLanes = 8;
  float lanes[kLanes];
  std::fill(lanes, lanes + kLanes, x[0]);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] = x[i + l] > lanes[l] ? x[i + l] : lanes[l];
  float best = lanes[0];
  for (int l = 1; l < kLanes; ++l) best = lanes[l] > best ? lanes[l] : best;
  for (; i < n; ++i) best = x[i] > best ? x[i] : best;
  return best;
}

float planeSum(const float* x, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

float planePNorm(const float* x, int64_t n, int p) {
  float sum = 0.0f;
  if (p == 2) {
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i) sum += x[i] * x[i];
  } else {
    for (int64_t i = 0; i < n; ++i) sum += powInt(std::fabs(x[i]), p);
  }
  return static_cast<float>(std::pow(static_cast<double>(sum), 1.0 / p));
}

// dx of one plane for MAX: dy at the first element equal to the maximum y, 0 elsewhere (all 0
// when y is NaN, which no element equals).
void planeMaxBackward(const float* x, float y, float dy, float* dx, int64_t n) {
  std::fill(dx, dx + n, 0.0f);
  const float* at = std::find(x, x + n, y);
  if (at != x + n) dx[at - x] = dy;
}

// dx of one plane for PNORM: dy * x |x|^(p-2) / y^(p-1) = dy / y^(p-1) * sign(x) |x|^(p-1).
void planePNormBackward(const float* x, float y, float dy, float* dx, int64_t n, int p) {
  if (y == 0.0f) {  // every x is 0: the norm's subgradient 0 rather than 0 / 0
    std::fill(dx, dx + n, 0.0f);
    return;
  }
  const float scale = dy / powInt(y, p - 1);
  if (p == 2) {
    for (int64_t i = 0; i < n; ++i) dx[i] = scale * x[i];
  } else if (p == 1) {  // scale * sign(x), 0 at 0
    for (int64_t i = 0; i < n; ++i) dx[i] = x[i] > 0.0f ? scale : (x[i] < 0.0f ? -scale : 0.0f);
  } else {
    for (int64_t i = 0; i < n; ++i)
      dx[i] = scale * std::copysign(powInt(std::fabs(x[i]), p - 1), x[i]);
  }
}

}  // namespace

void CpuPooling::globalPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, Tensor& y) {
  if (x.numel() == 0 || y.numel() == 0) return;
  const float* in = x.data();
  float* out = y.data();
  const int64_t planes = x.dim(0) * x.dim(1), area = x.dim(2) * x.dim(3);
  parallelFor(planes, [=](int64_t p) {
    const float* plane = in + p * area;
    switch (kind) {
      case PoolingKind::MAX:
        out[p] = planeMax(plane, area);
        break;
      case PoolingKind::AVG:
        out[p] = planeSum(plane, area) / static_cast<float>(area);
        break;
      case PoolingKind::SUM:
        out[p] = planeSum(plane, area);
        break;
      case PoolingKind::PNORM:
        out[p] = planePNorm(plane, area, pnorm);
        break;
    }
  });
}

void CpuPooling::globalPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x,
                                       const Tensor& y, const Tensor& dy, Tensor& dx) {
  if (x.numel() == 0 || y.numel() == 0 || dy.numel() == 0 || dx.numel() == 0) return;
  const float* in = x.data();
  const float* out = y.data();
  const float* gradOut = dy.data();
  float* gradIn = dx.data();
  const int64_t planes = x.dim(0) * x.dim(1), area = x.dim(2) * x.dim(3);
  parallelFor(planes, [=](int64_t p) {
    float* plane = gradIn + p * area;
    switch (kind) {
      case PoolingKind::MAX:
        planeMaxBackward(in + p * area, out[p], gradOut[p], plane, area);
        break;
      case PoolingKind::AVG:
        std::fill(plane, plane + area, gradOut[p] / static_cast<float>(area));
        break;
      case PoolingKind::SUM:
        std::fill(plane, plane + area, gradOut[p]);
        break;
      case PoolingKind::PNORM:
        planePNormBackward(in + p * area, out[p], gradOut[p], plane, area, pnorm);
        break;
    }
  });
}

std::unique_ptr<PoolingImpl> makeCpuPooling(CpuBackend& core) {
  return std::make_unique<CpuPooling>(core);
}

}  // namespace dl4cpp::cpu
