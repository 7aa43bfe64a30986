#pragma once
// The recurrent family: the sequence ops. Sequences are DL4J's layout, (N, C, T): examples,
// features, time steps. A mask is a host tensor (N, T), 1 for a real step and 0 for padding, or
// empty (every step real). RecurrentImpl is what a device implements (cpu/CpuRecurrent.cpp);
// RecurrentOps is what layers call, through Backend.
//
// LSTM (DL4J's LSTM, no peepholes). Parameters in DL4J's layout: W (nIn, 4H), RW (H, 4H), b (4H),
// the four column blocks of each in DL4J's order [a | f | o | i]:
//   z_t = x_t W + h_{t-1} RW + b                        (N, 4H)
//   a = act(z[0:H])  f = gate(z[H:2H])  o = gate(z[2H:3H])  i = gate(z[3H:4H])
//   c_t = f * c_{t-1} + i * a        h_t = o * act(c_t)
// with h_{-1} = c_{-1} = 0 or a given state (RecurrentState); at a masked step c_t and h_t are 0
// (DL4J's LSTMHelpers), so the next real step starts from a clean state. RW may also be
// (H, 4H + 3): DL4J's GravesLSTM, whose last three columns are the peephole weights wFF, wOO, wGG
// (GravesLSTMParamInitializer):
//   f = gate(z[H:2H] + c_{t-1} * wFF)   i = gate(z[3H:4H] + c_{t-1} * wGG)
//   o = gate(z[2H:3H] + c_t * wOO)
// and the backward pass writes their gradients into the same columns of dRW.
// Simple RNN (DL4J's SimpleRnn): h_t = act(x_t W + h_{t-1} RW + b), W (nIn, H), RW (H, H), b (H);
// h_t = 0 at a masked step.
// act and gate are activations whose derivative is a function of their output
// (recurrentActivationSupported).
#include <cstdint>

#include "nn/backend/OpFlops.h"
#include "nn/backend/OpTypes.h"
#include "nn/backend/ops/OpDispatch.h"
#include "nn/core/Error.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

// The activations a recurrent op takes (as cell activation or gate activation): those whose
// derivative follows from their output, so the backward pass needs only what the forward kept.
inline bool recurrentActivationSupported(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::IDENTITY:
    case ActivationKind::TANH:
    case ActivationKind::SIGMOID:
    case ActivationKind::HARDSIGMOID:
    case ActivationKind::HARDTANH:
    case ActivationKind::RELU:
      return true;
    default:
      return false;
  }
}

// The state a recurrent op starts from and ends in, for truncated BPTT and stateful inference:
// h (N, H) and the LSTM's c (N, H), host tensors. An empty tensor is a zero state. The carried
// state is taken after the mask of the last step (0 where that step is padding).
struct RecurrentState {
  Tensor h;
  Tensor c;
};

// How Bidirectional combines its two directions' outputs yf, yb at each step (DL4J's
// Bidirectional.Mode): CONCAT stacks them along the features, the others are element-wise.
enum class DirectionCombine { CONCAT, ADD, MUL, AVERAGE };

struct RecurrentActivations {
  ActivationKind activation = ActivationKind::TANH;  // the cell input and output (LSTM), h (RNN)
  ActivationKind gate = ActivationKind::SIGMOID;     // LSTM's f, o, i
};

// Floats of the workspace the forward pass of an LSTM (gates = 4) or a simple RNN (gates = 1)
// keeps for its backward pass, for a batch of n sequences of t steps.
inline int64_t recurrentWorkspaceFloats(int64_t n, int64_t t, int64_t nIn, int64_t hidden,
                                        int gates) {
  // x time-major (T, N, nIn), pre-computed activations (T, N, gates H), h (T, N, H), and for the
  // LSTM its cell state (T, N, H); then the initial state, h_{-1} (N, H) and the LSTM's c_{-1}.
  const int64_t states = gates == 4 ? 2 : 1;
  return t * n * (nIn + gates * hidden + hidden + (gates == 4 ? hidden : 0)) + states * n * hidden;
}

class RecurrentImpl {
 public:
  virtual ~RecurrentImpl() = default;
  // y (N, H, T) = the LSTM over x (N, nIn, T) (above); ws (recurrentWorkspaceFloats(.., 4)
  // floats) receives what the backward pass reads. y and ws are overwritten. state: null for a
  // zero initial state; otherwise the op starts from state->h and state->c and replaces them with
  // the state after the last step (new (N, H) host tensors).
  virtual void lstmForward(const Tensor& x, const Tensor& w, const Tensor& rw, const Tensor& b,
                           const Tensor& mask, const RecurrentActivations& act, Tensor& y,
                           Tensor& ws, RecurrentState* state) = 0;
  // From dy = dL/dy (N, H, T) and the forward's ws: dw, drw, db (overwritten) and, when dx is not
  // null, dx = dL/dx (N, nIn, T) (overwritten). Back-propagation through time over the last
  // backwardSteps steps (DL4J's tBPTTBackwardLength: earlier steps get no gradient and give
  // none), over all steps when it is 0. No gradient reaches the initial state (truncated BPTT
  // detaches it).
  virtual void lstmBackward(const Tensor& w, const Tensor& rw, const Tensor& mask,
                            const RecurrentActivations& act, const Tensor& ws, const Tensor& dy,
                            Tensor& dw, Tensor& drw, Tensor& db, Tensor* dx,
                            int64_t backwardSteps) = 0;
  // The simple RNN, as the LSTM (ws of recurrentWorkspaceFloats(.., 1) floats; state->c unused).
  virtual void simpleRnnForward(const Tensor& x, const Tensor& w, const Tensor& rw, const Tensor& b,
                                const Tensor& mask, ActivationKind act, Tensor& y, Tensor& ws,
                                RecurrentState* state) = 0;
  virtual void simpleRnnBackward(const Tensor& w, const Tensor& rw, const Tensor& mask,
                                 ActivationKind act, const Tensor& ws, const Tensor& dy, Tensor& dw,
                                 Tensor& drw, Tensor& db, Tensor* dx, int64_t backwardSteps) = 0;
  // rows (R, C) = the steps of x (N, C, T) where mask is 1 (every step when it is empty), in the
  // order (example, step): R is the number of such steps.
  virtual void gatherSteps(const Tensor& x, const Tensor& mask, Tensor& rows) = 0;
  // y (N, C, T) = rows (R, C) put back where gatherSteps took them, 0 at the other steps.
  virtual void scatterSteps(const Tensor& rows, const Tensor& mask, Tensor& y) = 0;
  // y (N, C, T) = x with each example's steps reversed within its span, from the first to the last
  // step its mask row marks real (every step when mask is empty; an example without real steps,
  // and the steps outside the span, are copied as they are). Reversing twice gives x back. y must
  // not alias x.
  virtual void reverseSteps(const Tensor& x, const Tensor& mask, Tensor& y) = 0;
  // y = yf (mode) yb: yf, yb (N, H, T); y (N, 2H, T) for CONCAT, else (N, H, T). y may alias yf
  // (not for CONCAT).
  virtual void combineDirections(DirectionCombine mode, const Tensor& yf, const Tensor& yb,
                                 Tensor& y) = 0;
  // dyf, dyb = the gradients reaching yf and yb from dy = dL/dy of combineDirections' y
  // (overwritten).
  virtual void combineDirectionsBackward(DirectionCombine mode, const Tensor& yf, const Tensor& yb,
                                         const Tensor& dy, Tensor& dyf, Tensor& dyb) = 0;
  // mask (N, T), a host tensor: 0 where every feature of x (N, C, T) at the step equals value,
  // 1 elsewhere (DL4J's MaskZeroLayer).
  virtual void maskOfValue(const Tensor& x, float value, Tensor& mask) = 0;
  // y (N, C, T) = x with every step the mask (N, T) marks padding set to 0. y may alias x.
  virtual void maskSteps(const Tensor& x, const Tensor& mask, Tensor& y) = 0;
  // y (N, C) = the pooling of x (N, C, T) over the steps the mask (N, T) marks real (MAX, AVG,
  // SUM, PNORM with exponent pnorm; MaskedPooling.h); 0 for an example without real steps.
  virtual void maskedPoolingForward(PoolingKind kind, int pnorm, const Tensor& x,
                                    const Tensor& mask, Tensor& y) = 0;
  // dx (N, C, T) = the gradient reaching x from dy (N, C), given the forward's x and y: 0 at
  // padded steps; MAX's to the first real step holding the maximum.
  virtual void maskedPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x,
                                     const Tensor& mask, const Tensor& y, const Tensor& dy,
                                     Tensor& dx) = 0;
};

class RecurrentOps : protected OpFamily<RecurrentImpl> {
 public:
  void lstmForward(const Tensor& x, const Tensor& w, const Tensor& rw, const Tensor& b,
                   const Tensor& mask, const RecurrentActivations& act, Tensor& y, Tensor& ws,
                   RecurrentState* state = nullptr) {
    run(
        OpPhase::FORWARD, [&] { recurrent().lstmForward(x, w, rw, b, mask, act, y, ws, state); },
        [&] { return recurrentFlops(x, w, rw); });
  }
  void lstmBackward(const Tensor& w, const Tensor& rw, const Tensor& mask,
                    const RecurrentActivations& act, const Tensor& ws, const Tensor& dy, Tensor& dw,
                    Tensor& drw, Tensor& db, Tensor* dx, int64_t backwardSteps = 0) {
    run(
        OpPhase::BACKWARD_WEIGHTS,
        [&] { recurrent().lstmBackward(w, rw, mask, act, ws, dy, dw, drw, db, dx, backwardSteps); },
        [&] { return 2 * recurrentFlops(dy, w, rw); });
  }
  void simpleRnnForward(const Tensor& x, const Tensor& w, const Tensor& rw, const Tensor& b,
                        const Tensor& mask, ActivationKind act, Tensor& y, Tensor& ws,
                        RecurrentState* state = nullptr) {
    run(
        OpPhase::FORWARD,
        [&] { recurrent().simpleRnnForward(x, w, rw, b, mask, act, y, ws, state); },
        [&] { return recurrentFlops(x, w, rw); });
  }
  void simpleRnnBackward(const Tensor& w, const Tensor& rw, const Tensor& mask, ActivationKind act,
                         const Tensor& ws, const Tensor& dy, Tensor& dw, Tensor& drw, Tensor& db,
                         Tensor* dx, int64_t backwardSteps = 0) {
    run(
        OpPhase::BACKWARD_WEIGHTS,
        [&] {
          recurrent().simpleRnnBackward(w, rw, mask, act, ws, dy, dw, drw, db, dx, backwardSteps);
        },
        [&] { return 2 * recurrentFlops(dy, w, rw); });
  }
  void gatherSteps(const Tensor& x, const Tensor& mask, Tensor& rows) {
    run(OpPhase::OTHER, [&] { recurrent().gatherSteps(x, mask, rows); });
  }
  void scatterSteps(const Tensor& rows, const Tensor& mask, Tensor& y) {
    run(OpPhase::OTHER, [&] { recurrent().scatterSteps(rows, mask, y); });
  }
  void reverseSteps(const Tensor& x, const Tensor& mask, Tensor& y) {
    run(OpPhase::OTHER, [&] { recurrent().reverseSteps(x, mask, y); });
  }
  void combineDirections(DirectionCombine mode, const Tensor& yf, const Tensor& yb, Tensor& y) {
    run(OpPhase::OTHER, [&] { recurrent().combineDirections(mode, yf, yb, y); });
  }
  void combineDirectionsBackward(DirectionCombine mode, const Tensor& yf, const Tensor& yb,
                                 const Tensor& dy, Tensor& dyf, Tensor& dyb) {
    run(OpPhase::OTHER, [&] { recurrent().combineDirectionsBackward(mode, yf, yb, dy, dyf, dyb); });
  }
  void maskOfValue(const Tensor& x, float value, Tensor& mask) {
    run(OpPhase::OTHER, [&] { recurrent().maskOfValue(x, value, mask); });
  }
  void maskSteps(const Tensor& x, const Tensor& mask, Tensor& y) {
    run(OpPhase::OTHER, [&] { recurrent().maskSteps(x, mask, y); });
  }
  void maskedPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& mask,
                            Tensor& y) {
    run(OpPhase::FORWARD, [&] { recurrent().maskedPoolingForward(kind, pnorm, x, mask, y); });
  }
  void maskedPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& mask,
                             const Tensor& y, const Tensor& dy, Tensor& dx) {
    run(OpPhase::BACKWARD_DATA,
        [&] { recurrent().maskedPoolingBackward(kind, pnorm, x, mask, y, dy, dx); });
  }

 private:
  // A device without recurrent ops installs none: calling one is then a typed error rather than a
  // null dereference.
  RecurrentImpl& recurrent() const {
    if (!hasImpl())
      throw BackendError(
          "this device has no recurrent ops (LSTM, GravesLSTM, SimpleRnn, Bidirectional, ...)");
    return impl();
  }
  // 2 N T (nIn + H) gH: the two products of every step (x (N, C, T), w (nIn, gH), rw (H, gH)).
  static double recurrentFlops(const Tensor& x, const Tensor& w, const Tensor& rw) {
    return 2.0 * static_cast<double>(x.dim(0)) * static_cast<double>(x.dim(2)) *
           static_cast<double>(w.dim(0) + rw.dim(0)) * static_cast<double>(w.dim(1));
  }
};

}  // namespace dl4cpp
