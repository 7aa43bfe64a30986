// The CUDA LSTM cell kernel's per-unit formula (RecurrentMath.h), run on the host in the kernel's
// step loop and checked against the CPU backend's lstmForward, without a GPU: LSTM and GravesLSTM
// (peepholes), masks that reset the state, a carried initial state, other gate and cell
// activations. The backward formulas are the CPU's own (RecurrentCell.h).
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include "cuda/CudaTestUtil.h"
#include "nn/backend/cuda/RecurrentMath.h"

using namespace dl4cpp;
using cudatest::checkClose;
using cudatest::randomTensor;

namespace {

// What CudaRecurrent::lstmForward computes, on the host: per step z = x_s W + h_{s-1} RW + b, then
// lstmUnitForward for every example and unit. Returns y (N, H, T); `state` as the op leaves it.
Tensor hostLstmForward(const Tensor& x, const Tensor& w, const Tensor& rw, const Tensor& b,
                       const Tensor& mask, const RecurrentActivations& act, RecurrentState& state) {
  const int64_t n = x.dim(0), nIn = x.dim(1), t = x.dim(2), h = rw.dim(0), g = 4 * h;
  const int64_t ldRW = rw.dim(1);
  const bool peepholes = ldRW != g;
  std::vector<float> hPrev(static_cast<size_t>(n * h), 0.0f), cPrev(hPrev);
  if (!state.h.empty()) hPrev = state.h.toVector();
  if (!state.c.empty()) cPrev = state.c.toVector();
  Tensor y(Shape{n, h, t});
  std::vector<float> z(static_cast<size_t>(g)), hNext(hPrev.size()), cNext(hPrev.size());
  auto keep = [&](int64_t e, int64_t s) { return mask.empty() ? 1.0f : mask.data()[e * t + s]; };
  for (int64_t s = 0; s < t; ++s) {
    for (int64_t e = 0; e < n; ++e) {
      for (int64_t k = 0; k < g; ++k) {
        double sum = b.data()[k];
        for (int64_t i = 0; i < nIn; ++i)
          sum += double(x.data()[(e * nIn + i) * t + s]) * w.data()[i * g + k];
        for (int64_t j = 0; j < h; ++j)
          sum += double(hPrev[static_cast<size_t>(e * h + j)]) * rw.data()[j * ldRW + k];
        z[static_cast<size_t>(k)] = static_cast<float>(sum);
      }
      for (int64_t j = 0; j < h; ++j) {
        const auto at = static_cast<size_t>(e * h + j);
        const float cp = (s > 0 ? keep(e, s - 1) : 1.0f) * cPrev[at];
        const float* peep = rw.data() + j * ldRW + g;
        const cuda::LstmUnitState u = cuda::lstmUnitForward(
            act.activation, act.gate, z[static_cast<size_t>(j)], z[static_cast<size_t>(h + j)],
            z[static_cast<size_t>(2 * h + j)], z[static_cast<size_t>(3 * h + j)], cp,
            peepholes ? peep[0] : 0.0f, peepholes ? peep[1] : 0.0f, peepholes ? peep[2] : 0.0f);
        cNext[at] = u.c;
        hNext[at] = keep(e, s) * u.h;
        y.data()[(e * h + j) * t + s] = hNext[at];
      }
    }
    hPrev = hNext;
    cPrev = cNext;
  }
  for (int64_t e = 0; e < n; ++e)
    for (int64_t j = 0; j < h; ++j) cPrev[static_cast<size_t>(e * h + j)] *= keep(e, t - 1);
  state.h = Tensor::fromVector(Shape{n, h}, hPrev);
  state.c = Tensor::fromVector(Shape{n, h}, cPrev);
  return y;
}

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("CUDA LSTM cell formula on the host matches the CPU backend's LSTM") {
    const int64_t n = 3, nIn = 4, t = 5, h = 6;
    const auto cpu = makeBackend(Device::cpu());
    cpu->bindToCurrentThread(1);
    Tensor mask(Shape{n, t});
    for (int64_t e = 0; e < n; ++e)
      for (int64_t s = 0; s < t; ++s) mask.data()[e * t + s] = (e == 1 && s >= 3) ? 0.0f : 1.0f;
    mask.data()[2 * t + 2] = 0;  // a gap inside a sequence: the state restarts after it
    struct Case {
      const char* name;
      bool peepholes, masked, carried;
      RecurrentActivations act;
    };
    const Case cases[] = {
        {"LSTM", false, false, false, {}},
        {"LSTM, masked, from a carried state", false, true, true, {}},
        {"GravesLSTM, masked, from a carried state", true, true, true, {}},
        {"hard sigmoid gates, relu cell",
         true,
         true,
         false,
         {ActivationKind::RELU, ActivationKind::HARDSIGMOID}},
        {"hard tanh cell, identity gates",
         false,
         false,
         true,
         {ActivationKind::HARDTANH, ActivationKind::IDENTITY}},
    };
    uint64_t seed = 40;
    for (const Case& c : cases) {
      CAPTURE(c.name);
      const Tensor x = randomTensor(Shape{n, nIn, t}, ++seed);
      const Tensor w = randomTensor(Shape{nIn, 4 * h}, ++seed, -0.5, 0.5);
      const Tensor rw = randomTensor(Shape{h, 4 * h + (c.peepholes ? 3 : 0)}, ++seed, -0.5, 0.5);
      const Tensor b = randomTensor(Shape{4 * h}, ++seed, -0.5, 0.5);
      const Tensor m = c.masked ? mask : Tensor();
      RecurrentState cpuState, hostState;
      if (c.carried) {
        cpuState.h = randomTensor(Shape{n, h}, ++seed);
        cpuState.c = randomTensor(Shape{n, h}, ++seed);
        hostState = RecurrentState{cpuState.h.clone(), cpuState.c.clone()};
      }
      Tensor y(Shape{n, h, t}), ws(Shape{recurrentWorkspaceFloats(n, t, nIn, h, 4)});
      cpu->lstmForward(x, w, rw, b, m, c.act, y, ws, &cpuState);
      const Tensor expected = hostLstmForward(x, w, rw, b, m, c.act, hostState);
      checkClose(y, expected, 1e-5, 1e-4);
      checkClose(cpuState.h, hostState.h, 1e-5, 1e-4);
      checkClose(cpuState.c, hostState.c, 1e-5, 1e-4);
    }
  }

  TEST_CASE("CUDA LSTM cell formula: a wrong peephole would be caught") {
    // The comparison above must be able to fail: the same host loop with the output gate's
    // peephole dropped differs from the CPU's GravesLSTM.
    const int64_t n = 2, nIn = 3, t = 4, h = 5;
    const auto cpu = makeBackend(Device::cpu());
    cpu->bindToCurrentThread(1);
    const Tensor x = randomTensor(Shape{n, nIn, t}, 90);
    const Tensor w = randomTensor(Shape{nIn, 4 * h}, 91, -0.5, 0.5);
    Tensor rw = randomTensor(Shape{h, 4 * h + 3}, 92, -0.5, 0.5);
    const Tensor b = randomTensor(Shape{4 * h}, 93, -0.5, 0.5);
    Tensor y(Shape{n, h, t}), ws(Shape{recurrentWorkspaceFloats(n, t, nIn, h, 4)});
    cpu->lstmForward(x, w, rw, b, Tensor(), {}, y, ws, nullptr);
    for (int64_t j = 0; j < h; ++j) rw.data()[j * (4 * h + 3) + 4 * h + 1] = 0.0f;  // wOO
    RecurrentState state;
    const Tensor wrong = hostLstmForward(x, w, rw, b, Tensor(), {}, state);
    double worst = 0;
    for (int64_t i = 0; i < y.numel(); ++i)
      worst = std::max(worst, std::fabs(double(y.data()[i]) - wrong.data()[i]));
    CHECK(worst > 1e-3);
  }
}
