// The CUDA backend's recurrent family (ops/RecurrentOps.h), on the CPU backend's plan
// (cpu/CpuRecurrent.cpp) and workspace layout: the sequences copied time-major, the input
// products of every step as one cuBLAS GEMM before the loop over time, inside it one GEMM
// (h_{t-1} RW) and one cell kernel per step (a thread per example and unit), and the weight
// gradients as GEMMs over all steps after the backward loop. Sums are deterministic: a thread owns
// each peephole gradient of its example and unit, and the sums over examples and steps are the
// backend's fixed-order reductions.
//
// Masks and carried states are host tensors (RecurrentOps.h): a call uploads them, and downloads
// the state it carries on. gatherSteps, scatterSteps and reverseSteps compute which step goes where
// on the host from the mask and upload that map; their kernels only copy.
#include <memory>
#include <vector>

#include "nn/backend/MaskedPooling.h"
#include "nn/backend/RecurrentCell.h"
#include "nn/backend/RecurrentShapes.h"
#include "nn/backend/cuda/CudaBackend.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/Launch.h"
#include "nn/backend/cuda/RecurrentMath.h"

namespace dl4cpp::cuda {

namespace {

using detail::RecurrentDims;

// dst[s][e][k] = src[e][k][s] for src (n, c, t).
__global__ void toTimeMajorKernel(const float* src, float* dst, int64_t n, int64_t c, int64_t t) {
  DL4CPP_GRID_STRIDE_LOOP(i, n * c * t) {
    const int64_t k = i % c, row = i / c;
    const int64_t e = row % n, s = row / n;
    dst[i] = src[(e * c + k) * t + s];
  }
}

// dst[e][k][s] = src[s][e][k] for dst (n, c, t).
__global__ void fromTimeMajorKernel(const float* src, float* dst, int64_t n, int64_t c, int64_t t) {
  DL4CPP_GRID_STRIDE_LOOP(i, n * c * t) {
    const int64_t s = i % t, k = (i / t) % c, e = i / (t * c);
    dst[i] = src[(s * n + e) * c + k];
  }
}

// RW's first g columns as a dense (h, g) matrix, and its peephole columns (ldRW == g + 3) as
// three rows of h: wFF, wOO, wGG.
__global__ void splitRecurrentWeightsKernel(const float* rw, int64_t h, int64_t g, int64_t ldRW,
                                            float* dense, float* peepholes) {
  DL4CPP_GRID_STRIDE_LOOP(i, h * ldRW) {
    const int64_t j = i / ldRW, k = i % ldRW;
    if (k < g)
      dense[j * g + k] = rw[i];
    else
      peepholes[(k - g) * h + j] = rw[i];
  }
}

// The inverse for the gradients: dRW's first g columns from the dense (h, g) matrix and its
// peephole columns from three rows of h.
__global__ void joinRecurrentGradientsKernel(const float* dense, const float* peepholes, int64_t h,
                                             int64_t g, int64_t ldRW, float* drw) {
  DL4CPP_GRID_STRIDE_LOOP(i, h * ldRW) {
    const int64_t j = i / ldRW, k = i % ldRW;
    drw[i] = k < g ? dense[j * g + k] : peepholes[(k - g) * h + j];
  }
}

// The mask of example e at step s (1 without a mask).
__device__ inline float keepOf(const float* mask, int64_t e, int64_t s, int64_t t) {
  return mask ? mask[e * t + s] : 1.0f;
}

// One LSTM step s for every example e and unit j: z (n, 4h) holds the step's pre-activations and
// receives its activated gates; c (n, h) the cell state before the mask, h (n, h) the masked
// output; cPrev (n, h) is the previous step's cell state (the initial state at step 0).
// peepholes: null, or three rows of h (wFF, wOO, wGG).
__global__ void lstmCellForwardKernel(float* z, float* c, float* h, const float* cPrev,
                                      const float* peepholes, const float* mask, int64_t s,
                                      int64_t n, int64_t t, int64_t hidden,
                                      ActivationKind activation, ActivationKind gate) {
  DL4CPP_GRID_STRIDE_LOOP(i, n * hidden) {
    const int64_t e = i / hidden, j = i % hidden;
    float* ze = z + e * 4 * hidden;
    const float prevKeep = s > 0 ? keepOf(mask, e, s - 1, t) : 1.0f;
    const float cp = prevKeep * cPrev[i];
    const float pf = peepholes ? peepholes[j] : 0.0f;
    const float po = peepholes ? peepholes[hidden + j] : 0.0f;
    const float pi = peepholes ? peepholes[2 * hidden + j] : 0.0f;
    const LstmUnitState u = lstmUnitForward(activation, gate, ze[j], ze[hidden + j],
                                            ze[2 * hidden + j], ze[3 * hidden + j], cp, pf, po, pi);
    ze[j] = u.a;
    ze[hidden + j] = u.f;
    ze[2 * hidden + j] = u.o;
    ze[3 * hidden + j] = u.i;
    c[i] = u.c;
    h[i] = keepOf(mask, e, s, t) * u.h;
  }
}

// The backward pass of LSTM step s for every example e and unit j: from the activated gates z
// (n, 4h), the cell states c and cPrev (n, h), dh (n, h) reaching h_s and dc (n, h) reaching c_s
// from step s + 1, writes dz (n, 4h) and replaces dc by what reaches c_{s-1}. dPeep (n, 3h), with
// peepholes, accumulates example e's peephole gradients.
__global__ void lstmCellBackwardKernel(const float* z, const float* c, const float* cPrev,
                                       const float* dh, float* dc, float* dz,
                                       const float* peepholes, float* dPeep, const float* mask,
                                       int64_t s, int64_t n, int64_t t, int64_t hidden,
                                       ActivationKind activation, ActivationKind gate) {
  DL4CPP_GRID_STRIDE_LOOP(i, n * hidden) {
    const int64_t e = i / hidden, j = i % hidden;
    const float* ze = z + e * 4 * hidden;
    float* dze = dz + e * 4 * hidden;
    if (keepOf(mask, e, s, t) == 0.0f) {
      dze[j] = dze[hidden + j] = dze[2 * hidden + j] = dze[3 * hidden + j] = 0.0f;
      dc[i] = 0.0f;
      continue;
    }
    const float prevKeep = s > 0 ? keepOf(mask, e, s - 1, t) : 1.0f;
    const float cp = prevKeep * cPrev[i];
    const float pf = peepholes ? peepholes[j] : 0.0f;
    const float po = peepholes ? peepholes[hidden + j] : 0.0f;
    const float pi = peepholes ? peepholes[2 * hidden + j] : 0.0f;
    const LstmUnitGradient g = lstmUnitBackward(
        activation, gate, ze[j], ze[hidden + j], ze[2 * hidden + j], ze[3 * hidden + j],
        cuda::activate(activation, 0.0f, c[i]), cp, dh[i], dc[i], pf, po, pi);
    dze[j] = g.a;
    dze[hidden + j] = g.f;
    dze[2 * hidden + j] = g.o;
    dze[3 * hidden + j] = g.i;
    dc[i] = g.cPrev;
    if (peepholes) {
      float* dp = dPeep + e * 3 * hidden;
      dp[j] += g.f * cp;
      dp[hidden + j] += g.o * c[i];
      dp[2 * hidden + j] += g.i * cp;
    }
  }
}

// One simple RNN step s: z (n, h) receives act(z), h (n, h) its masked copy.
__global__ void rnnCellForwardKernel(float* z, float* h, const float* mask, int64_t s, int64_t n,
                                     int64_t t, int64_t hidden, ActivationKind activation) {
  DL4CPP_GRID_STRIDE_LOOP(i, n * hidden) {
    const float y = cuda::activate(activation, 0.0f, z[i]);
    z[i] = y;
    h[i] = keepOf(mask, i / hidden, s, t) * y;
  }
}

// Its backward pass: dz (n, h) = mask * dh * act'(z) for the activated z.
__global__ void rnnCellBackwardKernel(const float* z, const float* dh, float* dz, const float* mask,
                                      int64_t s, int64_t n, int64_t t, int64_t hidden,
                                      ActivationKind activation) {
  DL4CPP_GRID_STRIDE_LOOP(i, n * hidden) {
    dz[i] = keepOf(mask, i / hidden, s, t) * dh[i] * recurrentDerivative(activation, z[i]);
  }
}

// rows[r][k] = x[e][k][s] for the r-th real step, source[r] = e t + s.
__global__ void gatherStepsKernel(const float* x, const int32_t* source, float* rows, int64_t r,
                                  int64_t c, int64_t t) {
  DL4CPP_GRID_STRIDE_LOOP(i, r * c) {
    const int64_t k = i % c, es = source[i / c];
    const int64_t e = es / t, s = es % t;
    rows[i] = x[(e * c + k) * t + s];
  }
}

// y[e][k][s] = rows[rowOf[e t + s]][k], or 0 where rowOf is -1.
__global__ void scatterStepsKernel(const float* rows, const int32_t* rowOf, float* y, int64_t n,
                                   int64_t c, int64_t t) {
  DL4CPP_GRID_STRIDE_LOOP(i, n * c * t) {
    const int64_t s = i % t, k = (i / t) % c, e = i / (t * c);
    const int32_t r = rowOf[e * t + s];
    y[i] = r < 0 ? 0.0f : rows[static_cast<int64_t>(r) * c + k];
  }
}

// y[e][k][s] = x[e][k][from[e t + s]].
__global__ void reverseStepsKernel(const float* x, const int32_t* from, float* y, int64_t n,
                                   int64_t c, int64_t t) {
  DL4CPP_GRID_STRIDE_LOOP(i, n * c * t) {
    const int64_t s = i % t, e = i / (t * c);
    y[i] = x[i - s + from[e * t + s]];
  }
}

// y = yf (mode) yb for examples of `block` values each (y: 2 block per example for CONCAT).
__global__ void combineDirectionsKernel(DirectionCombine mode, const float* yf, const float* yb,
                                        float* y, int64_t n, int64_t block) {
  DL4CPP_GRID_STRIDE_LOOP(i, n * block) {
    if (mode == DirectionCombine::CONCAT) {
      const int64_t e = i / block, v = i % block;
      y[e * 2 * block + v] = yf[i];
      y[e * 2 * block + block + v] = yb[i];
    } else {
      y[i] = combineDirectionElement(mode, yf[i], yb[i]);
    }
  }
}

__global__ void combineDirectionsBackwardKernel(DirectionCombine mode, const float* yf,
                                                const float* yb, const float* dy, float* dyf,
                                                float* dyb, int64_t n, int64_t block) {
  DL4CPP_GRID_STRIDE_LOOP(i, n * block) {
    if (mode == DirectionCombine::CONCAT) {
      const int64_t e = i / block, v = i % block;
      dyf[i] = dy[e * 2 * block + v];
      dyb[i] = dy[e * 2 * block + block + v];
    } else {
      const DirectionGradient d = combineDirectionGradient(mode, yf[i], yb[i], dy[i]);
      dyf[i] = d.f;
      dyb[i] = d.b;
    }
  }
}

// mask[e][s] = 0 where every feature of x at (e, s) equals value, 1 elsewhere.
__global__ void maskOfValueKernel(const float* x, float value, float* mask, int64_t n, int64_t c,
                                  int64_t t) {
  DL4CPP_GRID_STRIDE_LOOP(i, n * t) {
    const int64_t e = i / t, s = i % t;
    float real = 0.0f;
    for (int64_t k = 0; k < c && real == 0.0f; ++k)
      real = x[(e * c + k) * t + s] != value ? 1.0f : 0.0f;
    mask[i] = real;
  }
}

// y[e][k][s] = x[e][k][s], or 0 where mask[e][s] is 0 (y may alias x).
__global__ void maskStepsKernel(const float* x, const float* mask, float* y, int64_t n, int64_t c,
                                int64_t t) {
  DL4CPP_GRID_STRIDE_LOOP(i, n * c * t) {
    const int64_t s = i % t, e = i / (t * c);
    y[i] = mask[e * t + s] != 0.0f ? x[i] : 0.0f;
  }
}

// One thread per (example, feature) row of x (n, c, t): y (n, c) pooled over the real steps.
__global__ void maskedPoolingForwardKernel(PoolingKind kind, int pnorm, const float* x,
                                           const float* mask, float* y, int64_t n, int64_t c,
                                           int64_t t) {
  DL4CPP_GRID_STRIDE_LOOP(row, n * c) {
    const float* m = mask ? mask + (row / c) * t : nullptr;
    y[row] = maskedPoolRow(kind, pnorm, x + row * t, m, t);
  }
}

__global__ void maskedPoolingBackwardKernel(PoolingKind kind, int pnorm, const float* x,
                                            const float* mask, const float* y, const float* dy,
                                            float* dx, int64_t n, int64_t c, int64_t t) {
  DL4CPP_GRID_STRIDE_LOOP(row, n * c) {
    const float* m = mask ? mask + (row / c) * t : nullptr;
    maskedPoolRowBackward(kind, pnorm, x + row * t, m, t, y[row], dy[row], dx + row * t);
  }
}

// The parts of the forward workspace (RecurrentOps.h: recurrentWorkspaceFloats), in its order.
struct Workspace {
  float *xT, *gates, *hs, *cs, *h0, *c0;  // cs and c0: the LSTM's only (null for the RNN)
};

Workspace workspaceOf(float* ws, const RecurrentDims& d, bool lstm) {
  Workspace p{};
  p.xT = ws;
  p.gates = p.xT + d.t * d.n * d.nIn;
  p.hs = p.gates + d.t * d.n * d.g;
  float* next = p.hs + d.t * d.n * d.h;
  if (lstm) {
    p.cs = next;
    next += d.t * d.n * d.h;
  }
  p.h0 = next;
  if (lstm) p.c0 = p.h0 + d.n * d.h;
  return p;
}

}  // namespace

class CudaRecurrent final : public RecurrentImpl {
 public:
  explicit CudaRecurrent(CudaBackend& core) : core_(core) {}

  void lstmForward(const Tensor& x, const Tensor& w, const Tensor& rw, const Tensor& b,
                   const Tensor& mask, const RecurrentActivations& act, Tensor& y, Tensor& ws,
                   RecurrentState* state) override {
    const RecurrentDims d = detail::recurrentForwardDims(x, w, rw, b, y, ws, 4, "lstmForward");
    detail::checkRecurrentActivation(act.activation, "lstmForward");
    detail::checkRecurrentActivation(act.gate, "lstmForward");
    const float* m = uploadMask(mask, d.n, d.t, "lstmForward");
    const Workspace p = workspaceOf(ws.data(), d, true);
    const bool init = loadState(state ? &state->h : nullptr, p.h0, d, "lstmForward");
    loadState(state ? &state->c : nullptr, p.c0, d, "lstmForward");
    const float* rwDense = splitRecurrentWeights(d, rw);
    const float* peepholes = d.peepholes() ? peepholes_.data() : nullptr;
    inputProducts(d, x, w, b, ws, p);
    const int64_t H = d.h;
    for (int64_t s = 0; s < d.t; ++s) {
      float* z = p.gates + s * d.n * d.g;
      if (s > 0 || init) {
        const float* hPrev = s > 0 ? p.hs + (s - 1) * d.n * H : p.h0;
        core_.gemm(false, false, d.n, d.g, H, 1.0f, hPrev, rwDense, 1.0f, z);
      }
      const float* cPrev = s > 0 ? p.cs + (s - 1) * d.n * H : p.c0;
      lstmCellForwardKernel<<<blocksFor(d.n * H), kThreadsPerBlock, 0, stream()>>>(
          z, p.cs + s * d.n * H, p.hs + s * d.n * H, cPrev, peepholes, m, s, d.n, d.t, H,
          act.activation, act.gate);
      DL4CPP_CUDA_CHECK_LAUNCH();
    }
    launchFromTimeMajor(p.hs, y.data(), d.n, H, d.t);
    if (state && d.t > 0) {
      state->h = downloadLastStep(p.hs, d, nullptr);
      state->c = downloadLastStep(p.cs, d, mask.empty() ? nullptr : mask.data());
    }
  }

  void lstmBackward(const Tensor& w, const Tensor& rw, const Tensor& mask,
                    const RecurrentActivations& act, const Tensor& ws, const Tensor& dy, Tensor& dw,
                    Tensor& drw, Tensor& db, Tensor* dx, int64_t backwardSteps) override {
    const RecurrentDims d =
        detail::recurrentBackwardDims(w, rw, ws, dy, dw, drw, db, dx, 4, "lstmBackward");
    const float* m = uploadMask(mask, d.n, d.t, "lstmBackward");
    Tensor kept = ws;  // shares the forward's workspace, which the backward pass only reads
    const Workspace p = workspaceOf(kept.data(), d, true);
    const float* rwDense = splitRecurrentWeights(d, rw);
    const float* peepholes = d.peepholes() ? peepholes_.data() : nullptr;
    const int64_t H = d.h;
    prepareBackward(d, dy);
    float* dPeep = nullptr;
    if (peepholes) {
      dPeep = core_.scratch(dPeepPerExample_, d.n * 3 * H);
      zero(dPeep, d.n * 3 * H);
    }
    for (int64_t s = d.t; s-- > detail::firstBackwardStep(d, backwardSteps);) {
      recurrentGradient(d, rwDense, s);
      const float* cPrev = s > 0 ? p.cs + (s - 1) * d.n * H : p.c0;
      lstmCellBackwardKernel<<<blocksFor(d.n * H), kThreadsPerBlock, 0, stream()>>>(
          p.gates + s * d.n * d.g, p.cs + s * d.n * H, cPrev, dh_.data(), dc_.data(),
          dz_.data() + s * d.n * d.g, peepholes, dPeep, m, s, d.n, d.t, H, act.activation,
          act.gate);
      DL4CPP_CUDA_CHECK_LAUNCH();
    }
    finishBackward(d, p, w, dw, drw, db, dx);
  }

  void simpleRnnForward(const Tensor& x, const Tensor& w, const Tensor& rw, const Tensor& b,
                        const Tensor& mask, ActivationKind act, Tensor& y, Tensor& ws,
                        RecurrentState* state) override {
    const RecurrentDims d = detail::recurrentForwardDims(x, w, rw, b, y, ws, 1, "simpleRnnForward");
    detail::checkRecurrentActivation(act, "simpleRnnForward");
    const float* m = uploadMask(mask, d.n, d.t, "simpleRnnForward");
    const Workspace p = workspaceOf(ws.data(), d, false);
    const bool init = loadState(state ? &state->h : nullptr, p.h0, d, "simpleRnnForward");
    inputProducts(d, x, w, b, ws, p);
    const int64_t H = d.h;
    for (int64_t s = 0; s < d.t; ++s) {
      float* z = p.gates + s * d.n * H;
      if (s > 0 || init) {
        const float* hPrev = s > 0 ? p.hs + (s - 1) * d.n * H : p.h0;
        core_.gemm(false, false, d.n, H, H, 1.0f, hPrev, rw.data(), 1.0f, z);
      }
      rnnCellForwardKernel<<<blocksFor(d.n * H), kThreadsPerBlock, 0, stream()>>>(
          z, p.hs + s * d.n * H, m, s, d.n, d.t, H, act);
      DL4CPP_CUDA_CHECK_LAUNCH();
    }
    launchFromTimeMajor(p.hs, y.data(), d.n, H, d.t);
    if (state && d.t > 0) state->h = downloadLastStep(p.hs, d, nullptr);
  }

  void simpleRnnBackward(const Tensor& w, const Tensor& rw, const Tensor& mask, ActivationKind act,
                         const Tensor& ws, const Tensor& dy, Tensor& dw, Tensor& drw, Tensor& db,
                         Tensor* dx, int64_t backwardSteps) override {
    const RecurrentDims d =
        detail::recurrentBackwardDims(w, rw, ws, dy, dw, drw, db, dx, 1, "simpleRnnBackward");
    const float* m = uploadMask(mask, d.n, d.t, "simpleRnnBackward");
    Tensor kept = ws;  // shares the forward's workspace, which the backward pass only reads
    const Workspace p = workspaceOf(kept.data(), d, false);
    const int64_t H = d.h;
    prepareBackward(d, dy);
    for (int64_t s = d.t; s-- > detail::firstBackwardStep(d, backwardSteps);) {
      recurrentGradient(d, rw.data(), s);
      rnnCellBackwardKernel<<<blocksFor(d.n * H), kThreadsPerBlock, 0, stream()>>>(
          p.gates + s * d.n * H, dh_.data(), dz_.data() + s * d.n * H, m, s, d.n, d.t, H, act);
      DL4CPP_CUDA_CHECK_LAUNCH();
    }
    finishBackward(d, p, w, dw, drw, db, dx);
  }

  void gatherSteps(const Tensor& x, const Tensor& mask, Tensor& rows) override {
    const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
    const float* m = detail::recurrentMaskData(mask, n, t, "gatherSteps");
    const int64_t r = detail::countRealSteps(m, n, t);
    detail::checkStepRows(rows, r, c, "gatherSteps");
    std::vector<int32_t>& source = hostIndices_;
    source.clear();
    for (int64_t i = 0; i < n * t; ++i)
      if (!m || m[i] != 0.0f) source.push_back(static_cast<int32_t>(i));
    if (r == 0 || c == 0) return;
    const int32_t* map = uploadIndices(source);
    gatherStepsKernel<<<blocksFor(r * c), kThreadsPerBlock, 0, stream()>>>(x.data(), map,
                                                                           rows.data(), r, c, t);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  void scatterSteps(const Tensor& rows, const Tensor& mask, Tensor& y) override {
    const int64_t n = y.dim(0), c = y.dim(1), t = y.dim(2);
    const float* m = detail::recurrentMaskData(mask, n, t, "scatterSteps");
    detail::checkStepRows(rows, detail::countRealSteps(m, n, t), c, "scatterSteps");
    std::vector<int32_t>& rowOf = hostIndices_;
    rowOf.assign(static_cast<size_t>(n * t), -1);
    int32_t next = 0;
    for (size_t i = 0; i < rowOf.size(); ++i)
      if (!m || m[i] != 0.0f) rowOf[i] = next++;
    if (y.numel() == 0) return;
    const int32_t* map = uploadIndices(rowOf);
    scatterStepsKernel<<<blocksFor(y.numel()), kThreadsPerBlock, 0, stream()>>>(rows.data(), map,
                                                                                y.data(), n, c, t);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  void reverseSteps(const Tensor& x, const Tensor& mask, Tensor& y) override {
    const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
    const float* m = detail::recurrentMaskData(mask, n, t, "reverseSteps");
    if (x.rank() != 3 || y.shape() != x.shape())
      throw ShapeError("reverseSteps: y " + y.shape().toString() + " for x " +
                       x.shape().toString());
    hostIndices_.resize(static_cast<size_t>(n * t));
    detail::reversedStepSources(m, n, t, hostIndices_.data());
    if (x.numel() == 0) return;
    const int32_t* from = uploadIndices(hostIndices_);
    reverseStepsKernel<<<blocksFor(x.numel()), kThreadsPerBlock, 0, stream()>>>(x.data(), from,
                                                                                y.data(), n, c, t);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  void combineDirections(DirectionCombine mode, const Tensor& yf, const Tensor& yb,
                         Tensor& y) override {
    detail::checkDirections(mode, yf, yb, y, "combineDirections");
    const int64_t n = yf.dim(0), block = yf.dim(1) * yf.dim(2);
    if (n * block == 0) return;
    combineDirectionsKernel<<<blocksFor(n * block), kThreadsPerBlock, 0, stream()>>>(
        mode, yf.data(), yb.data(), y.data(), n, block);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  void combineDirectionsBackward(DirectionCombine mode, const Tensor& yf, const Tensor& yb,
                                 const Tensor& dy, Tensor& dyf, Tensor& dyb) override {
    detail::checkDirections(mode, yf, yb, dy, "combineDirectionsBackward");
    if (dyf.shape() != yf.shape() || dyb.shape() != yf.shape())
      throw ShapeError("combineDirectionsBackward: gradients " + dyf.shape().toString() + ", " +
                       dyb.shape().toString() + " for outputs " + yf.shape().toString());
    const int64_t n = yf.dim(0), block = yf.dim(1) * yf.dim(2);
    if (n * block == 0) return;
    combineDirectionsBackwardKernel<<<blocksFor(n * block), kThreadsPerBlock, 0, stream()>>>(
        mode, yf.data(), yb.data(), dy.data(), dyf.data(), dyb.data(), n, block);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  void maskOfValue(const Tensor& x, float value, Tensor& mask) override {
    const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
    if (x.rank() != 3 || !mask.onHost() || mask.shape() != Shape{n, t})
      throw ShapeError("maskOfValue: mask " + mask.shape().toString() + " for sequences " +
                       x.shape().toString() + " (a host tensor [N, T])");
    if (n * t == 0) return;
    float* computed = core_.scratch(maskOnDevice_, n * t);
    maskOfValueKernel<<<blocksFor(n * t), kThreadsPerBlock, 0, stream()>>>(x.data(), value,
                                                                           computed, n, c, t);
    DL4CPP_CUDA_CHECK_LAUNCH();
    download(computed, n * t, mask.data());
  }

  void maskSteps(const Tensor& x, const Tensor& mask, Tensor& y) override {
    const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
    if (x.rank() != 3 || y.shape() != x.shape())
      throw ShapeError("maskSteps: y " + y.shape().toString() + " for x " + x.shape().toString());
    const float* m = uploadMask(mask, n, t, "maskSteps");
    if (!m) {
      if (y.data() != x.data()) core_.copy(x, y);
      return;
    }
    maskStepsKernel<<<blocksFor(x.numel()), kThreadsPerBlock, 0, stream()>>>(x.data(), m, y.data(),
                                                                             n, c, t);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  void maskedPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& mask,
                            Tensor& y) override {
    detail::checkMaskedPooling(x, y, "maskedPoolingForward");
    const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
    const float* m = uploadMask(mask, n, t, "maskedPoolingForward");
    if (n * c == 0) return;
    maskedPoolingForwardKernel<<<blocksFor(n * c), kThreadsPerBlock, 0, stream()>>>(
        kind, pnorm, x.data(), m, y.data(), n, c, t);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  void maskedPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& mask,
                             const Tensor& y, const Tensor& dy, Tensor& dx) override {
    detail::checkMaskedPooling(x, y, "maskedPoolingBackward");
    const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
    const float* m = uploadMask(mask, n, t, "maskedPoolingBackward");
    if (n * c == 0) return;
    maskedPoolingBackwardKernel<<<blocksFor(n * c), kThreadsPerBlock, 0, stream()>>>(
        kind, pnorm, x.data(), m, y.data(), dy.data(), dx.data(), n, c, t);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

 private:
  cudaStream_t stream() const { return core_.stream(); }

  void zero(float* p, int64_t floats) {
    DL4CPP_CUDA_CHECK(cudaMemsetAsync(p, 0, static_cast<size_t>(floats) * sizeof(float), stream()));
  }

  void upload(const float* host, int64_t floats, float* device) {
    DL4CPP_CUDA_CHECK(cudaMemcpyAsync(device, host, static_cast<size_t>(floats) * sizeof(float),
                                      cudaMemcpyHostToDevice, stream()));
  }

  // Waits for the stream: the values are the host's on return.
  void download(const float* device, int64_t floats, float* host) {
    DL4CPP_CUDA_CHECK(cudaMemcpyAsync(host, device, static_cast<size_t>(floats) * sizeof(float),
                                      cudaMemcpyDeviceToHost, stream()));
    DL4CPP_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }

  // The mask (checked: a host tensor (N, T)) on the device, or null without one.
  const float* uploadMask(const Tensor& mask, int64_t n, int64_t t, const char* op) {
    const float* m = detail::recurrentMaskData(mask, n, t, op);
    if (!m || n * t == 0) return nullptr;
    float* device = core_.scratch(maskOnDevice_, n * t);
    upload(m, n * t, device);
    return device;
  }

  // A step map of the host on the device (int32 in the floats of a scratch buffer).
  const int32_t* uploadIndices(const std::vector<int32_t>& indices) {
    static_assert(sizeof(int32_t) == sizeof(float));
    const auto count = static_cast<int64_t>(indices.size());
    float* device = core_.scratch(indicesOnDevice_, count);
    DL4CPP_CUDA_CHECK(cudaMemcpyAsync(device, indices.data(),
                                      static_cast<size_t>(count) * sizeof(int32_t),
                                      cudaMemcpyHostToDevice, stream()));
    return reinterpret_cast<const int32_t*>(device);
  }

  // The initial state `from` ((N, H) host; null or empty for zero) into the workspace's `to`;
  // whether it was given.
  bool loadState(const Tensor* from, float* to, const RecurrentDims& d, const char* op) {
    if (from == nullptr || !detail::checkInitialState(*from, d, op)) {
      zero(to, d.n * d.h);
      return false;
    }
    upload(from->data(), d.n * d.h, to);
    return true;
  }

  // The state after the last step, (N, H) on the host, from a time-major (T, N, H) record: times
  // that step's mask when `hostMask` is given (the cell state, recorded before the mask).
  Tensor downloadLastStep(const float* record, const RecurrentDims& d, const float* hostMask) {
    Tensor out(Shape{d.n, d.h}, Device::cpu());
    download(record + (d.t - 1) * d.n * d.h, d.n * d.h, out.data());
    if (hostMask)
      for (int64_t e = 0; e < d.n; ++e) {
        const float keep = hostMask[e * d.t + d.t - 1];
        for (int64_t j = 0; j < d.h; ++j) out.data()[e * d.h + j] *= keep;
      }
    return out;
  }

  // The dense (H, g) part of RW (RW itself without peepholes) and, with them, peepholes_ (3, H).
  const float* splitRecurrentWeights(const RecurrentDims& d, const Tensor& rw) {
    if (!d.peepholes()) return rw.data();
    float* dense = core_.scratch(rwDense_, d.h * d.g);
    float* peep = core_.scratch(peepholes_, 3 * d.h);
    splitRecurrentWeightsKernel<<<blocksFor(d.h * d.ldRW), kThreadsPerBlock, 0, stream()>>>(
        rw.data(), d.h, d.g, d.ldRW, dense, peep);
    DL4CPP_CUDA_CHECK_LAUNCH();
    return dense;
  }

  void launchToTimeMajor(const float* src, float* dst, int64_t n, int64_t c, int64_t t) {
    if (n * c * t == 0) return;
    toTimeMajorKernel<<<blocksFor(n * c * t), kThreadsPerBlock, 0, stream()>>>(src, dst, n, c, t);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  void launchFromTimeMajor(const float* src, float* dst, int64_t n, int64_t c, int64_t t) {
    if (n * c * t == 0) return;
    fromTimeMajorKernel<<<blocksFor(n * c * t), kThreadsPerBlock, 0, stream()>>>(src, dst, n, c, t);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  // xT = x time-major; gates (T N, g) = xT W + b (the gates' part of ws).
  void inputProducts(const RecurrentDims& d, const Tensor& x, const Tensor& w, const Tensor& b,
                     Tensor& ws, const Workspace& p) {
    const int64_t rows = d.t * d.n;
    if (rows * d.g == 0) return;
    launchToTimeMajor(x.data(), p.xT, d.n, d.nIn, d.t);
    if (d.nIn > 0) {
      core_.gemm(false, false, rows, d.g, d.nIn, 1.0f, p.xT, w.data(), 0.0f, p.gates);
    } else {
      zero(p.gates, rows * d.g);
    }
    Tensor gates = ws.view(p.gates - p.xT, Shape{rows * d.g});
    core_.addBias(gates, b, d.g, 1);
  }

  void prepareBackward(const RecurrentDims& d, const Tensor& dy) {
    float* dyT = core_.scratch(dyT_, d.t * d.n * d.h);
    launchToTimeMajor(dy.data(), dyT, d.n, d.h, d.t);
    zero(core_.scratch(dz_, d.t * d.n * d.g), d.t * d.n * d.g);
    core_.scratch(dh_, d.n * d.h);
    zero(core_.scratch(dc_, d.n * d.h), d.n * d.h);
  }

  // dh_ = dy_s + dz_{s+1} RW^T: the gradient reaching h_s (rwDense: RW's dense (H, g) part).
  void recurrentGradient(const RecurrentDims& d, const float* rwDense, int64_t s) {
    const int64_t nh = d.n * d.h;
    if (nh == 0) return;
    DL4CPP_CUDA_CHECK(cudaMemcpyAsync(dh_.data(), dyT_.data() + s * nh,
                                      static_cast<size_t>(nh) * sizeof(float),
                                      cudaMemcpyDeviceToDevice, stream()));
    if (s + 1 < d.t)
      core_.gemm(false, true, d.n, d.h, d.g, 1.0f, dz_.data() + (s + 1) * d.n * d.g, rwDense, 1.0f,
                 dh_.data());
  }

  // The products over all steps at once, from dz_; with peepholes, dPeepPerExample_ (N, 3H)
  // summed over the examples into dRW's last three columns.
  void finishBackward(const RecurrentDims& d, const Workspace& p, const Tensor& w, Tensor& dw,
                      Tensor& drw, Tensor& db, Tensor* dx) {
    const int64_t rows = d.t * d.n;
    const float* dz = dz_.data();
    gemmOrZero(true, false, d.nIn, d.g, rows, p.xT, dz, 0.0f, dw.data());
    float* drwDense = d.peepholes() ? core_.scratch(drwDense_, d.h * d.g) : drw.data();
    // dRW = sum over s >= 1 of h_{s-1}^T dz_s, then h_{-1}^T dz_0 (0 for a zero initial state).
    gemmOrZero(true, false, d.h, d.g, rows - d.n, p.hs, dz + d.n * d.g, 0.0f, drwDense);
    if (d.n > 0) core_.gemm(true, false, d.h, d.g, d.n, 1.0f, p.h0, dz, 1.0f, drwDense);
    if (rows > 0) {
      core_.reduceChannels(dz_.view(0, Shape{rows, d.g}), d.g, 1, db);
    } else {
      zero(db.data(), d.g);
    }
    if (d.peepholes()) {
      core_.scratch(dPeepSum_, 3 * d.h);
      Tensor dPeepSum = dPeepSum_.view(0, Shape{3 * d.h});
      if (d.n > 0) {
        core_.reduceChannels(dPeepPerExample_.view(0, Shape{d.n, 3 * d.h}), 3 * d.h, 1, dPeepSum);
      } else {
        zero(dPeepSum.data(), 3 * d.h);
      }
      joinRecurrentGradientsKernel<<<blocksFor(d.h * d.ldRW), kThreadsPerBlock, 0, stream()>>>(
          drwDense, dPeepSum.data(), d.h, d.g, d.ldRW, drw.data());
      DL4CPP_CUDA_CHECK_LAUNCH();
    }
    if (dx) {
      float* dxT = core_.scratch(dxT_, rows * d.nIn);
      core_.gemm(false, true, rows, d.nIn, d.g, 1.0f, dz, w.data(), 0.0f, dxT);
      launchFromTimeMajor(dxT, dx->data(), d.n, d.nIn, d.t);
    }
  }

  // c (m, n) = alpha op(a) op(b) + beta c, or beta c when k is 0 (beta 0: zeros).
  void gemmOrZero(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, const float* b,
                  float beta, float* c) {
    if (k > 0) {
      core_.gemm(ta, tb, m, n, k, 1.0f, a, b, beta, c);
    } else if (beta == 0.0f) {
      zero(c, m * n);
    }
  }

  CudaBackend& core_;
  Tensor maskOnDevice_, indicesOnDevice_;
  Tensor rwDense_, peepholes_;       // RW's dense part and peephole rows (GravesLSTM)
  Tensor dyT_, dz_, dh_, dc_, dxT_;  // the backward pass's time-major gradients
  Tensor drwDense_, dPeepPerExample_, dPeepSum_;
  std::vector<int32_t> hostIndices_;  // the step map of gather, scatter or reverse
};

std::unique_ptr<RecurrentImpl> makeCudaRecurrent(CudaBackend& core) {
  return std::make_unique<CudaRecurrent>(core);
}

}  // namespace dl4cpp::cuda
