#pragma once
// The per-unit formulas of the recurrent ops' backward passes (RecurrentOps.h), for every device:
// the CPU backend's step loop and the CUDA backend's cell kernels call the same code, so the CPU's
// gradient checks cover the GPU's arithmetic too.
#include "nn/backend/HostDevice.h"
#include "nn/backend/OpTypes.h"

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

}  // namespace dl4cpp
