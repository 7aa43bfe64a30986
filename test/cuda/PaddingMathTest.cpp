// The CUDA kernels' zero-padding index arithmetic (PaddingMath.h), run on the host and checked
// against the CPU backend, without a GPU.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include "cuda/CudaTestUtil.h"
#include "nn/backend/cuda/PaddingMath.h"

using namespace dl4cpp;
using cudatest::checkClose;
using cudatest::randomTensor;

TEST_SUITE("cuda") {
  TEST_CASE("PaddingMath: padding and cropping match the CPU backend exactly") {
    auto cpu = makeBackend(Device::cpu());
    cpu->bindToCurrentThread(0);
    uint64_t seed = 980;
    for (const Padding2d& p :
         {Padding2d{1, 1, 1, 1}, Padding2d{0, 2, 3, 0}, Padding2d{0, 0, 0, 0}}) {
      CAPTURE(p.top);
      CAPTURE(p.left);
      const Shape xs{2, 3, 4, 5};
      const Shape ys{2, 3, 4 + p.top + p.bottom, 5 + p.left + p.right};
      const cuda::PaddingShape s{4, 5, p};
      const Tensor x = randomTensor(xs, ++seed), dy = randomTensor(ys, ++seed);
      Tensor yCpu(ys), y(ys);
      cpu->zeroPaddingForward(x, yCpu, p);
      for (int64_t i = 0; i < y.numel(); ++i) y.data()[i] = cuda::paddedElement(x.data(), s, i);
      checkClose(yCpu, y, 0);
      Tensor dxCpu(xs), dx(xs);
      cpu->zeroPaddingBackward(dy, dxCpu, p);
      for (int64_t i = 0; i < dx.numel(); ++i) dx.data()[i] = cuda::croppedElement(dy.data(), s, i);
      checkClose(dxCpu, dx, 0);
    }
  }
}
