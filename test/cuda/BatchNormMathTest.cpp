// The CUDA backend's batch normalisation (BatchNormMath.h, in the kernels' order of work) and its
// dropout masks (CounterRandom.h), run on the host and checked against the CPU backend (oneDNN),
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
void forwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                     Tensor& mean, Tensor& variance) {
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
    y.data()[i] = cuda::batchNormElement(x.at(i), mean.at(c), cuda::inverseStd(variance.at(c), eps),
                                         gamma.at(c), beta.at(c));
  }
}

// channelGradientSumsKernel + batchNormInputGradientKernel, on the host.
void backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& mean,
              const Tensor& variance, float eps, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  const cuda::BatchNormShape s = shapeOf(x);
  for (int64_t c = 0; c < s.channels; ++c) {
    const float invStd = cuda::inverseStd(variance.at(c), eps);
    double sumDy = 0, sumDyXhat = 0;
    for (int64_t j = 0; j < s.perChannel(); ++j) {
      const int64_t i = s.index(c, j);
      sumDy += dy.at(i);
      sumDyXhat += double(dy.at(i)) * double((x.at(i) - mean.at(c)) * invStd);
    }
    dbeta.data()[c] = static_cast<float>(sumDy);
    dgamma.data()[c] = static_cast<float>(sumDyXhat);
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = s.channelOf(i);
    const float invStd = cuda::inverseStd(variance.at(c), eps);
    dx.data()[i] =
        cuda::batchNormInputGradient(dy.at(i), (x.at(i) - mean.at(c)) * invStd, gamma.at(c), invStd,
                                     dbeta.at(c), dgamma.at(c), s.perChannel());
  }
}

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("BatchNormMath: the CUDA formulas match the CPU backend, images and rows") {
    DeviceContext ctx;
    for (const Shape& xs : {Shape{4, 3, 5, 6}, Shape{7, 5}}) {
      CAPTURE(xs.toString());
      const int64_t c = xs[1];
      const Tensor x = randomTensor(xs, 1, -2, 3), dy = randomTensor(xs, 2);
      const Tensor gamma = randomTensor(Shape{c}, 3, 0.5, 1.5), beta = randomTensor(Shape{c}, 4);
      const float eps = 1e-5f;
      Tensor yCpu(xs), yHost(xs), meanCpu(Shape{c}), meanHost(Shape{c}), varCpu(Shape{c}),
          varHost(Shape{c});
      ctx.backend().batchNormForwardTraining(x, gamma, beta, eps, yCpu, meanCpu, varCpu);
      forwardTraining(x, gamma, beta, eps, yHost, meanHost, varHost);
      checkClose(meanCpu, meanHost, 1e-5, 1e-5);
      checkClose(varCpu, varHost, 1e-5, 1e-4);
      checkClose(yCpu, yHost, 1e-4, 1e-4);

      Tensor dxCpu(xs), dxHost(xs), dgCpu(Shape{c}), dgHost(Shape{c}), dbCpu(Shape{c}),
          dbHost(Shape{c});
      ctx.backend().batchNormBackward(x, dy, gamma, meanCpu, varCpu, eps, dxCpu, dgCpu, dbCpu);
      backward(x, dy, gamma, meanCpu, varCpu, eps, dxHost, dgHost, dbHost);
      checkClose(dgCpu, dgHost, 1e-4, 1e-4);
      checkClose(dbCpu, dbHost, 1e-4, 1e-4);
      checkClose(dxCpu, dxHost, 1e-4, 1e-3);
      // dx may be left out: dgamma and dbeta come out the same.
      Tensor noDx, dg2(Shape{c}), db2(Shape{c});
      ctx.backend().batchNormBackward(x, dy, gamma, meanCpu, varCpu, eps, noDx, dg2, db2);
      CHECK(dg2.toVector() == dgCpu.toVector());
      CHECK(db2.toVector() == dbCpu.toVector());
    }
  }
}
