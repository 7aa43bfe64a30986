#include "parallel/ParameterAverager.h"

#include <algorithm>

#include "nn/backend/Devices.h"

namespace dl4cpp::parallel {

std::pair<int64_t, int64_t> ParameterAverager::slice(int64_t length, int part, int parts) {
  constexpr int64_t kBlock = 16;  // floats per 64-byte cache line
  const int64_t blocks = (length + kBlock - 1) / kBlock;
  const int64_t begin = std::min(length, blocks * part / parts * kBlock);
  const int64_t end = std::min(length, blocks * (part + 1) / parts * kBlock);
  return {begin, end};
}

void ParameterAverager::average(const std::vector<Tensor>& buffers,
                                const std::vector<int64_t>& examples,
                                std::vector<Tensor>& destinations, int64_t begin, int64_t end) {
  devices::averageSlice(buffers, examples, destinations, begin, end, Device::cpu());
}

}  // namespace dl4cpp::parallel
