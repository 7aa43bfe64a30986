#include "nn/backend/cpu/WeightedMean.h"

#include <algorithm>

namespace dl4cpp::cpu {

namespace {
// out[0, n) = sum_r (examples[r] / total) * buffers[r][offset + i], in replica order; zeros when
// no replica has examples.
void weightedChunk(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                   int64_t total, int64_t offset, int64_t n, float* out) {
  bool first = true;
  for (size_t r = 0; r < buffers.size(); ++r) {  // replica order: a fixed summation order
    if (examples[r] == 0) continue;              // no examples, no vote
    const float w =
        static_cast<float>(static_cast<double>(examples[r]) / static_cast<double>(total));
    const float* src = buffers[r].data() + offset;
    if (first) {
      for (int64_t i = 0; i < n; ++i) out[i] = w * src[i];
      first = false;
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] += w * src[i];
    }
  }
  if (first) std::fill_n(out, n, 0.0f);
}

int64_t sum(const std::vector<int64_t>& examples) {
  int64_t total = 0;
  for (int64_t n : examples) total += n;
  return total;
}
}  // namespace

void weightedMean(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                  std::vector<Tensor>& destinations, int64_t begin, int64_t end) {
  const int64_t total = sum(examples);
  if (total == 0 || begin >= end) return;
  constexpr int64_t kChunk = 1024;  // small enough to stay in L1 while written to every replica
  float mean[kChunk];
  for (int64_t chunk = begin; chunk < end; chunk += kChunk) {
    const int64_t n = std::min(kChunk, end - chunk);
    weightedChunk(buffers, examples, total, chunk, n, mean);
    for (Tensor& d : destinations) std::copy_n(mean, n, d.data() + chunk);
  }
}

void weightedPartialSum(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                        int64_t total, Tensor& destination, int64_t begin, int64_t end) {
  if (begin >= end) return;
  weightedChunk(buffers, examples, std::max<int64_t>(total, 1), begin, end - begin,
                destination.data() + begin);
}

}  // namespace dl4cpp::cpu
