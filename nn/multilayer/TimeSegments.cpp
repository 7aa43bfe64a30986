#include "nn/multilayer/TimeSegments.h"

#include <algorithm>

namespace dl4cpp::detail {

Tensor sliceSteps(const Tensor& x, int64_t start, int64_t len) {
  const Tensor host = x.toHost();
  const int64_t t = host.dim(host.rank() - 1);
  const int64_t rows = host.numel() / t;
  Tensor out = host.rank() == 3 ? Tensor(Shape{host.dim(0), host.dim(1), len}, Device::cpu())
                                : Tensor(Shape{host.dim(0), len}, Device::cpu());
  const float* src = host.data();
  float* dst = out.data();
  for (int64_t r = 0; r < rows; ++r)
    std::copy(src + r * t + start, src + r * t + start + len, dst + r * len);
  return out;
}

namespace {

// A sequence tensor (N, C, T) cut to the segment; anything else whole.
Tensor segmentOfTensor(const Tensor& x, int64_t start, int64_t len) {
  return x.rank() == 3 ? sliceSteps(x, start, len) : x;
}
// A mask (N, T) cut to the segment; an empty one (every step real) stays empty.
Tensor segmentOfMask(const Tensor& mask, int64_t start, int64_t len) {
  return mask.empty() ? mask : sliceSteps(mask, start, len);
}

}  // namespace

DataSet segmentOf(const DataSet& batch, int64_t start, int64_t len) {
  DataSet segment;
  segment.features = segmentOfTensor(batch.features, start, len);
  segment.labels = segmentOfTensor(batch.labels, start, len);
  segment.featuresMask = segmentOfMask(batch.featuresMask, start, len);
  segment.labelsMask = segmentOfMask(batch.labelsMask, start, len);
  return segment;
}

MultiDataSet segmentOf(const MultiDataSet& batch, int64_t start, int64_t len) {
  MultiDataSet segment;
  for (const Tensor& f : batch.features) segment.features.push_back(segmentOfTensor(f, start, len));
  for (const Tensor& l : batch.labels) segment.labels.push_back(segmentOfTensor(l, start, len));
  for (const Tensor& m : batch.featuresMasks)
    segment.featuresMasks.push_back(segmentOfMask(m, start, len));
  for (const Tensor& m : batch.labelsMasks)
    segment.labelsMasks.push_back(segmentOfMask(m, start, len));
  return segment;
}

}  // namespace dl4cpp::detail
