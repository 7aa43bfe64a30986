// Local response normalisation across channels on the CPU (LrnParams: DL4J's definition), plain
// loops over the (n, c) planes split across the OpenMP threads, except in inference where oneDNN
// has a JIT kernel for the shape (CpuBackend::lrnInferenceOnDnnl; faster there). oneDNN's backward
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
#include <cmath>

#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/ParallelFor.h"

namespace dl4cpp::cpu {

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

void CpuBackend::lrnForward(const LrnParams& p, const Tensor& x, Tensor& y, bool training,
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

void CpuBackend::lrnBackward(const LrnParams& p, const Tensor& x, const Tensor& dy, Tensor& dx,
                             const Tensor& workspace) {
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

}  // namespace dl4cpp::cpu
