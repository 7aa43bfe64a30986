// The CUDA backend's batch normalisation (BatchNormMath.h, in the kernels' order of work) and its
// dropout masks (CounterRandom.h), run on the host and checked against the CPU backend,
// without a GPU.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>

#include "cuda/CudaTestUtil.h"
#include "nn/backend/cuda/BatchNormMath.h"

using namespace dl4cpp;
using cudatest::checkClose;
using cudatest::randomTensor;

namespace {

cuda::BatchNormShape shapeOf(const Tensor& x) {
  const int64_t n = x.dim(0), c = x.dim(1);
  return {n, c, x.numel() / (n * c)};
}

// channelMomentsKernel + normalizeKernel, on the host.
void forwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, bool relu,
                     Tensor& y, Tensor& mean, Tensor& variance) {
  const cuda::BatchNormShape s = shapeOf(x);
  for (int64_t c = 0; c < s.channels; ++c) {
    double sum = 0, squares = 0;
    for (int64_t j = 0; j < s.perChannel(); ++j) sum += x.at(s.index(c, j));
    const double mu = sum / double(s.perChannel());
    for (int64_t j = 0; j < s.perChannel(); ++j) {
      const double d = double(x.at(s.index(c, j))) - mu;
      squares += d * d;
    }
    mean.data()[c] = static_cast<float>(mu);
    variance.data()[c] = static_cast<float>(squares / double(s.perChannel()));
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = s.channelOf(i);
    const float v = cuda::batchNormElement(
        x.at(i), mean.at(c), cuda::inverseStd(variance.at(c), eps), gamma.at(c), beta.at(c));
    y.data()[i] = relu ? cuda::fusedRelu(v) : v;
  }
}

// channelGradientSumsKernel + batchNormInputGradientKernel, on the host; y is read with `relu`.
void backward(const Tensor& x, const Tensor& y, const Tensor& dy, const Tensor& gamma,
              const Tensor& mean, const Tensor& variance, float eps, bool relu, Tensor& dx,
              Tensor& dgamma, Tensor& dbeta) {
  const cuda::BatchNormShape s = shapeOf(x);
  const auto g = [&](int64_t i) {
    return relu ? cuda::fusedReluGradient(y.at(i), dy.at(i)) : dy.at(i);
  };
  for (int64_t c = 0; c < s.channels; ++c) {
    const float invStd = cuda::inverseStd(variance.at(c), eps);
    double sumDy = 0, sumDyXhat = 0;
    for (int64_t j = 0; j < s.perChannel(); ++j) {
      const int64_t i = s.index(c, j);
      sumDy += g(i);
      sumDyXhat += double(g(i)) * double((x.at(i) - mean.at(c)) * invStd);
    }
    dbeta.data()[c] = static_cast<float>(sumDy);
    dgamma.data()[c] = static_cast<float>(sumDyXhat);
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = s.channelOf(i);
    const float invStd = cuda::inverseStd(variance.at(c), eps);
    dx.data()[i] = cuda::batchNormInputGradient(g(i), (x.at(i) - mean.at(c)) * invStd, gamma.at(c),
                                                invStd, dbeta.at(c), dgamma.at(c), s.perChannel());
  }
}

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("BatchNormMath: the CUDA formulas match the CPU backend, images and rows") {
    DeviceContext ctx;
    for (const ActivationKind activation : {ActivationKind::IDENTITY, ActivationKind::RELU})
      for (const Shape& xs : {Shape{4, 3, 5, 6}, Shape{7, 5}}) {
        CAPTURE(xs.toString());
        CAPTURE(toString(activation));
        const bool relu = activation == ActivationKind::RELU;
        const int64_t c = xs[1];
        const Tensor x = randomTensor(xs, 1, -2, 3), dy = randomTensor(xs, 2);
        const Tensor gamma = randomTensor(Shape{c}, 3, 0.5, 1.5), beta = randomTensor(Shape{c}, 4);
        const float eps = 1e-5f;
        Tensor yCpu(xs), yHost(xs), meanCpu(Shape{c}), meanHost(Shape{c}), varCpu(Shape{c}),
            varHost(Shape{c});
        ctx.backend().batchNormForwardTraining(x, gamma, beta, eps, activation, yCpu, meanCpu,
                                               varCpu);
        forwardTraining(x, gamma, beta, eps, relu, yHost, meanHost, varHost);
        checkClose(meanCpu, meanHost, 1e-5, 1e-5);
        checkClose(varCpu, varHost, 1e-5, 1e-4);
        checkClose(yCpu, yHost, 1e-4, 1e-4);

        Tensor dxCpu(xs), dxHost(xs), dgCpu(Shape{c}), dgHost(Shape{c}), dbCpu(Shape{c}),
            dbHost(Shape{c});
        ctx.backend().batchNormBackward(x, yCpu, dy, gamma, beta, meanCpu, varCpu, eps, activation,
                                        dxCpu, dgCpu, dbCpu);
        backward(x, yCpu, dy, gamma, meanCpu, varCpu, eps, relu, dxHost, dgHost, dbHost);
        checkClose(dgCpu, dgHost, 1e-4, 1e-4);
        checkClose(dbCpu, dbHost, 1e-4, 1e-4);
        checkClose(dxCpu, dxHost, 1e-4, 1e-3);
        // dx may be left out: dgamma and dbeta come out the same.
        Tensor noDx, dg2(Shape{c}), db2(Shape{c});
        ctx.backend().batchNormBackward(x, yCpu, dy, gamma, beta, meanCpu, varCpu, eps, activation,
                                        noDx, dg2, db2);
        CHECK(dg2.toVector() == dgCpu.toVector());
        CHECK(db2.toVector() == dbCpu.toVector());
      }
  }
}
