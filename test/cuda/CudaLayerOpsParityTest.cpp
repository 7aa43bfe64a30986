// The CUDA backend's global pooling, local response normalisation, zero padding and copy against
// the CPU backend (the reference), on the same random inputs.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include "cuda/CudaTestUtil.h"

using namespace dl4cpp;
using cudatest::Backends;
using cudatest::checkClose;
using cudatest::checkTrainsAlike;
using cudatest::cudaDevicePresent;
using cudatest::kGpu;
using cudatest::randomTensor;

TEST_SUITE("cuda") {
  TEST_CASE("CUDA parity: global pooling of every type, forward and backward") {
    if (!cudaDevicePresent()) return;
    Backends b;
    int seed = 700;
    const Shape xs{4, 6, 7, 5};
    const Shape ys{4, 6};
    struct Case {
      PoolingKind kind;
      int pnorm;
    };
    for (Case c : {Case{PoolingKind::MAX, 2}, Case{PoolingKind::AVG, 2}, Case{PoolingKind::SUM, 2},
                   Case{PoolingKind::PNORM, 2}, Case{PoolingKind::PNORM, 3}}) {
      CAPTURE(toString(c.kind));
      CAPTURE(c.pnorm);
      const Tensor x = randomTensor(xs, ++seed), dy = randomTensor(ys, ++seed);
      Tensor yCpu(ys), yGpu(ys, kGpu);
      b.cpu->globalPoolingForward(c.kind, c.pnorm, x, yCpu);
      b.gpu->globalPoolingForward(c.kind, c.pnorm, x.to(kGpu), yGpu);
      checkClose(yCpu, yGpu, 1e-5, 1e-5);
      Tensor dxCpu(xs), dxGpu(xs, kGpu);
      b.cpu->globalPoolingBackward(c.kind, c.pnorm, x, yCpu, dy, dxCpu);
      b.gpu->globalPoolingBackward(c.kind, c.pnorm, x.to(kGpu), yCpu.to(kGpu), dy.to(kGpu), dxGpu);
      checkClose(dxCpu, dxGpu, 1e-5, 1e-5);
    }
  }

  TEST_CASE("CUDA parity: local response normalisation forward (both modes) and backward") {
    if (!cudaDevicePresent()) return;
    Backends b;
    int seed = 730;
    const Shape xs{3, 9, 6, 5};
    for (const LrnParams& p :
         {LrnParams{}, LrnParams{3, 1, 0.5f, 0.75f}, LrnParams{7, 1.5f, 0.3f, 1.2f}}) {
      CAPTURE(p.depth);
      const Tensor x = randomTensor(xs, ++seed, -3, 3), dy = randomTensor(xs, ++seed);
      Tensor yCpu(xs), yGpu(xs, kGpu), wsCpu, wsGpu;
      b.cpu->lrnForward(p, x, yCpu, true, wsCpu);
      b.gpu->lrnForward(p, x.to(kGpu), yGpu, true, wsGpu);
      checkClose(yCpu, yGpu, 1e-6, 1e-5);
      Tensor inferred(xs, kGpu), unused;
      b.gpu->lrnForward(p, x.to(kGpu), inferred, false, unused);
      checkClose(yCpu, inferred, 1e-6, 1e-5);
      Tensor dxCpu(xs), dxGpu(xs, kGpu);
      b.cpu->lrnBackward(p, x, dy, dxCpu, wsCpu);
      b.gpu->lrnBackward(p, x.to(kGpu), dy.to(kGpu), dxGpu, wsGpu);
      checkClose(dxCpu, dxGpu, 1e-6, 1e-5);
    }
    // Backward without a training-mode forward is an error, as on the CPU.
    Tensor dx(xs, kGpu), empty;
    CHECK_THROWS_AS(b.gpu->lrnBackward(LrnParams{}, Tensor(xs, kGpu), Tensor(xs, kGpu), dx, empty),
                    BackendError);
  }

  TEST_CASE("CUDA parity: zero padding and its crop, and copies, are exact") {
    if (!cudaDevicePresent()) return;
    Backends b;
    const Padding2d p{1, 2, 0, 3};
    const Shape xs{2, 3, 4, 5}, ys{2, 3, 7, 8};
    const Tensor x = randomTensor(xs, 760), dy = randomTensor(ys, 761);
    Tensor yCpu(ys), yGpu(ys, kGpu);
    b.cpu->zeroPaddingForward(x, yCpu, p);
    b.gpu->zeroPaddingForward(x.to(kGpu), yGpu, p);
    checkClose(yCpu, yGpu, 0);
    Tensor dxCpu(xs), dxGpu(xs, kGpu);
    b.cpu->zeroPaddingBackward(dy, dxCpu, p);
    b.gpu->zeroPaddingBackward(dy.to(kGpu), dxGpu, p);
    checkClose(dxCpu, dxGpu, 0);
    Tensor copied(xs, kGpu);
    b.gpu->copy(x.to(kGpu), copied);
    CHECK(copied.toVector() == x.toVector());
  }

  TEST_CASE("CUDA parity: a GlobalPooling -> LossLayer network trains as on the CPU") {
    if (!cudaDevicePresent()) return;
    auto conf =
        NeuralNetConfiguration::Builder()
            .seed(4)
            .updater(Adam(0.01))
            .activation(Activation::TANH)
            .list()
            .layer(ZeroPaddingLayer::Builder(1).build())
            .layer(ConvolutionLayer::Builder(3, 3).nOut(3).build())
            .layer(LocalResponseNormalization::Builder(1, 3, 0.2, 0.75).build())
            .layer(GlobalPoolingLayer::Builder(PoolingType::PNORM).build())
            .layer(LossLayer::Builder(LossFunction::MCXENT).activation(Activation::SOFTMAX).build())
            .setInputType(InputType::convolutionalFlat(5, 5, 2))
            .build();
    MultiLayerNetwork cpu(conf, Device::cpu(), 1), gpu(conf, kGpu);
    cpu.init();
    gpu.init();
    const Tensor features = randomTensor(Shape{6, 50}, 790);
    Tensor labels(Shape{6, 3});
    for (int64_t r = 0; r < 6; ++r) labels.data()[r * 3 + r % 3] = 1;
    const DataSet data(features, labels);
    checkTrainsAlike(cpu, gpu, data);
  }
}
