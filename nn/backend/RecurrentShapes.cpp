#include "nn/backend/RecurrentShapes.h"

#include <algorithm>
#include <string>

#include "nn/core/Error.h"

namespace dl4cpp::detail {

namespace {

// RW's width: gates H, or for the LSTM 4H + 3 with the peephole columns.
bool recurrentWidthFits(const Tensor& rw, const Tensor& w, int gates) {
  return rw.dim(1) == w.dim(1) || (gates == 4 && rw.dim(1) == w.dim(1) + 3);
}

}  // namespace

void checkRecurrentActivation(ActivationKind kind, const char* op) {
  if (!recurrentActivationSupported(kind))
    throw BackendError(std::string(op) + ": activation " + std::to_string(static_cast<int>(kind)) +
                       " is not one a recurrent op takes (recurrentActivationSupported)");
}

RecurrentDims recurrentForwardDims(const Tensor& x, const Tensor& w, const Tensor& rw,
                                   const Tensor& b, const Tensor& y, const Tensor& ws, int gates,
                                   const char* op) {
  if (x.rank() != 3 || w.rank() != 2 || w.dim(0) != x.dim(1) || rw.rank() != 2 ||
      w.dim(1) != gates * rw.dim(0) || !recurrentWidthFits(rw, w, gates) || b.numel() != w.dim(1))
    throw ShapeError(std::string(op) + ": x " + x.shape().toString() + ", W " +
                     w.shape().toString() + ", RW " + rw.shape().toString() + ", b " +
                     b.shape().toString() + " do not fit together");
  const RecurrentDims d{x.dim(0), x.dim(1), x.dim(2), rw.dim(0), w.dim(1), rw.dim(1)};
  if (y.shape() != Shape{d.n, d.h, d.t} ||
      ws.numel() < recurrentWorkspaceFloats(d.n, d.t, d.nIn, d.h, gates))
    throw ShapeError(std::string(op) + ": y " + y.shape().toString() + " or workspace " +
                     ws.shape().toString() + " too small for x " + x.shape().toString());
  return d;
}

RecurrentDims recurrentBackwardDims(const Tensor& w, const Tensor& rw, const Tensor& ws,
                                    const Tensor& dy, const Tensor& dw, const Tensor& drw,
                                    const Tensor& db, const Tensor* dx, int gates, const char* op) {
  const RecurrentDims d{dy.dim(0), w.dim(0), dy.dim(2), rw.dim(0), w.dim(1), rw.dim(1)};
  if (dy.rank() != 3 || dy.dim(1) != d.h || w.dim(1) != gates * d.h ||
      !recurrentWidthFits(rw, w, gates) || dw.shape() != w.shape() || drw.shape() != rw.shape() ||
      db.numel() != d.g || ws.numel() < recurrentWorkspaceFloats(d.n, d.t, d.nIn, d.h, gates) ||
      (dx && dx->shape() != Shape{d.n, d.nIn, d.t}))
    throw ShapeError(std::string(op) + ": dy " + dy.shape().toString() + ", W " +
                     w.shape().toString() + " and the gradients do not fit together");
  return d;
}

const float* recurrentMaskData(const Tensor& mask, int64_t n, int64_t t, const char* op) {
  if (mask.empty()) return nullptr;
  if (!mask.onHost() || mask.rank() != 2 || mask.dim(0) != n || mask.dim(1) != t)
    throw ShapeError(std::string(op) + ": mask " + mask.shape().toString() +
                     " is not a host tensor [" + std::to_string(n) + ", " + std::to_string(t) +
                     "]");
  return mask.data();
}

int64_t countRealSteps(const float* mask, int64_t n, int64_t t) {
  if (!mask) return n * t;
  return std::count_if(mask, mask + n * t, [](float m) { return m != 0.0f; });
}

void checkStepRows(const Tensor& rows, int64_t realSteps, int64_t features, const char* op) {
  if (rows.rank() != 2 || rows.dim(0) != realSteps || rows.dim(1) != features)
    throw ShapeError(std::string(op) + ": rows " + rows.shape().toString() + " for " +
                     std::to_string(realSteps) + " steps of " + std::to_string(features) +
                     " features");
}

void checkDirections(DirectionCombine mode, const Tensor& yf, const Tensor& yb, const Tensor& y,
                     const char* op) {
  const Shape combined =
      mode == DirectionCombine::CONCAT ? Shape{yf.dim(0), 2 * yf.dim(1), yf.dim(2)} : yf.shape();
  if (yf.rank() != 3 || yb.shape() != yf.shape() || y.shape() != combined)
    throw ShapeError(std::string(op) + ": yf " + yf.shape().toString() + ", yb " +
                     yb.shape().toString() + " and " + y.shape().toString() +
                     " do not fit together");
}

void checkMaskedPooling(const Tensor& x, const Tensor& y, const char* op) {
  if (x.rank() != 3 || y.numel() != x.dim(0) * x.dim(1))
    throw ShapeError(std::string(op) + ": pooled " + y.shape().toString() + " for sequences " +
                     x.shape().toString() + " (expected [N, C] for [N, C, T])");
}

bool checkInitialState(const Tensor& from, const RecurrentDims& d, const char* op) {
  if (from.empty()) return false;
  if (!from.onHost() || from.shape() != Shape{d.n, d.h})
    throw ShapeError(std::string(op) + ": the initial state " + from.shape().toString() +
                     " does not match [" + std::to_string(d.n) + ", " + std::to_string(d.h) +
                     "] (examples, hidden units)");
  return true;
}

int64_t firstBackwardStep(const RecurrentDims& d, int64_t backwardSteps) {
  return backwardSteps > 0 ? std::max<int64_t>(0, d.t - backwardSteps) : 0;
}

void reversedStepSources(const float* mask, int64_t n, int64_t t, int32_t* from) {
  for (int64_t e = 0; e < n; ++e) {
    // The span of real steps [first, last]; first > last without any.
    int64_t first = 0, last = t - 1;
    if (mask) {
      while (first < t && mask[e * t + first] == 0.0f) ++first;
      while (last >= 0 && mask[e * t + last] == 0.0f) --last;
    }
    for (int64_t s = 0; s < t; ++s)
      from[e * t + s] = static_cast<int32_t>(s >= first && s <= last ? first + last - s : s);
  }
}

}  // namespace dl4cpp::detail
