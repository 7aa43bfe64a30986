#pragma once
// The checks every device's recurrent family (RecurrentOps.h) makes before it runs an op, and the
// sizes it runs on: one definition, so a bad call gets the same ShapeError on the CPU and on a
// GPU. Private to nn/backend (not installed).
#include <cstdint>

#include "nn/backend/OpTypes.h"
#include "nn/backend/ops/RecurrentOps.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::detail {

// The sizes of one LSTM or simple RNN op.
struct RecurrentDims {
  int64_t n, nIn, t, h, g;  // g: gates * h
  int64_t ldRW;             // RW's row length: g, or g + 3 with GravesLSTM's peephole columns
  bool peepholes() const { return ldRW != g; }
};

// BackendError unless `kind` is an activation a recurrent op takes (recurrentActivationSupported).
void checkRecurrentActivation(ActivationKind kind, const char* op);

// The sizes of a forward op on x (N, nIn, T), W (nIn, g), RW (H, g or g + 3), b (g), writing
// y (N, H, T) and a workspace of recurrentWorkspaceFloats(..., gates); ShapeError otherwise.
RecurrentDims recurrentForwardDims(const Tensor& x, const Tensor& w, const Tensor& rw,
                                   const Tensor& b, const Tensor& y, const Tensor& ws, int gates,
                                   const char* op);
// The sizes of a backward op from dy (N, H, T), with gradients shaped as their parameters and dx
// (when not null) as x; ShapeError otherwise.
RecurrentDims recurrentBackwardDims(const Tensor& w, const Tensor& rw, const Tensor& ws,
                                    const Tensor& dy, const Tensor& dw, const Tensor& drw,
                                    const Tensor& db, const Tensor* dx, int gates, const char* op);

// The mask's values (a host tensor (n, t)), or null for an empty mask; ShapeError otherwise.
const float* recurrentMaskData(const Tensor& mask, int64_t n, int64_t t, const char* op);

// The number of real steps of a mask (n t for none).
int64_t countRealSteps(const float* mask, int64_t n, int64_t t);

// ShapeError unless rows is (real steps of the mask, features): gatherSteps' and scatterSteps'
// rows for sequences of `features` features.
void checkStepRows(const Tensor& rows, int64_t realSteps, int64_t features, const char* op);

// ShapeError unless yf, yb (N, H, T) and y (combineDirections' output, or its gradient) fit mode.
void checkDirections(DirectionCombine mode, const Tensor& yf, const Tensor& yb, const Tensor& y,
                     const char* op);

// ShapeError unless the initial state `from` ((N, H) host) fits d; whether one was given (not
// empty).
bool checkInitialState(const Tensor& from, const RecurrentDims& d, const char* op);

// The earliest step a backward pass over the last `backwardSteps` steps reaches (0: all).
int64_t firstBackwardStep(const RecurrentDims& d, int64_t backwardSteps);

// ShapeError unless x is sequences (N, C, T) and y (N, C) (masked pooling's input and output).
void checkMaskedPooling(const Tensor& x, const Tensor& y, const char* op);

// For reverseSteps: the step each step of example e takes its values from, within the span of
// its real steps (RecurrentOps.h), for the mask (n, t) or null.
void reversedStepSources(const float* mask, int64_t n, int64_t t, int32_t* from);

}  // namespace dl4cpp::detail
