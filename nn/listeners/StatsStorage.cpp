#include "nn/listeners/StatsStorage.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "nn/core/Error.h"

namespace dl4cpp {

namespace {

// Keeps the records at even indices and the newest one.
template <typename Record>
void thinByHalf(std::vector<Record>& series) {
  if (series.size() < 3) return;
  const size_t last = series.size() - 1;
  size_t kept = 0;
  for (size_t i = 0; i < last; i += 2) series[kept++] = std::move(series[i]);
  series[kept++] = std::move(series[last]);
  series.resize(kept);
}

}  // namespace

StatsStorage::StatsStorage(size_t maxPoints) : maxPoints_(maxPoints) {
  if (maxPoints < kMinMaxPoints)
    throw ConfigError(
        fmt::format("StatsStorage: maxPoints must be >= {}, got {}", kMinMaxPoints, maxPoints));
}

template <typename Record>
void StatsStorage::append(std::vector<Record>& series, Record record) {
  if (series.size() >= maxPoints_) thinByHalf(series);
  series.push_back(std::move(record));
  ++data_.revision;
}

void StatsStorage::setLayerNames(std::vector<std::string> names) {
  const std::lock_guard lock(mutex_);
  data_.layerNames = std::move(names);
}

void StatsStorage::addIteration(IterationRecord record) {
  const std::lock_guard lock(mutex_);
  append(data_.iterations, std::move(record));
}

void StatsStorage::addUpdateRatios(UpdateRatioRecord record) {
  const std::lock_guard lock(mutex_);
  append(data_.updateRatios, std::move(record));
}

void StatsStorage::addValidation(int64_t iteration, int epoch, double accuracy) {
  if (!(accuracy >= 0 && accuracy <= 1))  // also refuses NaN
    throw ConfigError(fmt::format(
        "StatsStorage::addValidation: accuracy must be in [0, 1], got {} (iteration {})", accuracy,
        iteration));
  if (iteration < 0)
    throw ConfigError(
        fmt::format("StatsStorage::addValidation: iteration must be >= 0, got {}", iteration));
  const std::lock_guard lock(mutex_);
  append(data_.validation, ValidationRecord{iteration, epoch, accuracy});
}

StatsSnapshot StatsStorage::snapshot() const {
  const std::lock_guard lock(mutex_);
  return data_;
}

int64_t StatsStorage::revision() const {
  const std::lock_guard lock(mutex_);
  return data_.revision;
}

}  // namespace dl4cpp
