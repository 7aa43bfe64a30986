// Every Backend op on the CUDA backend against the CPU backend (the reference), on the same random
// inputs, with explicit tolerances: float sums in another order differ by a few ulps per term.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "cuda/CudaTestUtil.h"
#include "nn/backend/cuda/CudaMemory.h"

using namespace dl4cpp;
using cudatest::Backends;
using cudatest::checkClose;
using cudatest::convGeometries;
using cudatest::cudaDevicePresent;
using cudatest::kGpu;
using cudatest::randomTensor;

TEST_SUITE("cuda") {
  TEST_CASE("CUDA tensors: fill + copies in every direction + at + clone + allocator reuse") {
    if (!cudaDevicePresent()) return;
    const Tensor host = randomTensor(Shape{3, 1000}, 1);
    Tensor gpu = host.to(kGpu);
    CHECK(gpu.device() == kGpu);
    CHECK(gpu.toVector() == host.toVector());  // copies are exact
    CHECK(gpu.at(2999) == host.at(2999));
    Tensor other(Shape{3, 1000}, kGpu);
    CHECK(other.toVector() == std::vector<float>(3000, 0.0f));  // new tensors are zero
    other.copyFrom(gpu);                                        // device -> device
    CHECK(other.clone().toVector() == host.toVector());
    Tensor back(Shape{2, 1000});
    back.copyFrom(other.rows(1, 3));  // a view at an offset, device -> host
    CHECK(back.toVector() == host.rows(1, 3).toVector());
    other.rows(0, 1).fill(2.5f);
    CHECK(other.at(999) == 2.5f);
    CHECK(other.at(1000) == host.at(1000));
    CHECK(other.allClose(other.to(Device::cpu()), 0.0f));

    // A block freed by one tensor serves the next tensor of its size class.
    const auto before = cuda::allocatorStats(0);
    { Tensor scratch(Shape{12345}, kGpu); }
    { Tensor again(Shape{12000}, kGpu); }
    const auto after = cuda::allocatorStats(0);
    CHECK(after.cacheHits >= before.cacheHits + 1);
    CHECK(after.rawAllocations <= before.rawAllocations + 1);
  }

  TEST_CASE(
      "CUDA parity: convolution forward + backward-data + backward-weights, apart and together") {
    if (!cudaDevicePresent()) return;
    Backends b;
    int seed = 10;
    for (const WindowGeometry& g : convGeometries()) {
      CAPTURE(g.kernelH);
      CAPTURE(g.strideW);
      CAPTURE(g.dilationH);
      const int64_t n = 3, c = 4, h = 11, w = 9, o = 5;
      const Shape xs{n, c, h, w}, ws{o, c, g.kernelH, g.kernelW};
      const Shape ys{n, o, g.outH(h), g.outW(w)};
      const Tensor x = randomTensor(xs, ++seed), wt = randomTensor(ws, ++seed);
      const Tensor bias = randomTensor(Shape{o}, ++seed), dy = randomTensor(ys, ++seed);

      Tensor yCpu(ys), yGpu(ys, kGpu);
      b.cpu->convolutionForward(x, wt, bias, yCpu, g);
      b.gpu->convolutionForward(x.to(kGpu), wt.to(kGpu), bias.to(kGpu), yGpu, g);
      checkClose(yCpu, yGpu, 1e-4, 1e-4);

      Tensor dxCpu(xs), dxGpu(xs, kGpu);
      b.cpu->convolutionBackwardData(dy, wt, dxCpu, g);
      b.gpu->convolutionBackwardData(dy.to(kGpu), wt.to(kGpu), dxGpu, g);
      checkClose(dxCpu, dxGpu, 1e-4, 1e-4);

      Tensor dwCpu(ws), dwGpu(ws, kGpu), dbCpu(Shape{o}), dbGpu(Shape{o}, kGpu);
      b.cpu->convolutionBackwardWeights(x, dy, dwCpu, dbCpu, g);
      b.gpu->convolutionBackwardWeights(x.to(kGpu), dy.to(kGpu), dwGpu, dbGpu, g);
      checkClose(dwCpu, dwGpu, 1e-3, 1e-4);
      checkClose(dbCpu, dbGpu, 1e-3, 1e-4);

      // Both gradients in one call (ConvolutionOps::convolutionBackward).
      Tensor dxBoth(xs, kGpu), dwBoth(ws, kGpu), dbBoth(Shape{o}, kGpu);
      b.gpu->convolutionBackward(x.to(kGpu), dy.to(kGpu), wt.to(kGpu), dxBoth, dwBoth, dbBoth, g);
      checkClose(dxCpu, dxBoth, 1e-4, 1e-4);
      checkClose(dwCpu, dwBoth, 1e-3, 1e-4);
      checkClose(dbCpu, dbBoth, 1e-3, 1e-4);

      Tensor noBias;  // without a bias the output is the bare convolution
      b.gpu->convolutionForward(x.to(kGpu), wt.to(kGpu), noBias, yGpu, g);
      b.cpu->convolutionForward(x, wt, noBias, yCpu, g);
      checkClose(yCpu, yGpu, 1e-4, 1e-4);
    }
  }

  TEST_CASE("CUDA parity: max and average pooling forward and backward with padding") {
    if (!cudaDevicePresent()) return;
    Backends b;
    int seed = 40;
    const auto geometries = cudatest::poolGeometries();
    const WindowGeometry& lenet = geometries[0];
    for (const WindowGeometry& g : geometries)
      for (PoolingKind kind : {PoolingKind::MAX, PoolingKind::AVG}) {
        CAPTURE(g.kernelH);
        CAPTURE(static_cast<int>(kind));
        const Shape xs{2, 3, 8, 7}, ys{2, 3, g.outH(8), g.outW(7)};
        const Tensor x = randomTensor(xs, ++seed), dy = randomTensor(ys, ++seed);
        Tensor yCpu(ys), yGpu(ys, kGpu), wsCpu, wsGpu;
        b.cpu->poolingForward(kind, x, yCpu, g, true, wsCpu);
        b.gpu->poolingForward(kind, x.to(kGpu), yGpu, g, true, wsGpu);
        checkClose(yCpu, yGpu, 1e-6, 1e-6);
        Tensor dxCpu(xs), dxGpu(xs, kGpu);
        b.cpu->poolingBackward(kind, dy, dxCpu, g, wsCpu);
        b.gpu->poolingBackward(kind, dy.to(kGpu), dxGpu, g, wsGpu);
        checkClose(dxCpu, dxGpu, 1e-6, 1e-6);
      }
    // MAX backward without a training-mode forward is an error, as on the CPU.
    Tensor dx(Shape{2, 3, 8, 7}, kGpu), empty;
    CHECK_THROWS_AS(
        b.gpu->poolingBackward(PoolingKind::MAX, Tensor(Shape{2, 3, 4, 3}, kGpu), dx, lenet, empty),
        BackendError);
  }

  TEST_CASE("CUDA parity: inner product forward and backward") {
    if (!cudaDevicePresent()) return;
    Backends b;
    const int64_t n = 7, nIn = 33, nOut = 12;
    const Tensor x = randomTensor(Shape{n, nIn}, 60), w = randomTensor(Shape{nOut, nIn}, 61);
    const Tensor bias = randomTensor(Shape{nOut}, 62), dy = randomTensor(Shape{n, nOut}, 63);
    Tensor yCpu(Shape{n, nOut}), yGpu(Shape{n, nOut}, kGpu);
    b.cpu->innerProductForward(x, w, bias, yCpu);
    b.gpu->innerProductForward(x.to(kGpu), w.to(kGpu), bias.to(kGpu), yGpu);
    checkClose(yCpu, yGpu, 1e-5, 1e-5);
    Tensor dxCpu(Shape{n, nIn}), dxGpu(Shape{n, nIn}, kGpu);
    b.cpu->innerProductBackwardData(dy, w, dxCpu);
    b.gpu->innerProductBackwardData(dy.to(kGpu), w.to(kGpu), dxGpu);
    checkClose(dxCpu, dxGpu, 1e-5, 1e-5);
    Tensor dwCpu(Shape{nOut, nIn}), dwGpu(Shape{nOut, nIn}, kGpu);
    Tensor dbCpu(Shape{nOut}), dbGpu(Shape{nOut}, kGpu);
    b.cpu->innerProductBackwardWeights(x, dy, dwCpu, dbCpu);
    b.gpu->innerProductBackwardWeights(x.to(kGpu), dy.to(kGpu), dwGpu, dbGpu);
    checkClose(dwCpu, dwGpu, 1e-5, 1e-5);
    checkClose(dbCpu, dbGpu, 1e-5, 1e-5);
  }

  TEST_CASE("CUDA parity: activations forward and backward") {
    if (!cudaDevicePresent()) return;
    Backends b;
    int seed = 70;
    for (const auto& [kind, name] : kActivationNames)
      for (const Shape& s : {Shape{9, 13}, Shape{3, 5, 4, 7}}) {  // softmax over NCHW channels
        const std::string kindName = name;
        CAPTURE(kindName);
        CAPTURE(s.toString());
        const Tensor x = randomTensor(s, ++seed, -7, 7), dy = randomTensor(s, ++seed);
        Tensor yCpu(s), yGpu(s, kGpu), inPlaceY = x.to(kGpu);
        b.cpu->activationForward(kind, 0.1f, x, yCpu);
        b.gpu->activationForward(kind, 0.1f, x.to(kGpu), yGpu);
        b.gpu->activationForward(kind, 0.1f, inPlaceY, inPlaceY);
        checkClose(yCpu, yGpu, 1e-6, 1e-5);
        checkClose(yCpu, inPlaceY, 1e-6, 1e-5);
        Tensor dxCpu(s), dxGpu(s, kGpu);
        b.cpu->activationBackward(kind, 0.1f, x, yCpu, dy, dxCpu);
        b.gpu->activationBackward(kind, 0.1f, x.to(kGpu), yCpu.to(kGpu), dy.to(kGpu), dxGpu);
        checkClose(dxCpu, dxGpu, 1e-6, 1e-5);
        Tensor inPlace = dy.to(kGpu);  // dx may alias dy
        b.gpu->activationBackward(kind, 0.1f, x.to(kGpu), yCpu.to(kGpu), inPlace, inPlace);
        checkClose(dxCpu, inPlace, 1e-6, 1e-5);
      }
  }

  TEST_CASE("CUDA parity: losses fused with their activation (gradients and summed scores)") {
    if (!cudaDevicePresent()) return;
    Backends b;
    int seed = 90;
    for (const cudatest::LossCase& c : cudatest::kLossCases) {
      const std::string loss = toString(c.loss), activation = toString(c.activation);
      CAPTURE(loss);
      CAPTURE(activation);
      const int64_t n = 17, k = 6;
      const Tensor z = randomTensor(Shape{n, k}, ++seed, -2, 2);
      Tensor y(Shape{n, k});
      b.cpu->activationForward(c.activation, 0.0f, z, y);
      const Tensor labels = cudatest::labelsFor(c.loss, n, k, ++seed);
      Tensor dzCpu(Shape{n, k}), dzGpu(Shape{n, k}, kGpu);
      const double cpu =
          b.cpu->lossForwardBackward(c.loss, c.activation, 0.0f, z, y, labels, dzCpu);
      const double gpu = b.gpu->lossForwardBackward(c.loss, c.activation, 0.0f, z.to(kGpu),
                                                    y.to(kGpu), labels.to(kGpu), dzGpu);
      CHECK(gpu == doctest::Approx(cpu).epsilon(1e-5));
      checkClose(dzCpu, dzGpu, 1e-5, 1e-5);
      CHECK(b.gpu->lossScore(c.loss, y.to(kGpu), labels.to(kGpu)) ==
            doctest::Approx(b.cpu->lossScore(c.loss, y, labels)).epsilon(1e-5));
    }
  }

  TEST_CASE("CUDA parity: every updater with every regularisation + scale + sum of squares") {
    if (!cudaDevicePresent()) return;
    Backends b;
    int seed = 120;
    for (const UpdaterParams& u : cudatest::everyUpdater())
      for (const RegularizationParams& r : cudatest::everyRegularization()) {
        CAPTURE(static_cast<int>(u.kind));
        CAPTURE(r.l1);
        CAPTURE(r.l2);
        CAPTURE(r.weightDecay);
        const int64_t n = 1000;
        Tensor pCpu = randomTensor(Shape{n}, ++seed), gCpu = randomTensor(Shape{n}, ++seed);
        Tensor sCpu(Shape{std::max<int64_t>(1, n * u.stateSizePerParam())});
        sCpu.fill(static_cast<float>(u.initialStateValue()));
        Tensor pGpu = pCpu.to(kGpu), gGpu = gCpu.to(kGpu), sGpu = sCpu.to(kGpu);
        for (int64_t iteration = 0; iteration < 3; ++iteration) {  // state carries over
          b.cpu->updaterStep(u, r, iteration, pCpu, gCpu, sCpu);
          b.gpu->updaterStep(u, r, iteration, pGpu, gGpu, sGpu);
        }
        checkClose(pCpu, pGpu, 1e-6, 1e-5);
        checkClose(gCpu, gGpu, 1e-6, 1e-5);  // l1 and l2 were added to the gradient in place
        checkClose(sCpu, sGpu, 1e-6, 1e-5);
      }
    Tensor x = randomTensor(Shape{4099}, 200);
    Tensor xGpu = x.to(kGpu);
    CHECK(b.gpu->sumOfSquares(xGpu) == doctest::Approx(b.cpu->sumOfSquares(x)).epsilon(1e-9));
    b.cpu->scale(x, 0.25f);
    b.gpu->scale(xGpu, 0.25f);
    checkClose(x, xGpu, 0, 0);  // one multiplication: exact
  }

  TEST_CASE("CUDA parity: batch normalisation, moving averages, dropout masks and products") {
    if (!cudaDevicePresent()) return;
    Backends b;
    for (const ActivationKind activation : {ActivationKind::IDENTITY, ActivationKind::RELU})
      for (const Shape& xs : {Shape{8, 6, 7, 5}, Shape{16, 9}}) {
        CAPTURE(xs.toString());
        CAPTURE(toString(activation));
        const int64_t c = xs[1];
        const Tensor x = randomTensor(xs, 31, -2, 3), dy = randomTensor(xs, 32);
        const Tensor gamma = randomTensor(Shape{c}, 33, 0.5, 1.5),
                     beta = randomTensor(Shape{c}, 34);
        const float eps = 1e-5f;
        Tensor yCpu(xs), yGpu(xs, kGpu), mCpu(Shape{c}), mGpu(Shape{c}, kGpu), vCpu(Shape{c}),
            vGpu(Shape{c}, kGpu);
        b.cpu->batchNormForwardTraining(x, gamma, beta, eps, activation, yCpu, mCpu, vCpu);
        b.gpu->batchNormForwardTraining(x.to(kGpu), gamma.to(kGpu), beta.to(kGpu), eps, activation,
                                        yGpu, mGpu, vGpu);
        checkClose(mCpu, mGpu, 1e-5, 1e-5);
        checkClose(vCpu, vGpu, 1e-5, 1e-4);
        checkClose(yCpu, yGpu, 1e-4, 1e-4);

        // The backward pass reads the training pass's y (the CPU's, on both devices, so that
        // both mask the same elements).
        const Tensor y = yCpu.clone();
        b.cpu->batchNormForwardInference(x, gamma, beta, mCpu, vCpu, eps, activation, yCpu);
        b.gpu->batchNormForwardInference(x.to(kGpu), gamma.to(kGpu), beta.to(kGpu), mGpu, vGpu, eps,
                                         activation, yGpu);
        checkClose(yCpu, yGpu, 1e-4, 1e-4);

        Tensor dxCpu(xs), dxGpu(xs, kGpu), dgCpu(Shape{c}), dgGpu(Shape{c}, kGpu), dbCpu(Shape{c}),
            dbGpu(Shape{c}, kGpu);
        b.cpu->batchNormBackward(x, y, dy, gamma, beta, mCpu, vCpu, eps, activation, dxCpu, dgCpu,
                                 dbCpu);
        b.gpu->batchNormBackward(x.to(kGpu), y.to(kGpu), dy.to(kGpu), gamma.to(kGpu), beta.to(kGpu),
                                 mGpu, vGpu, eps, activation, dxGpu, dgGpu, dbGpu);
        checkClose(dgCpu, dgGpu, 1e-3, 1e-4);
        checkClose(dbCpu, dbGpu, 1e-3, 1e-4);
        checkClose(dxCpu, dxGpu, 1e-4, 1e-3);
      }
    const Tensor a = randomTensor(Shape{1000}, 35), v = randomTensor(Shape{1000}, 36);
    Tensor aCpu = a.clone(), aGpu = a.to(kGpu);
    b.cpu->movingAverage(aCpu, v, 0.9f);
    b.gpu->movingAverage(aGpu, v.to(kGpu), 0.9f);
    checkClose(aCpu, aGpu, 1e-6, 1e-6);

    // The counter-based masks are the same numbers on both devices.
    Tensor maskCpu(Shape{100003}), maskGpu(Shape{100003}, kGpu);
    b.cpu->dropoutMask(77, 0.6f, maskCpu);
    b.gpu->dropoutMask(77, 0.6f, maskGpu);
    CHECK(maskGpu.toVector() == maskCpu.toVector());
    Tensor zCpu(Shape{1000}), zGpu(Shape{1000}, kGpu);
    b.cpu->multiply(a, v, zCpu);
    b.gpu->multiply(a.to(kGpu), v.to(kGpu), zGpu);
    CHECK(zGpu.toVector() == zCpu.toVector());
  }

  TEST_CASE("CUDA parity: sums of absolute values, batched sums and clipping by value") {
    if (!cudaDevicePresent()) return;
    Backends b;
    const Tensor a = randomTensor(Shape{4099}, 210), c = randomTensor(Shape{17}, 211);
    const Tensor aGpu = a.to(kGpu), cGpu = c.to(kGpu);
    // The middle one is empty: its sums are 0.
    const Tensor xs[] = {a, a.view(0, Shape{0}), c};
    const Tensor gpu[] = {aGpu, aGpu.view(0, Shape{0}), cGpu};
    CHECK(b.gpu->sumOfAbsolutes(gpu[0]) ==
          doctest::Approx(b.cpu->sumOfAbsolutes(xs[0])).epsilon(1e-9));
    double cpuSums[3], gpuSums[3];
    b.cpu->sumsOfAbsolutes(xs, 3, cpuSums);
    b.gpu->sumsOfAbsolutes(gpu, 3, gpuSums);
    for (int i = 0; i < 3; ++i) CHECK(gpuSums[i] == doctest::Approx(cpuSums[i]).epsilon(1e-9));
    CHECK(gpuSums[1] == 0.0);
    b.cpu->sumsOfSquares(xs, 3, cpuSums);
    b.gpu->sumsOfSquares(gpu, 3, gpuSums);
    for (int i = 0; i < 3; ++i) CHECK(gpuSums[i] == doctest::Approx(cpuSums[i]).epsilon(1e-9));

    Tensor y = randomTensor(Shape{4099}, 212);
    y.data()[5] = std::numeric_limits<float>::quiet_NaN();
    Tensor yGpu = y.to(kGpu);
    b.cpu->clipByValue(y, 0.3f);
    b.gpu->clipByValue(yGpu, 0.3f);
    Tensor back = yGpu.to(Device::cpu());
    CHECK(std::isnan(back.at(5)));
    y.data()[5] = back.data()[5] = 0.0f;
    checkClose(y, back, 0, 0);  // comparisons only: exact
  }
}
