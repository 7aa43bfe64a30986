// The CUDA kernels' local response normalisation formulas (LrnMath.h), run on the host as the
// kernels run them and checked against the CPU backend, workspace included, without a GPU.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include "cuda/CudaTestUtil.h"
#include "nn/backend/cuda/LrnMath.h"

using namespace dl4cpp;
using cudatest::checkClose;
using cudatest::randomTensor;

TEST_SUITE("cuda") {
  TEST_CASE("LrnMath: forward, workspace and backward match the CPU backend") {
    auto cpu = makeBackend(Device::cpu());
    cpu->bindToCurrentThread(0);
    uint64_t seed = 950;
    const Shape xs{2, 6, 3, 5};
    const int64_t total = xs.numel();
    for (const LrnParams& p : {LrnParams{5, 2, 1e-4f, 0.75f}, LrnParams{3, 1, 0.5f, 0.75f},
                               LrnParams{1, 0.5f, 0.2f, 0.6f}, LrnParams{7, 1.5f, 0.3f, 1.2f}}) {
      CAPTURE(p.depth);
      CAPTURE(p.beta);
      const Tensor x = randomTensor(xs, ++seed, -3, 3), dy = randomTensor(xs, ++seed);
      Tensor yCpu(xs), workspaceCpu;
      cpu->lrnForward(p, x, yCpu, true, workspaceCpu);
      REQUIRE(workspaceCpu.numel() >= 2 * total);

      const cuda::LrnShape s{xs[1], xs[2] * xs[3], p};
      Tensor y(xs), workspace(Shape{2 * total});
      for (int64_t i = 0; i < total; ++i)
        y.data()[i] =
            cuda::lrnForwardElement(x.data(), s, i, workspace.data(), workspace.data() + total);
      checkClose(yCpu, y, 1e-6, 1e-5);
      checkClose(workspaceCpu.view(0, Shape{2 * total}), workspace, 1e-6, 1e-5);
      for (int64_t i = 0; i < total; ++i)  // inference: no workspace, the same output
        CHECK(cuda::lrnForwardElement(x.data(), s, i, nullptr, nullptr) == y.data()[i]);

      Tensor dxCpu(xs), dx(xs);
      cpu->lrnBackward(p, x, dy, dxCpu, workspaceCpu);
      for (int64_t i = 0; i < total; ++i)
        dx.data()[i] = cuda::lrnBackwardElement(x.data(), dy.data(), workspace.data(),
                                                workspace.data() + total, s, i);
      checkClose(dxCpu, dx, 1e-6, 1e-5);
    }
  }
}
