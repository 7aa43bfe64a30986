// The CPU backend's normalisation family (ops/NormalizationOps.h): batch normalisation on the
// plain loops of CpuBatchNorm.h, and local response normalisation.
//
// Local response normalisation across channels on the CPU (LrnParams: DL4J's definition), plain
// loops over the (n, c) planes split across the OpenMP threads, except in inference where oneDNN
// has a JIT kernel for the shape (lrnInferenceOnDnnl; faster there). oneDNN's backward
// pass on plain NCHW is a reference kernel, far slower than the loop here, and so is its forward
// pass for channel counts its JIT kernel does not vectorise; its training forward keeps what a
// backward pass needs in a layout of its own, so training runs on the loops. Built with
// -fno-math-errno (CMakeLists.txt) so that sqrt vectorises: its arguments are at least k > 0.
//
// A training forward pass leaves two values per element in the workspace: scale = u^-beta and
// scale / u, where u = k + alpha * (window sum of x^2). The backward pass is the exact derivative
//   dx_c = dy_c * scale_c - 2 alpha beta x_c * sum over the window of c of (x_j dy_j scale_j / u_j)
// (y_j = x_j scale_j: d y_j / d x_c = scale_j [j = c] - 2 alpha beta x_j x_c scale_j / u_j).
// DL4J's own backward pass divides that sum by u_c instead of each u_j, an approximation.
#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <string_view>

#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/CpuBatchNorm.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/onednn/DnnlPrimitives.h"

namespace dl4cpp::cpu {

namespace {

class CpuNormalization final : public NormalizationImpl {
 public:
  explicit CpuNormalization(CpuBackend& core) : core_(core) {}
  void batchNormForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                                ActivationKind activation, Tensor& y, Tensor& batchMean,
                                Tensor& batchVariance) override {
    cpu::batchNormForwardTraining(x, gamma, beta, eps, activation == ActivationKind::RELU, y,
                                  batchMean, batchVariance);
  }
  void batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 const Tensor& mean, const Tensor& variance, float eps,
                                 ActivationKind activation, Tensor& y) override {
    cpu::batchNormForwardInference(x, gamma, beta, mean, variance, eps,
                                   activation == ActivationKind::RELU, y);
  }
  // y is made again from x (CpuBatchNorm.h), not read.
  void batchNormBackward(const Tensor& x, const Tensor& /*y*/, const Tensor& dy,
                         const Tensor& gamma, const Tensor& beta, const Tensor& batchMean,
                         const Tensor& batchVariance, float eps, ActivationKind activation,
                         Tensor& dx, Tensor& dgamma, Tensor& dbeta) override {
    cpu::batchNormBackward(x, dy, gamma, beta, batchMean, batchVariance, eps,
                           activation == ActivationKind::RELU, dx, dgamma, dbeta);
  }
  void lrnForward(const LrnParams& p, const Tensor& x, Tensor& y, bool training,
                  Tensor& workspace) override;
  void lrnBackward(const LrnParams& p, const Tensor& x, const Tensor& dy, Tensor& dx,
                   const Tensor& workspace) override;

 private:
  // An inference-mode LRN on oneDNN's JIT kernel, where it has one for the shape (then faster
  // than the loops below); false, having done nothing, where it has only its reference kernel.
  bool lrnInferenceOnDnnl(const LrnParams& p, const Tensor& x, Tensor& y);

  CpuBackend& core_;
};

}  // namespace

using namespace onednn;  // NOLINT(google-build-using-namespace)

namespace {

// The channels [first, last] of the window centred on c.
struct ChannelWindow {
  int64_t first, last;
  ChannelWindow(int64_t c, int64_t channels, int64_t depth)
      : first(std::max<int64_t>(0, c - depth / 2)),
        last(std::min<int64_t>(channels - 1, c + depth / 2)) {}
};

// acc = sum over the window's planes of x^2; `image` is the first plane of the example.
void windowSumOfSquares(const float* image, const ChannelWindow& w, int64_t area, float* acc) {
  std::fill(acc, acc + area, 0.0f);
  for (int64_t j = w.first; j <= w.last; ++j) {
    const float* plane = image + j * area;
    for (int64_t i = 0; i < area; ++i) acc[i] += plane[i] * plane[i];
  }
}

// u^-beta; DL4J's default beta = 0.75 as 1 / (sqrt(u) sqrt(sqrt(u))), which vectorises (pow does
// not) and differs from pow by an ulp or two.
inline float scaleOf(float u, float beta, bool threeQuarters) {
  if (threeQuarters) {
    const float r = std::sqrt(u);
    return 1.0f / (r * std::sqrt(r));
  }
  return std::pow(u, -beta);
}

// Training: y = x scale, scale and scale / u into their workspace planes; `scaleOverU` holds the
// window sum on entry.
void forwardPlaneTraining(const float* x, float* y, float* scale, float* scaleOverU, int64_t area,
                          const LrnParams& p, bool threeQuarters) {
  for (int64_t i = 0; i < area; ++i) {
    const float u = p.k + p.alpha * scaleOverU[i];
    const float s = scaleOf(u, p.beta, threeQuarters);
    y[i] = x[i] * s;
    scale[i] = s;
    scaleOverU[i] = s / u;
  }
}

// Inference: y = x scale; `y` holds the window sum on entry.
void forwardPlaneInference(const float* x, float* y, int64_t area, const LrnParams& p,
                           bool threeQuarters) {
  for (int64_t i = 0; i < area; ++i)
    y[i] = x[i] * scaleOf(p.k + p.alpha * y[i], p.beta, threeQuarters);
}

// dx of channel c: first the window sum of x dy scale / u, then dy scale - 2 alpha beta x (that
// sum). The pointers are those of the example's first plane.
void backwardPlane(const float* x, const float* dy, const float* scale, const float* scaleOverU,
                   const ChannelWindow& w, int64_t c, int64_t area, float twoAlphaBeta, float* dx) {
  std::fill(dx, dx + area, 0.0f);
  for (int64_t j = w.first; j <= w.last; ++j) {
    const int64_t at = j * area;
    for (int64_t i = 0; i < area; ++i) dx[i] += x[at + i] * dy[at + i] * scaleOverU[at + i];
  }
  const int64_t at = c * area;
  for (int64_t i = 0; i < area; ++i)
    dx[i] = dy[at + i] * scale[at + i] - twoAlphaBeta * x[at + i] * dx[i];
}

}  // namespace

void CpuNormalization::lrnForward(const LrnParams& p, const Tensor& x, Tensor& y, bool training,
                                  Tensor& workspace) {
  if (!training && lrnInferenceOnDnnl(p, x, y)) return;
  const int64_t channels = x.dim(1), area = x.dim(2) * x.dim(3), total = x.numel();
  if (training && workspace.numel() < 2 * total) workspace = Tensor(Shape{2 * total});
  const float* in = x.data();
  float* out = y.data();
  float* scales = training ? workspace.data() : nullptr;
  const bool threeQuarters = p.beta == 0.75f;
  parallelFor(x.dim(0) * channels, [=](int64_t plane) {
    const int64_t c = plane % channels, offset = plane * area;
    const float* image = in + (plane - c) * area;
    const ChannelWindow window(c, channels, p.depth);
    if (scales != nullptr) {
      float* scaleOverU = scales + total + offset;
      windowSumOfSquares(image, window, area, scaleOverU);
      forwardPlaneTraining(in + offset, out + offset, scales + offset, scaleOverU, area, p,
                           threeQuarters);
    } else {
      windowSumOfSquares(image, window, area, out + offset);
      forwardPlaneInference(in + offset, out + offset, area, p, threeQuarters);
    }
  });
}

void CpuNormalization::lrnBackward(const LrnParams& p, const Tensor& x, const Tensor& dy,
                                   Tensor& dx, const Tensor& workspace) {
  const int64_t channels = x.dim(1), area = x.dim(2) * x.dim(3), total = x.numel();
  if (workspace.numel() < 2 * total)
    throw BackendError(
        "lrnBackward: needs the workspace of a training-mode lrnForward with the same shapes; "
        "run forward(training=true) first");
  const float* in = x.data();
  const float* gradOut = dy.data();
  const float* scale = workspace.data();
  const float* scaleOverU = workspace.data() + total;
  float* gradIn = dx.data();
  const float twoAlphaBeta = 2.0f * p.alpha * p.beta;
  parallelFor(x.dim(0) * channels, [=](int64_t plane) {
    const int64_t c = plane % channels, first = (plane - c) * area;
    backwardPlane(in + first, gradOut + first, scale + first, scaleOverU + first,
                  ChannelWindow(c, channels, p.depth), c, area, twoAlphaBeta,
                  gradIn + plane * area);
  });
}

// --- Local response normalisation in inference (the loops above do the rest)
// ----------------------

bool CpuNormalization::lrnInferenceOnDnnl(const LrnParams& p, const Tensor& x, Tensor& y) {
  PrimitiveKey key("lrn_inference");
  key.add(p.depth)
      .add(std::bit_cast<int32_t>(p.k))
      .add(std::bit_cast<int32_t>(p.alpha))
      .add(std::bit_cast<int32_t>(p.beta));
  addShape(key, x.shape());
  CachedPrimitive& e = core_.cache().get(key, [&] {
    const auto md = plainDesc(x.shape());
    bool jit = false;
    CachedPrimitive entry = makeEntry<dnnl::lrn_forward::primitive_desc, dnnl::lrn_forward>(
        "lrn forward",
        [&] {
          // oneDNN divides alpha by the window size, DL4J does not.
          const dnnl::lrn_forward::desc desc(prop_kind::forward_inference,
                                             algorithm::lrn_across_channels, md, p.depth,
                                             p.alpha * static_cast<float>(p.depth), p.beta, p.k);
          dnnl::lrn_forward::primitive_desc pd(desc, core_.engine());
          jit = std::string_view(pd.impl_info_str()).find("ref") == std::string_view::npos;
          return pd;
        },
        core_.engine(), {{DNNL_ARG_SRC, md}, {DNNL_ARG_DST, md}});
    return jit ? std::move(entry) : CachedPrimitive{};  // an empty entry: the loops, every time
  });
  if (!e.primitive) return false;
  core_.execute(e, {x.data(), y.data()});
  return true;
}

std::unique_ptr<NormalizationImpl> makeCpuNormalization(CpuBackend& core) {
  return std::make_unique<CpuNormalization>(core);
}

}  // namespace dl4cpp::cpu
