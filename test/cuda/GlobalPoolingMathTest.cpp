// The CUDA kernels' global pooling formulas (GlobalPoolingMath.h), run on the host as the kernels
// run them and checked against the CPU backend, without a GPU.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include "cuda/CudaTestUtil.h"
#include "nn/backend/cuda/GlobalPoolingMath.h"

using namespace dl4cpp;
using cudatest::checkClose;
using cudatest::randomTensor;

TEST_SUITE("cuda") {
  TEST_CASE("GlobalPoolingMath: every pooling type forward and backward matches the CPU backend") {
    auto cpu = makeBackend(Device::cpu());
    cpu->bindToCurrentThread(0);
    uint64_t seed = 900;
    const Shape xs{3, 4, 5, 7};
    const int64_t planes = 12, area = 35;
    struct Case {
      PoolingKind kind;
      int pnorm;
    };
    for (Case c :
         {Case{PoolingKind::MAX, 2}, Case{PoolingKind::AVG, 2}, Case{PoolingKind::SUM, 2},
          Case{PoolingKind::PNORM, 2}, Case{PoolingKind::PNORM, 1}, Case{PoolingKind::PNORM, 3}}) {
      CAPTURE(toString(c.kind));
      CAPTURE(c.pnorm);
      Tensor x = randomTensor(xs, ++seed);
      for (int64_t i = 0; i < area; ++i) x.data()[i] = 0;  // a plane of zeros (PNORM's y = 0)
      x.data()[area + 3] = x.data()[area + 9] = 2;         // a tied maximum
      const Tensor dy = randomTensor(Shape{planes}, ++seed);

      Tensor yCpu(Shape{planes}), y(Shape{planes});
      cpu->globalPoolingForward(c.kind, c.pnorm, x, yCpu);
      for (int64_t p = 0; p < planes; ++p)
        y.data()[p] = cuda::globalPoolPlane(c.kind, c.pnorm, x.data() + p * area, area);
      checkClose(yCpu, y, 1e-6, 1e-6);

      // As the kernels: MAX clears dx and one thread per plane places dy; the others, one thread
      // per element.
      Tensor dxCpu(xs), dx(xs);
      cpu->globalPoolingBackward(c.kind, c.pnorm, x, yCpu, dy, dxCpu);
      if (c.kind == PoolingKind::MAX) {
        for (int64_t p = 0; p < planes; ++p) {
          const int64_t at = cuda::firstIndexOf(x.data() + p * area, area, yCpu.data()[p]);
          if (at >= 0) dx.data()[p * area + at] = dy.data()[p];
        }
      } else {
        for (int64_t i = 0; i < x.numel(); ++i)
          dx.data()[i] = cuda::globalPoolBackwardElement(
              c.kind, c.pnorm, x.data()[i], yCpu.data()[i / area], dy.data()[i / area], area);
      }
      checkClose(dxCpu, dx, 1e-6, 1e-5);
    }
  }
}
