#pragma once
// Helpers for the CUDA tests. Every test that needs a GPU starts with
//   if (!cudaDevicePresent()) return;
// which prints "skipped: no CUDA device": CTest's SKIP_REGULAR_EXPRESSION (test/CMakeLists.txt)
// turns that into a reported skip, so a machine without a GPU never counts these as passed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <vector>

#include <dl4cpp/dl4cpp.h>

namespace cudatest {

inline bool cudaDevicePresent() {
  if (dl4cpp::cudaDeviceCount() > 0) return true;
  std::cout << "skipped: no CUDA device" << std::endl;
  return false;
}

// A host tensor of values uniform in [lo, hi), fixed by `seed`.
inline dl4cpp::Tensor randomTensor(const dl4cpp::Shape& shape, uint64_t seed, double lo = -1,
                                   double hi = 1) {
  dl4cpp::Random random(seed);
  dl4cpp::Tensor t(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(random.uniform(lo, hi));
  return t;
}

// One-hot rows (n, k).
inline dl4cpp::Tensor oneHot(int64_t n, int64_t k, uint64_t seed) {
  dl4cpp::Random random(seed);
  dl4cpp::Tensor t(dl4cpp::Shape{n, k});
  for (int64_t r = 0; r < n; ++r) t.data()[r * k + static_cast<int64_t>(random.nextU64() % k)] = 1;
  return t;
}

// Every element of `gpu` (any device) within abs + rel * |cpu| of `cpu`; reports the worst one.
inline void checkClose(const dl4cpp::Tensor& cpu, const dl4cpp::Tensor& gpu, double abs,
                       double rel = 0) {
  REQUIRE(cpu.shape() == gpu.shape());
  const std::vector<float> a = cpu.toVector(), b = gpu.toVector();
  double worst = 0;
  size_t where = 0;
  bool ok = true;
  for (size_t i = 0; i < a.size(); ++i) {
    const double diff = std::fabs(double(a[i]) - double(b[i]));
    const double limit = abs + rel * std::fabs(double(a[i]));
    if (!(diff <= limit)) ok = false;
    if (!(diff <= worst)) {
      worst = diff;
      where = i;
    }
  }
  INFO("worst difference " << worst << " at element " << where << " of " << a.size()
                           << " (cpu " << (a.empty() ? 0.f : a[where]) << ", gpu "
                           << (b.empty() ? 0.f : b[where]) << ")");
  CHECK(ok);
}

}  // namespace cudatest
