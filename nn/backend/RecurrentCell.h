#pragma once
// The per-unit formulas of the recurrent ops (RecurrentOps.h) that every device computes alike:
// the LSTM's backward pass and Bidirectional's combining of directions. The CPU backend's loops
// and the CUDA backend's kernels call the same code, so the CPU's gradient checks cover the GPU's
// arithmetic too.
#include "nn/backend/HostDevice.h"
#include "nn/backend/OpTypes.h"
#include "nn/backend/ops/RecurrentOps.h"

namespace dl4cpp {

// f'(x) given y = f(x), for the activations a recurrent op takes (recurrentActivationSupported).
DL4CPP_HOST_DEVICE inline float recurrentDerivative(ActivationKind kind, float y) {
  switch (kind) {
    case ActivationKind::TANH:
      return 1.0f - y * y;
    case ActivationKind::SIGMOID:
      return y * (1.0f - y);
    case ActivationKind::HARDSIGMOID:
      return y > 0.0f && y < 1.0f ? 0.2f : 0.0f;
    case ActivationKind::HARDTANH:
      return y > -1.0f && y < 1.0f ? 1.0f : 0.0f;
    case ActivationKind::RELU:
      return y > 0.0f ? 1.0f : 0.0f;
    default:
      return 1.0f;
  }
}

// One LSTM unit's gradients at a real step: those of its four pre-activations, in DL4J's gate order
// [a | f | o | i], and the one reaching the previous cell state.
struct LstmUnitGradient {
  float a, f, o, i;
  float cPrev;
};

// From the unit's activated gates a, f, o, i, act(c_t) `tc`, the masked previous cell state `cp`,
// the gradients reaching h_t (`dh`) and c_t from the next step (`dc`), and the unit's peephole
// weights (pf, po, pi: 0 without peepholes). The peephole weights' gradients are then f * cp,
// o * c_t and i * cp (the returned f, o, i).
DL4CPP_HOST_DEVICE inline LstmUnitGradient lstmUnitBackward(ActivationKind activation,
                                                            ActivationKind gate, float a, float f,
                                                            float o, float i, float tc, float cp,
                                                            float dh, float dc, float pf, float po,
                                                            float pi) {
  LstmUnitGradient g{};
  g.o = dh * tc * recurrentDerivative(gate, o);
  // c_t reaches the loss through h_t, c_{t+1} and (with peepholes) the output gate.
  const float dcHat = dc + dh * o * recurrentDerivative(activation, tc) + g.o * po;
  g.a = dcHat * i * recurrentDerivative(activation, a);
  g.f = dcHat * cp * recurrentDerivative(gate, f);
  g.i = dcHat * a * recurrentDerivative(gate, i);
  g.cPrev = dcHat * f + g.f * pf + g.i * pi;
  return g;
}

// combineDirections' element for the element-wise modes (ADD, MUL, AVERAGE): yf (mode) yb.
DL4CPP_HOST_DEVICE inline float combineDirectionElement(DirectionCombine mode, float f, float b) {
  switch (mode) {
    case DirectionCombine::ADD:
      return f + b;
    case DirectionCombine::MUL:
      return f * b;
    default:
      return 0.5f * (f + b);
  }
}

// The gradients reaching yf and yb from g, the gradient of that element.
struct DirectionGradient {
  float f, b;
};
DL4CPP_HOST_DEVICE inline DirectionGradient combineDirectionGradient(DirectionCombine mode, float f,
                                                                     float b, float g) {
  switch (mode) {
    case DirectionCombine::ADD:
      return {g, g};
    case DirectionCombine::MUL:
      return {g * b, g * f};
    default:
      return {0.5f * g, 0.5f * g};
  }
}

}  // namespace dl4cpp
