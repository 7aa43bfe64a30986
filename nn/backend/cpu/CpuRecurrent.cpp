// The CPU recurrent family (RecurrentOps.h): a step loop over time-major copies of the sequences,
// whose products are dnnl_sgemm calls. The input products of every step run as one GEMM over all
// steps before the loop (and the weight gradients as one GEMM after it); only the recurrent
// product h_{t-1} RW is inside the loop. oneDNN's lstm_forward/lstm_backward primitives fit none
// of what DL4J's LSTM allows besides the plain case (masks that reset the state, gate activations
// other than sigmoid, cell activations other than tanh), so this one path runs for every case.
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nn/backend/MaskedPooling.h"
#include "nn/backend/RecurrentCell.h"
#include "nn/backend/RecurrentShapes.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/VectorMath.h"

namespace dl4cpp::cpu {

namespace {

using detail::RecurrentDims;

// Row-major c[m, n] = op(a) op(b) + beta c.
void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == 0)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  const dnnl_status_t s = dnnl_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  if (s != dnnl_success)
    throw DnnlError("recurrent op: dnnl_sgemm failed with status " +
                    std::to_string(static_cast<int>(s)));
}

// dst[t][n][c] = src[n][c][t]
void toTimeMajor(const float* src, float* dst, int64_t n, int64_t c, int64_t t) {
  for (int64_t e = 0; e < n; ++e)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t s = 0; s < t; ++s) dst[(s * n + e) * c + k] = src[(e * c + k) * t + s];
}

// dst[n][c][t] = src[t][n][c]
void fromTimeMajor(const float* src, float* dst, int64_t n, int64_t c, int64_t t) {
  for (int64_t e = 0; e < n; ++e)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t s = 0; s < t; ++s) dst[(e * c + k) * t + s] = src[(s * n + e) * c + k];
}

class CpuRecurrent final : public RecurrentImpl {
 public:
  void lstmForward(const Tensor& x, const Tensor& w, const Tensor& rw, const Tensor& b,
                   const Tensor& mask, const RecurrentActivations& act, Tensor& y, Tensor& ws,
                   RecurrentState* state) override {
    const RecurrentDims d = detail::recurrentForwardDims(x, w, rw, b, y, ws, 4, "lstmForward");
    detail::checkRecurrentActivation(act.activation, "lstmForward");
    detail::checkRecurrentActivation(act.gate, "lstmForward");
    const float* m = detail::recurrentMaskData(mask, d.n, d.t, "lstmForward");
    float* xT = ws.data();
    float* gates = xT + d.t * d.n * d.nIn;
    float* hs = gates + d.t * d.n * d.g;
    float* cs = hs + d.t * d.n * d.h;  // the cell state before the mask
    float* h0 = cs + d.t * d.n * d.h;
    float* c0 = h0 + d.n * d.h;
    const bool init = loadState(state ? &state->h : nullptr, h0, d, "lstmForward");
    loadState(state ? &state->c : nullptr, c0, d, "lstmForward");
    toTimeMajor(x.data(), xT, d.n, d.nIn, d.t);
    inputProducts(d, xT, w, b, gates);
    const int64_t H = d.h;
    loadPeepholes(d, rw);
    cp_.resize(static_cast<size_t>(H));
    for (int64_t s = 0; s < d.t; ++s) {
      float* z = gates + s * d.n * d.g;
      if (s > 0)
        gemm('N', 'N', d.n, d.g, H, hs + (s - 1) * d.n * H, H, rw.data(), d.ldRW, 1.0f, z, d.g);
      else if (init)
        gemm('N', 'N', d.n, d.g, H, h0, H, rw.data(), d.ldRW, 1.0f, z, d.g);
      for (int64_t e = 0; e < d.n; ++e) {
        float* ze = z + e * d.g;
        float* c = cs + (s * d.n + e) * H;
        float* h = hs + (s * d.n + e) * H;
        const float keep = m ? m[e * d.t + s] : 1.0f;
        const float prevKeep = s > 0 && m ? m[e * d.t + s - 1] : 1.0f;
        const float* cPrev = s > 0 ? cs + ((s - 1) * d.n + e) * H : c0 + e * H;
        float* cp = cp_.data();
        for (int64_t j = 0; j < H; ++j) cp[j] = prevKeep * cPrev[j];
        float* a = ze;
        float* f = ze + H;
        float* o = ze + 2 * H;
        float* i = ze + 3 * H;
        activateInPlace(act.activation, a, H);
        if (d.peepholes()) {
          for (int64_t j = 0; j < H; ++j) {
            f[j] += peepF_[static_cast<size_t>(j)] * cp[j];
            i[j] += peepI_[static_cast<size_t>(j)] * cp[j];
          }
          activateInPlace(act.gate, f, H);
          activateInPlace(act.gate, i, H);
        } else {
          activateInPlace(act.gate, f, 3 * H);  // f, o and i
        }
        for (int64_t j = 0; j < H; ++j) c[j] = f[j] * cp[j] + i[j] * a[j];
        if (d.peepholes()) {  // the output gate sees c_t
          for (int64_t j = 0; j < H; ++j) o[j] += peepO_[static_cast<size_t>(j)] * c[j];
          activateInPlace(act.gate, o, H);
        }
        std::copy(c, c + H, h);
        activateInPlace(act.activation, h, H);
        for (int64_t j = 0; j < H; ++j) h[j] = keep * o[j] * h[j];
      }
    }
    fromTimeMajor(hs, y.data(), d.n, H, d.t);
    if (state && d.t > 0) {
      state->h = lastState(hs, nullptr, d);
      state->c = lastState(cs, m, d);
    }
  }

  void lstmBackward(const Tensor& w, const Tensor& rw, const Tensor& mask,
                    const RecurrentActivations& act, const Tensor& ws, const Tensor& dy, Tensor& dw,
                    Tensor& drw, Tensor& db, Tensor* dx, int64_t backwardSteps) override {
    const RecurrentDims d =
        detail::recurrentBackwardDims(w, rw, ws, dy, dw, drw, db, dx, 4, "lstmBackward");
    const float* m = detail::recurrentMaskData(mask, d.n, d.t, "lstmBackward");
    const float* xT = ws.data();
    const float* gates = xT + d.t * d.n * d.nIn;
    const float* hs = gates + d.t * d.n * d.g;
    const float* cs = hs + d.t * d.n * d.h;
    const float* h0 = cs + d.t * d.n * d.h;
    const float* c0 = h0 + d.n * d.h;
    const int64_t H = d.h;
    prepareBackward(d, dy);
    dPeep_.assign(static_cast<size_t>(3 * H), 0.0f);  // d wFF, d wOO, d wGG
    loadPeepholes(d, rw);
    for (int64_t s = d.t; s-- > detail::firstBackwardStep(d, backwardSteps);) {
      recurrentGradient(d, rw, s);
      const float* z = gates + s * d.n * d.g;
      float* dz = dz_.data() + s * d.n * d.g;
      for (int64_t e = 0; e < d.n; ++e) {
        const float* ze = z + e * d.g;
        float* dze = dz + e * d.g;
        float* dc = dc_.data() + e * H;
        const float* dh = dh_.data() + e * H;
        if (m && m[e * d.t + s] == 0.0f) {
          std::fill(dze, dze + d.g, 0.0f);
          std::fill(dc, dc + H, 0.0f);
          continue;
        }
        const float* c = cs + (s * d.n + e) * H;
        const float prevKeep = s > 0 && m ? m[e * d.t + s - 1] : 1.0f;
        const float* cPrev = s > 0 ? cs + ((s - 1) * d.n + e) * H : c0 + e * H;
        float* tcs = tc_.data();
        std::copy(c, c + H, tcs);
        activateInPlace(act.activation, tcs, H);
        for (int64_t j = 0; j < H; ++j) {
          const LstmUnitGradient u = lstmUnitBackward(
              act.activation, act.gate, ze[j], ze[H + j], ze[2 * H + j], ze[3 * H + j], tcs[j],
              prevKeep * cPrev[j], dh[j], dc[j], peepF_[static_cast<size_t>(j)],
              peepO_[static_cast<size_t>(j)], peepI_[static_cast<size_t>(j)]);
          dze[j] = u.a;
          dze[H + j] = u.f;
          dze[2 * H + j] = u.o;
          dze[3 * H + j] = u.i;
          dc[j] = u.cPrev;
          if (d.peepholes()) {
            const float cp = prevKeep * cPrev[j];
            dPeep_[static_cast<size_t>(j)] += u.f * cp;
            dPeep_[static_cast<size_t>(H + j)] += u.o * c[j];
            dPeep_[static_cast<size_t>(2 * H + j)] += u.i * cp;
          }
        }
      }
    }
    finishBackward(d, xT, hs, h0, w, dw, drw, db, dx);
    if (d.peepholes())
      for (int64_t j = 0; j < H; ++j)
        for (int64_t k = 0; k < 3; ++k)
          drw.data()[j * d.ldRW + d.g + k] = dPeep_[static_cast<size_t>(k * H + j)];
  }

  void simpleRnnForward(const Tensor& x, const Tensor& w, const Tensor& rw, const Tensor& b,
                        const Tensor& mask, ActivationKind act, Tensor& y, Tensor& ws,
                        RecurrentState* state) override {
    const RecurrentDims d = detail::recurrentForwardDims(x, w, rw, b, y, ws, 1, "simpleRnnForward");
    detail::checkRecurrentActivation(act, "simpleRnnForward");
    const float* m = detail::recurrentMaskData(mask, d.n, d.t, "simpleRnnForward");
    float* xT = ws.data();
    float* zs = xT + d.t * d.n * d.nIn;  // the activation's output, before the mask
    float* hs = zs + d.t * d.n * d.h;
    float* h0 = hs + d.t * d.n * d.h;
    const bool init = loadState(state ? &state->h : nullptr, h0, d, "simpleRnnForward");
    toTimeMajor(x.data(), xT, d.n, d.nIn, d.t);
    inputProducts(d, xT, w, b, zs);
    const int64_t H = d.h;
    for (int64_t s = 0; s < d.t; ++s) {
      float* z = zs + s * d.n * H;
      if (s > 0)
        gemm('N', 'N', d.n, H, H, hs + (s - 1) * d.n * H, H, rw.data(), H, 1.0f, z, H);
      else if (init)
        gemm('N', 'N', d.n, H, H, h0, H, rw.data(), H, 1.0f, z, H);
      for (int64_t e = 0; e < d.n; ++e) {
        const float keep = m ? m[e * d.t + s] : 1.0f;
        float* ze = z + e * H;
        float* h = hs + (s * d.n + e) * H;
        activateInPlace(act, ze, H);
        for (int64_t j = 0; j < H; ++j) h[j] = keep * ze[j];
      }
    }
    fromTimeMajor(hs, y.data(), d.n, H, d.t);
    if (state && d.t > 0) state->h = lastState(hs, nullptr, d);
  }

  void simpleRnnBackward(const Tensor& w, const Tensor& rw, const Tensor& mask, ActivationKind act,
                         const Tensor& ws, const Tensor& dy, Tensor& dw, Tensor& drw, Tensor& db,
                         Tensor* dx, int64_t backwardSteps) override {
    const RecurrentDims d =
        detail::recurrentBackwardDims(w, rw, ws, dy, dw, drw, db, dx, 1, "simpleRnnBackward");
    const float* m = detail::recurrentMaskData(mask, d.n, d.t, "simpleRnnBackward");
    const float* xT = ws.data();
    const float* zs = xT + d.t * d.n * d.nIn;
    const float* hs = zs + d.t * d.n * d.h;
    const float* h0 = hs + d.t * d.n * d.h;
    const int64_t H = d.h;
    prepareBackward(d, dy);
    for (int64_t s = d.t; s-- > detail::firstBackwardStep(d, backwardSteps);) {
      recurrentGradient(d, rw, s);
      for (int64_t e = 0; e < d.n; ++e) {
        const float keep = m ? m[e * d.t + s] : 1.0f;
        const float* ze = zs + (s * d.n + e) * H;
        const float* dh = dh_.data() + e * H;
        float* dze = dz_.data() + (s * d.n + e) * H;
        for (int64_t j = 0; j < H; ++j) dze[j] = keep * dh[j] * recurrentDerivative(act, ze[j]);
      }
    }
    finishBackward(d, xT, hs, h0, w, dw, drw, db, dx);
  }

  void gatherSteps(const Tensor& x, const Tensor& mask, Tensor& rows) override {
    const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
    const float* m = detail::recurrentMaskData(mask, n, t, "gatherSteps");
    const int64_t r = detail::countRealSteps(m, n, t);
    detail::checkStepRows(rows, r, c, "gatherSteps");
    const float* src = x.data();
    float* dst = rows.data();
    for (int64_t e = 0; e < n; ++e)
      for (int64_t s = 0; s < t; ++s) {
        if (m && m[e * t + s] == 0.0f) continue;
        for (int64_t k = 0; k < c; ++k) dst[k] = src[(e * c + k) * t + s];
        dst += c;
      }
  }

  void scatterSteps(const Tensor& rows, const Tensor& mask, Tensor& y) override {
    const int64_t n = y.dim(0), c = y.dim(1), t = y.dim(2);
    const float* m = detail::recurrentMaskData(mask, n, t, "scatterSteps");
    const int64_t r = detail::countRealSteps(m, n, t);
    detail::checkStepRows(rows, r, c, "scatterSteps");
    const float* src = rows.data();
    float* dst = y.data();
    for (int64_t e = 0; e < n; ++e)
      for (int64_t s = 0; s < t; ++s) {
        const bool real = !m || m[e * t + s] != 0.0f;
        for (int64_t k = 0; k < c; ++k) dst[(e * c + k) * t + s] = real ? src[k] : 0.0f;
        if (real) src += c;
      }
  }

  void reverseSteps(const Tensor& x, const Tensor& mask, Tensor& y) override {
    const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
    const float* m = detail::recurrentMaskData(mask, n, t, "reverseSteps");
    if (x.rank() != 3 || y.shape() != x.shape())
      throw ShapeError("reverseSteps: y " + y.shape().toString() + " for x " +
                       x.shape().toString());
    const float* src = x.data();
    float* dst = y.data();
    from_.resize(static_cast<size_t>(n * t));
    detail::reversedStepSources(m, n, t, from_.data());
    for (int64_t e = 0; e < n; ++e)
      for (int64_t s = 0; s < t; ++s) {
        const int64_t source = from_[static_cast<size_t>(e * t + s)];
        for (int64_t k = 0; k < c; ++k) dst[(e * c + k) * t + s] = src[(e * c + k) * t + source];
      }
  }

  void combineDirections(DirectionCombine mode, const Tensor& yf, const Tensor& yb,
                         Tensor& y) override {
    const int64_t n = yf.dim(0), block = yf.dim(1) * yf.dim(2);
    detail::checkDirections(mode, yf, yb, y, "combineDirections");
    const float *f = yf.data(), *b = yb.data();
    float* out = y.data();
    for (int64_t e = 0; e < n; ++e) {
      const float* fe = f + e * block;
      const float* be = b + e * block;
      if (mode == DirectionCombine::CONCAT) {
        std::copy(fe, fe + block, out + e * 2 * block);
        std::copy(be, be + block, out + e * 2 * block + block);
        continue;
      }
      float* oe = out + e * block;
      for (int64_t i = 0; i < block; ++i) oe[i] = combineDirectionElement(mode, fe[i], be[i]);
    }
  }

  void combineDirectionsBackward(DirectionCombine mode, const Tensor& yf, const Tensor& yb,
                                 const Tensor& dy, Tensor& dyf, Tensor& dyb) override {
    const int64_t n = yf.dim(0), block = yf.dim(1) * yf.dim(2);
    detail::checkDirections(mode, yf, yb, dy, "combineDirectionsBackward");
    if (dyf.shape() != yf.shape() || dyb.shape() != yf.shape())
      throw ShapeError("combineDirectionsBackward: gradients " + dyf.shape().toString() + ", " +
                       dyb.shape().toString() + " for outputs " + yf.shape().toString());
    const float *f = yf.data(), *b = yb.data(), *g = dy.data();
    float *df = dyf.data(), *db = dyb.data();
    for (int64_t e = 0; e < n; ++e) {
      const int64_t o = e * block;
      if (mode == DirectionCombine::CONCAT) {
        const float* ge = g + 2 * o;
        std::copy(ge, ge + block, df + o);
        std::copy(ge + block, ge + 2 * block, db + o);
        continue;
      }
      for (int64_t i = o; i < o + block; ++i) {
        const DirectionGradient d = combineDirectionGradient(mode, f[i], b[i], g[i]);
        df[i] = d.f;
        db[i] = d.b;
      }
    }
  }

  void maskOfValue(const Tensor& x, float value, Tensor& mask) override {
    const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
    if (x.rank() != 3 || !mask.onHost() || mask.shape() != Shape{n, t})
      throw ShapeError("maskOfValue: mask " + mask.shape().toString() + " for sequences " +
                       x.shape().toString() + " (a host tensor [N, T])");
    const float* src = x.data();
    float* m = mask.data();
    for (int64_t e = 0; e < n; ++e)
      for (int64_t s = 0; s < t; ++s) {
        float real = 0.0f;
        for (int64_t k = 0; k < c && real == 0.0f; ++k)
          real = src[(e * c + k) * t + s] != value ? 1.0f : 0.0f;
        m[e * t + s] = real;
      }
  }

  void maskSteps(const Tensor& x, const Tensor& mask, Tensor& y) override {
    const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
    const float* m = detail::recurrentMaskData(mask, n, t, "maskSteps");
    if (x.rank() != 3 || y.shape() != x.shape())
      throw ShapeError("maskSteps: y " + y.shape().toString() + " for x " + x.shape().toString());
    const float* src = x.data();
    float* dst = y.data();
    for (int64_t e = 0; e < n; ++e)
      for (int64_t k = 0; k < c; ++k)
        for (int64_t s = 0; s < t; ++s) {
          const int64_t i = (e * c + k) * t + s;
          dst[i] = !m || m[e * t + s] != 0.0f ? src[i] : 0.0f;
        }
  }

  void maskedPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& mask,
                            Tensor& y) override {
    detail::checkMaskedPooling(x, y, "maskedPoolingForward");
    const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
    const float* m = detail::recurrentMaskData(mask, n, t, "maskedPoolingForward");
    for (int64_t e = 0; e < n; ++e)
      for (int64_t k = 0; k < c; ++k)
        y.data()[e * c + k] =
            maskedPoolRow(kind, pnorm, x.data() + (e * c + k) * t, m ? m + e * t : nullptr, t);
  }

  void maskedPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& mask,
                             const Tensor& y, const Tensor& dy, Tensor& dx) override {
    detail::checkMaskedPooling(x, y, "maskedPoolingBackward");
    const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
    const float* m = detail::recurrentMaskData(mask, n, t, "maskedPoolingBackward");
    for (int64_t e = 0; e < n; ++e)
      for (int64_t k = 0; k < c; ++k) {
        const int64_t row = e * c + k;
        maskedPoolRowBackward(kind, pnorm, x.data() + row * t, m ? m + e * t : nullptr, t,
                              y.data()[row], dy.data()[row], dx.data() + row * t);
      }
  }

 private:
  // Copies the initial state `from` ((N, H) host, or empty or null for zero) into the workspace's
  // `to`; whether it was given.
  static bool loadState(const Tensor* from, float* to, const RecurrentDims& d, const char* op) {
    if (from == nullptr || !detail::checkInitialState(*from, d, op)) {
      std::fill(to, to + d.n * d.h, 0.0f);
      return false;
    }
    std::copy(from->data(), from->data() + d.n * d.h, to);
    return true;
  }

  // The state after the last step, (N, H), from a time-major (T, N, H) record: times that step's
  // mask when `keepMask` is given (the cell state, recorded before the mask).
  static Tensor lastState(const float* record, const float* keepMask, const RecurrentDims& d) {
    Tensor out(Shape{d.n, d.h}, Device::cpu());
    const float* last = record + (d.t - 1) * d.n * d.h;
    float* dst = out.data();
    for (int64_t e = 0; e < d.n; ++e) {
      const float keep = keepMask ? keepMask[e * d.t + d.t - 1] : 1.0f;
      for (int64_t j = 0; j < d.h; ++j) dst[e * d.h + j] = keep * last[e * d.h + j];
    }
    return out;
  }

  // gates[T N, g] = xT W + b
  static void inputProducts(const RecurrentDims& d, const float* xT, const Tensor& w,
                            const Tensor& b, float* gates) {
    const int64_t rows = d.t * d.n;
    gemm('N', 'N', rows, d.g, d.nIn, xT, d.nIn, w.data(), d.g, 0.0f, gates, d.g);
    const float* bias = b.data();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < d.g; ++j) gates[r * d.g + j] += bias[j];
  }

  void prepareBackward(const RecurrentDims& d, const Tensor& dy) {
    dyT_.resize(static_cast<size_t>(d.t * d.n * d.h));
    dz_.assign(static_cast<size_t>(d.t * d.n * d.g), 0.0f);
    dh_.assign(static_cast<size_t>(d.n * d.h), 0.0f);
    dc_.assign(static_cast<size_t>(d.n * d.h), 0.0f);
    tc_.resize(static_cast<size_t>(d.h));
    toTimeMajor(dy.data(), dyT_.data(), d.n, d.h, d.t);
  }

  // dh_ = dy_s + dz_{s+1} RW^T: the gradient reaching h_s.
  void recurrentGradient(const RecurrentDims& d, const Tensor& rw, int64_t s) {
    const float* dys = dyT_.data() + s * d.n * d.h;
    std::copy(dys, dys + d.n * d.h, dh_.begin());
    if (s + 1 < d.t)
      gemm('N', 'T', d.n, d.h, d.g, dz_.data() + (s + 1) * d.n * d.g, d.g, rw.data(), d.ldRW, 1.0f,
           dh_.data(), d.h);
  }

  // The products over all steps at once, from dz_.
  void finishBackward(const RecurrentDims& d, const float* xT, const float* hs, const float* h0,
                      const Tensor& w, Tensor& dw, Tensor& drw, Tensor& db, Tensor* dx) {
    const int64_t rows = d.t * d.n;
    gemm('T', 'N', d.nIn, d.g, rows, xT, d.nIn, dz_.data(), d.g, 0.0f, dw.data(), d.g);
    // dRW = sum over s >= 1 of h_{s-1}^T dz_s: the rows of h shifted by one step against dz.
    gemm('T', 'N', d.h, d.g, rows - d.n, hs, d.h, dz_.data() + d.n * d.g, d.g, 0.0f, drw.data(),
         d.ldRW);
    // and h_{-1}^T dz_0, the initial state's share (0 when it is zero).
    gemm('T', 'N', d.h, d.g, d.n, h0, d.h, dz_.data(), d.g, 1.0f, drw.data(), d.ldRW);
    float* dbias = db.data();
    std::fill(dbias, dbias + d.g, 0.0f);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < d.g; ++j) dbias[j] += dz_[static_cast<size_t>(r * d.g + j)];
    if (dx) {
      dxT_.resize(static_cast<size_t>(rows * d.nIn));
      gemm('N', 'T', rows, d.nIn, d.g, dz_.data(), d.g, w.data(), d.g, 0.0f, dxT_.data(), d.nIn);
      fromTimeMajor(dxT_.data(), dx->data(), d.n, d.nIn, d.t);
    }
  }

  // The peephole weights of every unit into peepF_, peepO_, peepI_ (GravesLSTM: RW's columns 4H,
  // 4H + 1, 4H + 2 are DL4J's wFF, wOO, wGG, for the forget, output and input gates), or zeros
  // without them.
  void loadPeepholes(const RecurrentDims& d, const Tensor& rw) {
    const auto h = static_cast<size_t>(d.h);
    peepF_.assign(h, 0.0f);
    peepO_.assign(h, 0.0f);
    peepI_.assign(h, 0.0f);
    if (!d.peepholes()) return;
    for (size_t j = 0; j < h; ++j) {
      const float* row = rw.data() + static_cast<int64_t>(j) * d.ldRW + d.g;
      peepF_[j] = row[0];
      peepO_[j] = row[1];
      peepI_[j] = row[2];
    }
  }

  std::vector<float> dyT_, dz_, dh_, dc_, dxT_, dPeep_;
  std::vector<float> tc_;  // act(c_s) of one example, recomputed in the backward pass
  std::vector<float> cp_;  // the masked c_{t-1} of one example, in the forward pass
  std::vector<float> peepF_, peepO_, peepI_;
  std::vector<int32_t> from_;  // reverseSteps' source step of every step
};

}  // namespace

std::unique_ptr<RecurrentImpl> makeCpuRecurrent(CpuBackend& core) {
  (void)core;
  return std::make_unique<CpuRecurrent>();
}

}  // namespace dl4cpp::cpu
