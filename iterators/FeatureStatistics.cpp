#include <dl4cpp/iterators/FeatureStatistics.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace dl4cpp {

FeatureStatistics FeatureStatistics::collect(DataSetIterator& iterator, const std::string& who) {
  if (iterator.resetSupported()) iterator.reset();
  FeatureStatistics s;
  std::vector<double> m2;  // Welford: sum of squared differences from the running mean
  for (int64_t batchIndex = 0; iterator.hasNext(); ++batchIndex) {
    const DataSet batch = iterator.next();
    const int64_t n = batch.numExamples();
    if (n == 0) continue;
    const int64_t columns = batch.features.numel() / n;
    if (s.mean.empty()) {
      s.mean.assign(columns, 0.0);
      m2.assign(columns, 0.0);
      s.min.assign(columns, std::numeric_limits<double>::infinity());
      s.max.assign(columns, -std::numeric_limits<double>::infinity());
    } else if (columns != static_cast<int64_t>(s.mean.size())) {
      throw DataMismatchError(who + ": batch " + std::to_string(batchIndex) + " has " +
                              std::to_string(columns) + " feature columns, the first had " +
                              std::to_string(s.mean.size()));
    }
    const float* f = batch.features.data();
    for (int64_t r = 0; r < n; ++r) {
      ++s.count;
      for (int64_t c = 0; c < columns; ++c) {
        const double x = f[r * columns + c];
        if (!std::isfinite(x))
          throw DataError(who + ": batch " + std::to_string(batchIndex) + ", row " +
                          std::to_string(r) + ", column " + std::to_string(c) +
                          " holds a non-finite value (" + std::to_string(x) + ")");
        const double delta = x - s.mean[c];
        s.mean[c] += delta / static_cast<double>(s.count);
        m2[c] += delta * (x - s.mean[c]);
        s.min[c] = std::min(s.min[c], x);
        s.max[c] = std::max(s.max[c], x);
      }
    }
  }
  if (iterator.resetSupported()) iterator.reset();
  if (s.count == 0)
    throw DataError(who + ": the iterator yields no example to compute statistics from");
  s.std.resize(m2.size());
  for (size_t c = 0; c < m2.size(); ++c) s.std[c] = std::sqrt(m2[c] / static_cast<double>(s.count));
  return s;
}

}  // namespace dl4cpp
