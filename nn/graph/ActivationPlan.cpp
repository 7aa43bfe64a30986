#include "nn/graph/ActivationPlan.h"

#include <algorithm>
#include <numeric>

namespace dl4cpp {

ActivationPlan::ActivationPlan(const std::vector<Buffer>& buffers) : offsets_(buffers.size(), 0) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].valuesPerExample > buffers[b].valuesPerExample;
  });
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> taken;  // [begin, end) of placed overlapping buffers
  for (size_t i : order) {
    const Buffer& b = buffers[i];
    const int64_t size = rounded(b.valuesPerExample);
    total_ += size;
    taken.clear();
    for (size_t j : placed)
      if (buffers[j].first <= b.last && b.first <= buffers[j].last)
        taken.emplace_back(offsets_[j], offsets_[j] + rounded(buffers[j].valuesPerExample));
    std::sort(taken.begin(), taken.end());
    int64_t offset = 0;
    for (const auto& [begin, end] : taken) {
      if (offset + size <= begin) break;
      offset = std::max(offset, end);
    }
    offsets_[i] = offset;
    peak_ = std::max(peak_, offset + size);
    placed.push_back(i);
  }
}

}  // namespace dl4cpp
