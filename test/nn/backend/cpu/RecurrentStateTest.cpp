// The recurrent ops from a given initial state (truncated BPTT, rnnTimeStep): the sequence run in
// two pieces, the state carried, equals it run whole; the gradients from a given state match
// finite differences of the loss with that state held fixed (truncated BPTT's detached state);
// a backward pass over the last steps only ignores the earlier ones.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "nn/backend/DeviceContext.h"
#include "nn/tensor/Random.h"

using namespace dl4cpp;

namespace {

constexpr int64_t kN = 2, kIn = 3, kH = 2;

Tensor random(const Shape& shape, uint64_t seed, double scale = 1.0) {
  Random r(seed);
  Tensor t(shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data()[i] = static_cast<float>(r.uniform(-scale, scale));
  return t;
}

// Steps [from, from + length) of x (N, C, T).
Tensor steps(const Tensor& x, int64_t from, int64_t length) {
  const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
  Tensor out(Shape{n, c, length});
  for (int64_t i = 0; i < n * c; ++i)
    for (int64_t s = 0; s < length; ++s) out.data()[i * length + s] = x.data()[i * t + from + s];
  return out;
}

struct Cell {
  bool lstm;
  int gates() const { return lstm ? 4 : 1; }
  Tensor w, rw, b;

  explicit Cell(bool isLstm) : lstm(isLstm) {
    w = random({kIn, gates() * kH}, 1, 0.8);
    rw = random({kH, gates() * kH}, 2, 0.8);
    b = random({gates() * kH}, 3, 0.5);
  }
  // y = the op over x from `state` (null: zero), which it replaces with the final state.
  Tensor forward(Backend& ops, const Tensor& x, const Tensor& mask, RecurrentState* state,
                 Tensor& ws) const {
    const int64_t t = x.dim(2);
    ws = Tensor(Shape{recurrentWorkspaceFloats(kN, t, kIn, kH, gates())});
    Tensor y(Shape{kN, kH, t});
    if (lstm)
      ops.lstmForward(x, w, rw, b, mask, RecurrentActivations{}, y, ws, state);
    else
      ops.simpleRnnForward(x, w, rw, b, mask, ActivationKind::TANH, y, ws, state);
    return y;
  }
  void backward(Backend& ops, const Tensor& mask, const Tensor& ws, const Tensor& dy, Tensor& dw,
                Tensor& drw, Tensor& db, Tensor* dx, int64_t backwardSteps) const {
    if (lstm)
      ops.lstmBackward(w, rw, mask, RecurrentActivations{}, ws, dy, dw, drw, db, dx, backwardSteps);
    else
      ops.simpleRnnBackward(w, rw, mask, ActivationKind::TANH, ws, dy, dw, drw, db, dx,
                            backwardSteps);
  }
};

void checkClose(const Tensor& a, const Tensor& b, float tolerance) {
  REQUIRE(a.shape() == b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) {
    INFO("element " << i);
    CHECK(a.at(i) == doctest::Approx(b.at(i)).epsilon(tolerance).scale(1.0));
  }
}

void checkCarriedEqualsWhole(bool lstm, const Tensor& mask) {
  DeviceContext ctx;
  Backend& ops = ctx.backend();
  const Cell cell(lstm);
  const Tensor x = random({kN, kIn, 5}, 7);
  Tensor ws;
  const Tensor whole = cell.forward(ops, x, mask, nullptr, ws);
  RecurrentState state;
  auto maskSteps = [&](int64_t from, int64_t length) {
    if (mask.empty()) return Tensor();
    return steps(mask.reshape({kN, 1, 5}), from, length).reshape({kN, length});
  };
  const Tensor first = cell.forward(ops, steps(x, 0, 2), maskSteps(0, 2), &state, ws);
  REQUIRE(state.h.shape() == Shape{kN, kH});
  CHECK(state.c.empty() == !lstm);
  const Tensor second = cell.forward(ops, steps(x, 2, 3), maskSteps(2, 3), &state, ws);
  checkClose(first, steps(whole, 0, 2), 1e-5f);
  checkClose(second, steps(whole, 2, 3), 1e-5f);
  // The final state is the last step's output.
  checkClose(state.h.reshape({kN, kH, 1}), steps(whole, 4, 1), 1e-6f);
}

// The op's gradients from a fixed initial state against central differences of
// L = sum(y * r).
void checkGradientFromState(bool lstm) {
  DeviceContext ctx;
  Backend& ops = ctx.backend();
  Cell cell(lstm);
  const Tensor x = random({kN, kIn, 3}, 11);
  const Tensor r = random({kN, kH, 3}, 12);
  RecurrentState initial{random({kN, kH}, 13, 0.9), lstm ? random({kN, kH}, 14, 0.9) : Tensor()};
  auto loss = [&] {
    RecurrentState s{initial.h.clone(), initial.c.empty() ? Tensor() : initial.c.clone()};
    Tensor ws;
    const Tensor y = cell.forward(ops, x, Tensor(), &s, ws);
    double sum = 0;
    for (int64_t i = 0; i < y.numel(); ++i) sum += double(y.at(i)) * double(r.at(i));
    return sum;
  };
  RecurrentState s{initial.h.clone(), initial.c.empty() ? Tensor() : initial.c.clone()};
  Tensor ws;
  cell.forward(ops, x, Tensor(), &s, ws);
  Tensor dw(cell.w.shape()), drw(cell.rw.shape()), db(cell.b.shape()), dx(x.shape());
  cell.backward(ops, Tensor(), ws, r, dw, drw, db, &dx, 0);

  // Without the initial state's share the recurrent weights' gradient is another one.
  Tensor zeroWs;
  cell.forward(ops, x, Tensor(), nullptr, zeroWs);
  Tensor dw0(cell.w.shape()), drw0(cell.rw.shape()), db0(cell.b.shape());
  cell.backward(ops, Tensor(), zeroWs, r, dw0, drw0, db0, nullptr, 0);
  CHECK_FALSE(drw0.allClose(drw, 1e-3f));

  const double eps = 1e-2;
  for (auto [param, grad] : {std::pair{&cell.w, &dw}, {&cell.rw, &drw}, {&cell.b, &db}}) {
    for (int64_t i = 0; i < param->numel(); ++i) {
      const float keep = param->data()[i];
      param->data()[i] = keep + float(eps);
      const double up = loss();
      param->data()[i] = keep - float(eps);
      const double down = loss();
      param->data()[i] = keep;
      INFO("parameter element " << i);
      CHECK(grad->at(i) == doctest::Approx((up - down) / (2 * eps)).epsilon(2e-3).scale(1.0));
    }
  }
}

// backwardSteps = 2 of 5: no gradient reaches steps 0..2.
void checkBackwardSteps(bool lstm) {
  DeviceContext ctx;
  Backend& ops = ctx.backend();
  const Cell cell(lstm);
  const Tensor x = random({kN, kIn, 5}, 21);
  const Tensor dy = random({kN, kH, 5}, 22);
  Tensor ws;
  cell.forward(ops, x, Tensor(), nullptr, ws);
  Tensor dw(cell.w.shape()), drw(cell.rw.shape()), db(cell.b.shape()), dx(x.shape());
  cell.backward(ops, Tensor(), ws, dy, dw, drw, db, &dx, 2);
  for (int64_t i = 0; i < kN * kIn; ++i)
    for (int64_t s = 0; s < 5; ++s) {
      INFO("row " << i << ", step " << s);
      if (s < 3) CHECK(dx.at(i * 5 + s) == 0.0f);
    }
  CHECK(dx.toVector() != std::vector<float>(static_cast<size_t>(dx.numel()), 0.0f));

  // The parameter gradients and dx at steps 3 and 4 are those of the last 2 steps run alone
  // from the state the first 3 left (what truncated BPTT's detached state gives).
  RecurrentState state;
  Tensor wsFirst, wsLast;
  cell.forward(ops, steps(x, 0, 3), Tensor(), &state, wsFirst);
  cell.forward(ops, steps(x, 3, 2), Tensor(), &state, wsLast);
  Tensor dw2(cell.w.shape()), drw2(cell.rw.shape()), db2(cell.b.shape());
  Tensor dx2(Shape{kN, kIn, 2});
  cell.backward(ops, Tensor(), wsLast, steps(dy, 3, 2), dw2, drw2, db2, &dx2, 0);
  checkClose(dw, dw2, 1e-5f);
  checkClose(drw, drw2, 1e-5f);
  checkClose(db, db2, 1e-5f);
  checkClose(steps(dx, 3, 2), dx2, 1e-5f);
}

}  // namespace

TEST_SUITE("nn/backend") {
  TEST_CASE("Recurrent ops: an LSTM run in two pieces, the state carried, equals it run whole") {
    checkCarriedEqualsWhole(true, Tensor());
    // A padded step at the end of the first piece resets the carried state, as in the whole run.
    checkCarriedEqualsWhole(true, Tensor::fromVector({kN, 5}, {1, 1, 1, 1, 1, 1, 0, 1, 1, 1}));
  }

  TEST_CASE("Recurrent ops: a simple RNN too") {
    checkCarriedEqualsWhole(false, Tensor());
    checkCarriedEqualsWhole(false, Tensor::fromVector({kN, 5}, {1, 1, 1, 1, 1, 1, 0, 1, 1, 1}));
  }

  TEST_CASE("Recurrent ops: gradients from an initial state match finite differences (LSTM)") {
    checkGradientFromState(true);
  }

  TEST_CASE("Recurrent ops: gradients from an initial state match finite differences (RNN)") {
    checkGradientFromState(false);
  }

  TEST_CASE("Recurrent ops: backwardSteps back-propagates through the last steps only") {
    checkBackwardSteps(true);
    checkBackwardSteps(false);
  }

  TEST_CASE("Recurrent ops: an initial state of the wrong shape is a ShapeError") {
    DeviceContext ctx;
    const Cell cell(true);
    RecurrentState bad{Tensor(Shape{kN + 1, kH}), Tensor()};
    Tensor ws;
    CHECK_THROWS_AS(cell.forward(ctx.backend(), random({kN, kIn, 2}, 1), Tensor(), &bad, ws),
                    ShapeError);
  }
}
