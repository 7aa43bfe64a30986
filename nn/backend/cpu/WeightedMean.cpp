#include <dl4cpp/nn/backend/cpu/WeightedMean.h>

#include <algorithm>

namespace dl4cpp::cpu {

void weightedMean(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                  std::vector<Tensor>& destinations, int64_t begin, int64_t end) {
  int64_t total = 0;
  for (int64_t n : examples) total += n;
  if (total == 0 || begin >= end) return;
  constexpr int64_t kChunk = 1024;  // small enough to stay in L1 while written to every replica
  float mean[kChunk];
  for (int64_t chunk = begin; chunk < end; chunk += kChunk) {
    const int64_t n = std::min(kChunk, end - chunk);
    bool first = true;
    for (size_t r = 0; r < buffers.size(); ++r) {  // replica order: a fixed summation order
      if (examples[r] == 0) continue;              // no examples, no vote
      const float w =
          static_cast<float>(static_cast<double>(examples[r]) / static_cast<double>(total));
      const float* src = buffers[r].data() + chunk;
      if (first) {
        for (int64_t i = 0; i < n; ++i) mean[i] = w * src[i];
        first = false;
      } else {
        for (int64_t i = 0; i < n; ++i) mean[i] += w * src[i];
      }
    }
    for (Tensor& d : destinations) std::copy_n(mean, n, d.data() + chunk);
  }
}

}  // namespace dl4cpp::cpu
