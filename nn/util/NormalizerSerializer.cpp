#include "nn/util/NormalizerSerializer.h"

#include <fmt/format.h>

#include <cstdint>

#include "iterators/ImagePreProcessingScaler.h"
#include "iterators/NormalizerMinMaxScaler.h"
#include "iterators/NormalizerStandardize.h"
#include "nn/util/ModelFileBytes.h"

namespace dl4cpp {

namespace {

using modelfile::Reader;
using modelfile::Writer;

// The layout is in docs/model-format.md (section NORM).
constexpr uint32_t kStandardize = 1, kMinMax = 2, kImageScaler = 3;
constexpr uint32_t kColumns = 0, kChannels = 1;
constexpr uint64_t kStatisticBytes = 16;  // one f64 in each of the two arrays

DataFormatError malformed(const std::string& source, const std::string& what) {
  return DataFormatError(fmt::format("{}: section NORM (normalizer): {}", source, what));
}

void requireBytes(const Reader& r, uint64_t n, const char* what, const std::string& source) {
  if (r.remaining() < n)
    throw malformed(source, fmt::format("{} needs {} more bytes at offset {}, the section has {}",
                                        what, n, r.offset(), r.remaining()));
}

// The grouping, the statistics count G, then two arrays of G values.
void writeStatistics(Writer& w, FeatureGrouping grouping, const std::vector<double>& first,
                     const std::vector<double>& second) {
  w.u32(grouping == FeatureGrouping::Channels ? kChannels : kColumns);
  w.u64(first.size());
  for (double v : first) w.f64(v);
  for (double v : second) w.f64(v);
}

// What writeStatistics wrote, into the fields `first` and `second` of the statistics; the
// section must end with them.
FeatureStatistics readStatistics(Reader& r, const char* type,
                                 std::vector<double> FeatureStatistics::*first,
                                 std::vector<double> FeatureStatistics::*second,
                                 const std::string& source) {
  requireBytes(r, 4 + 8, type, source);
  const uint32_t grouping = r.u32("the grouping");
  if (grouping != kColumns && grouping != kChannels)
    throw malformed(source,
                    fmt::format("unknown grouping {} (0: per column, 1: per channel)", grouping));
  const uint64_t count = r.u64("the statistics count");
  if (count > r.remaining() / kStatisticBytes || count * kStatisticBytes != r.remaining())
    throw malformed(source, fmt::format("{} declares {} columns or channels, which take {} bytes "
                                        "each, but {} bytes follow",
                                        type, count, kStatisticBytes, r.remaining()));
  FeatureStatistics stats;
  stats.grouping = grouping == kChannels ? FeatureGrouping::Channels : FeatureGrouping::Columns;
  for (auto field : {first, second}) {
    std::vector<double>& values = stats.*field;
    values.reserve(count);
    for (uint64_t i = 0; i < count; ++i) values.push_back(r.f64("a statistic"));
  }
  return stats;
}

// `make()`, with what the normalizer's constructor or setters refuse as a DataFormatError.
template <typename Make>
std::unique_ptr<DataNormalization> built(const Make& make, const std::string& source) {
  try {
    return make();
  } catch (const Error& e) {
    throw malformed(source, e.what());
  }
}

}  // namespace

std::vector<std::byte> NormalizerSerializer::toBytes(const DataNormalization& normalizer) {
  if (!normalizer.isFitted())
    throw ConfigError("NormalizerSerializer: the normalizer is not fitted (call fit() first)");
  Writer w;
  if (const auto* s = dynamic_cast<const NormalizerStandardize*>(&normalizer)) {
    w.u32(kStandardize);
    writeStatistics(w, s->getFeatureStats().grouping, s->getMean(), s->getStd());
  } else if (const auto* m = dynamic_cast<const NormalizerMinMaxScaler*>(&normalizer)) {
    w.u32(kMinMax);
    w.f64(m->getTargetMin());
    w.f64(m->getTargetMax());
    writeStatistics(w, m->getFeatureStats().grouping, m->getMin(), m->getMax());
  } else if (const auto* i = dynamic_cast<const ImagePreProcessingScaler*>(&normalizer)) {
    w.u32(kImageScaler);
    w.f64(i->getMinRange());
    w.f64(i->getMaxRange());
    w.u32(static_cast<uint32_t>(i->getMaxBits()));
  } else {
    throw ConfigError(
        "NormalizerSerializer: only NormalizerStandardize, NormalizerMinMaxScaler and "
        "ImagePreProcessingScaler can be saved");
  }
  return std::move(w.bytes());
}

std::unique_ptr<DataNormalization> NormalizerSerializer::fromBytes(std::span<const std::byte> bytes,
                                                                   const std::string& source) {
  Reader r(bytes, source);
  requireBytes(r, 4, "the normalizer type", source);
  const uint32_t type = r.u32("the normalizer type");
  std::unique_ptr<DataNormalization> normalizer;
  switch (type) {
    case kStandardize: {
      const FeatureStatistics stats = readStatistics(
          r, "NormalizerStandardize", &FeatureStatistics::mean, &FeatureStatistics::std, source);
      normalizer = built(
          [&] {
            auto n = std::make_unique<NormalizerStandardize>();
            n->setFeatureStats(stats);
            return n;
          },
          source);
      break;
    }
    case kMinMax: {
      requireBytes(r, 8 + 8, "NormalizerMinMaxScaler's target range", source);
      const double minRange = r.f64("minRange"), maxRange = r.f64("maxRange");
      const FeatureStatistics stats = readStatistics(
          r, "NormalizerMinMaxScaler", &FeatureStatistics::min, &FeatureStatistics::max, source);
      normalizer = built(
          [&] {
            auto n = std::make_unique<NormalizerMinMaxScaler>(minRange, maxRange);
            n->setFeatureStats(stats);
            return n;
          },
          source);
      break;
    }
    case kImageScaler: {
      requireBytes(r, 8 + 8 + 4, "ImagePreProcessingScaler", source);
      const double minRange = r.f64("minRange"), maxRange = r.f64("maxRange");
      const uint32_t maxBits = r.u32("maxBits");
      if (maxBits > static_cast<uint32_t>(ImagePreProcessingScaler::kMaxBits))
        throw malformed(source, fmt::format("ImagePreProcessingScaler: maxBits must be in 1..{}, "
                                            "got {}",
                                            ImagePreProcessingScaler::kMaxBits, maxBits));
      normalizer = built(
          [&] {
            return std::make_unique<ImagePreProcessingScaler>(minRange, maxRange,
                                                              static_cast<int>(maxBits));
          },
          source);
      break;
    }
    default:
      throw malformed(source, fmt::format("unknown normalizer type {} (1: NormalizerStandardize, "
                                          "2: NormalizerMinMaxScaler, 3: "
                                          "ImagePreProcessingScaler)",
                                          type));
  }
  if (r.remaining() != 0)
    throw malformed(source, fmt::format("{} unexpected bytes after the normalizer (offset {})",
                                        r.remaining(), r.offset()));
  return normalizer;
}

}  // namespace dl4cpp
