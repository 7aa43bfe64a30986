#pragma once
// The per-unit formulas of the CUDA backend's recurrent forward passes (RecurrentOps.h), the same
// expressions as the CPU backend's step loop (cpu/CpuRecurrent.cpp). Compiled by nvcc for the cell
// kernels and by the host compiler for test/cuda/RecurrentMathTest.cpp, which checks them against
// the CPU backend without a GPU. The backward passes' formulas are shared with the CPU
// (RecurrentCell.h).
#include "nn/backend/HostDevice.h"
#include "nn/backend/OpTypes.h"
#include "nn/backend/cuda/ElementwiseMath.h"

namespace dl4cpp::cuda {

// One LSTM unit at one step: its activated gates, the new cell state and h_t before the mask.
struct LstmUnitState {
  float a, f, o, i;
  float c, h;
};

// From the unit's pre-activations za, zf, zo, zi (x_t W + h_{t-1} RW + b), the masked previous cell
// state cp and the unit's peephole weights (pf, po, pi: 0 without peepholes).
DL4CPP_HOST_DEVICE inline LstmUnitState lstmUnitForward(ActivationKind activation,
                                                        ActivationKind gate, float za, float zf,
                                                        float zo, float zi, float cp, float pf,
                                                        float po, float pi) {
  LstmUnitState u{};
  u.a = activate(activation, 0.0f, za);
  u.f = activate(gate, 0.0f, zf + pf * cp);
  u.i = activate(gate, 0.0f, zi + pi * cp);
  u.c = u.f * cp + u.i * u.a;
  u.o = activate(gate, 0.0f, zo + po * u.c);  // the output gate sees c_t
  u.h = u.o * activate(activation, 0.0f, u.c);
  return u;
}

}  // namespace dl4cpp::cuda
