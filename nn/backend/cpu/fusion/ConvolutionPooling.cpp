#include "nn/backend/cpu/fusion/ConvolutionPooling.h"

#include "nn/backend/cpu/AlignedRows.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/direct/DirectConvolution.h"
#include "nn/backend/cpu/direct/DirectWeightGradient.h"
#include "nn/backend/cpu/im2col/Im2colConvolution.h"
#include "nn/backend/cpu/pooling/MaxPooling.h"

namespace dl4cpp::cpu {

namespace {
// `planes` planes of the convolution's output, rounded up to whole cache lines so that the
// threads' buffers never share one.
int64_t outputPlanesFloats(int64_t planes, const Shape& x, const WindowGeometry& convG) {
  return wholeCacheLines(planes * convG.outH(x[2]) * convG.outW(x[3]));
}
// One image's convolution output, O x outH x outW floats.
int64_t imageOutputFloats(const Shape& x, const Shape& w, const WindowGeometry& convG) {
  return outputPlanesFloats(w[0], x, convG);
}
}  // namespace

int64_t convolutionMaxPoolingForwardScratchFloats(const Shape& x, const Shape& w,
                                                  const WindowGeometry& convG, int threads) {
  return im2colScratchFloats(x, w, convG, threads) + threads * imageOutputFloats(x, w, convG);
}

void convolutionMaxPoolingForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& pooled,
                                  const FusedActivation& f, const WindowGeometry& convG,
                                  const WindowGeometry& poolG, uint8_t* argmax, float* scratch) {
  const int threads = omp_get_max_threads();
  const Im2colForward convolution(x, w, b, convG, scratch);
  float* outputs = scratch + im2colScratchFloats(x.shape(), w.shape(), convG, threads);
  const int64_t perThread = imageOutputFloats(x.shape(), w.shape(), convG);
  const int64_t channels = w.dim(0);
  const PlaneExtents e{convG.outH(x.dim(2)), convG.outW(x.dim(3)), pooled.dim(2), pooled.dim(3)};
  const int64_t pooledImage = channels * e.outH * e.outW;
  float* ys = pooled.data();
  parallelForOnThreads(x.dim(0), [&](int64_t n, int thread) {
    float* y = outputs + thread * perThread;
    convolution.image(n, y, thread);
    applyFusedActivation(f, y, channels * e.inH * e.inW);
    maxPoolingForwardPlanes(y, ys + n * pooledImage, argmax ? argmax + n * pooledImage : nullptr,
                            channels, e, poolG);
  });
}

int64_t directConvolutionMaxPoolingForwardScratchFloats(const Shape& x, const WindowGeometry& convG,
                                                        int threads) {
  return threads * outputPlanesFloats(DirectForward::kMaxChannels, x, convG);
}

void directConvolutionMaxPoolingForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                        Tensor& pooled, const FusedActivation& f,
                                        const WindowGeometry& convG, const WindowGeometry& poolG,
                                        uint8_t* argmax, float* scratch) {
  const int64_t convH = convG.outH(x.dim(2)), convW = convG.outW(x.dim(3));
  const DirectForward convolution(x, w, b, convH, convW, convG);
  const int64_t perThread = directConvolutionMaxPoolingForwardScratchFloats(x.shape(), convG, 1);
  const PlaneExtents e{convH, convW, pooled.dim(2), pooled.dim(3)};
  const int64_t pooledPlane = e.outH * e.outW, outChannels = w.dim(0);
  float* ys = pooled.data();
  parallelForOnThreads(convolution.items(), [&](int64_t item, int thread) {
    float* y = scratch + thread * perThread;
    convolution.run(item, y);
    applyFusedActivation(f, y, convolution.channels(item) * convH * convW);
    const int64_t plane = convolution.image(item) * outChannels + convolution.firstChannel(item);
    maxPoolingForwardPlanes(y, ys + plane * pooledPlane,
                            argmax ? argmax + plane * pooledPlane : nullptr,
                            convolution.channels(item), e, poolG);
  });
}

int64_t convolutionMaxPoolingBackwardScratchFloats(const Shape& x, const Shape& w,
                                                   const WindowGeometry& convG, int threads) {
  return directWeightGradientScratchFloats(x, w) + threads * imageOutputFloats(x, w, convG);
}

void convolutionMaxPoolingBackwardWeights(const Tensor& x, const Tensor& dPooled,
                                          const uint8_t* argmax, Tensor& dw, Tensor& db,
                                          const WindowGeometry& convG, const WindowGeometry& poolG,
                                          float* scratch) {
  const int64_t images = x.dim(0), channels = dw.dim(0);
  float* gradients = scratch + directWeightGradientScratchFloats(x.shape(), dw.shape());
  const int64_t perThread = imageOutputFloats(x.shape(), dw.shape(), convG);
  const int64_t perImageSums = channels * (dw.numel() / channels + 1);
  const PlaneExtents e{convG.outH(x.dim(2)), convG.outW(x.dim(3)), dPooled.dim(2), dPooled.dim(3)};
  const int64_t pooledImage = channels * e.outH * e.outW, inImage = x.numel() / images;
  const float* xs = x.data();
  const float* dps = dPooled.data();
  parallelForOnThreads(images, [&](int64_t n, int thread) {
    float* dy = gradients + thread * perThread;
    maxPoolingBackwardPlanes(dps + n * pooledImage, dy, argmax + n * pooledImage, channels, e,
                             poolG);
    directWeightGradientImage(xs + n * inImage, dy, scratch + n * perImageSums, x.shape(),
                              dw.shape(), convG);
  });
  directWeightGradientSum(scratch, images, dw, db);
}

}  // namespace dl4cpp::cpu
