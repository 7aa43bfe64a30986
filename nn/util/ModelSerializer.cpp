#include <dl4cpp/nn/util/ModelSerializer.h>

#include <array>
#include <cstring>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <zlib.h>

#include <dl4cpp/nn/util/AtomicFile.h>

namespace dl4cpp {

namespace {

// --- Layout (docs/model-format.md) -----------------------------------------------------------------

constexpr std::array<char, 8> kMagic{'D', 'L', '4', 'C', 'P', 'P', 'M', 0x1a};
constexpr size_t kPreambleSize = 8 + 4;          // magic, format version
constexpr size_t kV1HeaderRest = 4 + 4;          // section count, CRC32 of the header
constexpr size_t kV1SectionHeader = 4 + 8 + 4;   // tag, payload length, payload CRC32
constexpr size_t kV1CountersSize = 8 + 4 + 8 + 8;  // iteration, epoch, minibatches in epoch, score

using Tag = std::array<char, 4>;
constexpr Tag kConfigurationTag{'C', 'O', 'N', 'F'};
constexpr Tag kParamsTag{'P', 'A', 'R', 'M'};
constexpr Tag kUpdaterTag{'U', 'P', 'D', 'T'};
constexpr Tag kCountersTag{'C', 'N', 'T', 'R'};

std::string tagName(const Tag& t) {
  std::string s;
  for (char c : t) s += (c >= 0x20 && c < 0x7f) ? std::string(1, c) : fmt::format("\\x{:02x}", uint8_t(c));
  return s;
}

uint32_t crc32Of(std::span<const std::byte> bytes) {
  return static_cast<uint32_t>(
      ::crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

// --- Writing ---------------------------------------------------------------------------------------

// Little-endian, whatever the host: a file moves between machines.
class Writer {
 public:
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    u64(bits);
  }
  void raw(const void* data, size_t n) {
    const auto* p = static_cast<const std::byte*>(data);
    out_.insert(out_.end(), p, p + n);
  }
  void floats(const Tensor& t) {
    const float* p = t.data();
    out_.reserve(out_.size() + static_cast<size_t>(t.numel()) * 4);
    for (int64_t i = 0; i < t.numel(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, p + i, 4);
      u32(bits);
    }
  }
  std::vector<std::byte>& bytes() { return out_; }

 private:
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
  }
  std::vector<std::byte> out_;
};

void appendSection(Writer& file, const Tag& tag, const std::vector<std::byte>& payload) {
  file.raw(tag.data(), tag.size());
  file.u64(payload.size());
  file.u32(crc32Of(payload));
  file.raw(payload.data(), payload.size());
}

// --- Reading ---------------------------------------------------------------------------------------

// A bounds-checked cursor over untrusted bytes: every read first checks that the bytes are there.
class Reader {
 public:
  Reader(std::span<const std::byte> bytes, const std::string& source)
      : bytes_(bytes), source_(source) {}

  size_t offset() const { return offset_; }
  size_t remaining() const { return bytes_.size() - offset_; }
  const std::string& source() const { return source_; }

  std::span<const std::byte> take(size_t n, const char* what) {
    if (n > remaining())
      throw DataTruncatedError(fmt::format("{}: truncated model file: {} needs {} bytes at offset "
                                           "{}, only {} left (file is {} bytes)",
                                           source_, what, n, offset_, remaining(), bytes_.size()));
    const auto s = bytes_.subspan(offset_, n);
    offset_ += n;
    return s;
  }
  uint32_t u32(const char* what) { return static_cast<uint32_t>(le(take(4, what))); }
  uint64_t u64(const char* what) { return le(take(8, what)); }

  static uint64_t le(std::span<const std::byte> b) {
    uint64_t v = 0;
    for (size_t i = b.size(); i-- > 0;) v = (v << 8) | static_cast<uint8_t>(b[i]);
    return v;
  }

 private:
  std::span<const std::byte> bytes_;
  std::string source_;
  size_t offset_ = 0;
};

// What a file holds, whatever format version wrote it.
struct Contents {
  std::string configurationJson;
  std::span<const std::byte> params;                // float32 little-endian
  std::optional<std::span<const std::byte>> updater;  // float32 little-endian
  int64_t iteration = 0;
  int epoch = 0;
  int64_t minibatchesInEpoch = 0;
  double score = 0;
};

void readCountersV1(std::span<const std::byte> payload, Contents& c, const std::string& source) {
  if (payload.size() != kV1CountersSize)
    throw DataFormatError(fmt::format("{}: counters section holds {} bytes, format version 1 "
                                      "defines {}", source, payload.size(), kV1CountersSize));
  Reader r(payload, source);
  const uint64_t iteration = r.u64("iteration");
  const uint32_t epoch = r.u32("epoch");
  const uint64_t minibatches = r.u64("minibatches in epoch");
  const uint64_t scoreBits = r.u64("score");
  if (iteration > uint64_t(INT64_MAX) || epoch > uint32_t(INT32_MAX) || minibatches > uint64_t(INT64_MAX))
    throw DataFormatError(fmt::format("{}: counters out of range (iteration {}, epoch {}, "
                                      "minibatches in epoch {})", source, iteration, epoch, minibatches));
  c.iteration = static_cast<int64_t>(iteration);
  c.epoch = static_cast<int>(epoch);
  c.minibatchesInEpoch = static_cast<int64_t>(minibatches);
  std::memcpy(&c.score, &scoreBits, 8);
}

// Format version 1: after the preamble, section count and header CRC32 (over the 16 bytes
// before it), then the sections, in any order, each at most once; CONF, PARM and CNTR required.
Contents readVersion1(std::span<const std::byte> bytes, const std::string& source) {
  Reader r(bytes, source);
  r.take(kPreambleSize, "the header");
  const uint32_t sectionCount = r.u32("the section count");
  const uint32_t storedHeaderCrc = r.u32("the header checksum");
  if (crc32Of(bytes.first(kPreambleSize + 4)) != storedHeaderCrc)
    throw ChecksumError(fmt::format("{}: header checksum mismatch (the file is corrupted)", source));

  Contents c;
  std::optional<std::span<const std::byte>> conf, params, counters;
  for (uint32_t i = 0; i < sectionCount; ++i) {
    const size_t at = r.offset();
    const auto tagBytes = r.take(4, "a section tag");
    Tag tag;
    std::memcpy(tag.data(), tagBytes.data(), 4);
    const uint64_t length = r.u64("a section length");
    const uint32_t storedCrc = r.u32("a section checksum");
    if (length > r.remaining())
      throw DataTruncatedError(fmt::format("{}: truncated model file: section {} at offset {} "
                                           "declares {} bytes, only {} left", source, tagName(tag),
                                           at, length, r.remaining()));
    const auto payload = r.take(static_cast<size_t>(length), "a section");
    if (crc32Of(payload) != storedCrc)
      throw ChecksumError(fmt::format("{}: checksum mismatch in section {} at offset {} (the file "
                                      "is corrupted)", source, tagName(tag), at));
    std::optional<std::span<const std::byte>>* slot =
        tag == kConfigurationTag ? &conf
        : tag == kParamsTag      ? &params
        : tag == kUpdaterTag     ? &c.updater
        : tag == kCountersTag    ? &counters
                                 : nullptr;
    if (!slot)
      throw DataFormatError(fmt::format("{}: unknown section {} at offset {}", source, tagName(tag), at));
    if (slot->has_value())
      throw DataFormatError(fmt::format("{}: section {} appears twice (second at offset {})", source,
                                        tagName(tag), at));
    *slot = payload;
  }
  if (r.remaining() != 0)
    throw DataFormatError(fmt::format("{}: {} unexpected bytes after the last section (offset {})",
                                      source, r.remaining(), r.offset()));
  for (const auto& [section, name] : {std::pair{&conf, "CONF (configuration)"},
                                      std::pair{&params, "PARM (parameters)"},
                                      std::pair{&counters, "CNTR (counters)"}})
    if (!section->has_value())
      throw DataFormatError(fmt::format("{}: required section {} is missing", source, name));

  c.configurationJson.assign(reinterpret_cast<const char*>(conf->data()), conf->size());
  c.params = *params;
  readCountersV1(*counters, c, source);
  return c;
}

// Copies little-endian float32 values into `dst` (sizes checked by the caller).
void readFloats(std::span<const std::byte> src, Tensor dst) {
  float* out = dst.data();
  for (size_t i = 0; i < src.size() / 4; ++i) {
    const auto bits = static_cast<uint32_t>(Reader::le(src.subspan(i * 4, 4)));
    std::memcpy(out + i, &bits, 4);
  }
}

// Values a float32 section holds, or DataFormatError when its length is not a multiple of 4.
int64_t floatCount(std::span<const std::byte> section, const char* what, const std::string& source) {
  if (section.size() % 4 != 0)
    throw DataFormatError(fmt::format("{}: {} section is {} bytes, not a whole number of float32 "
                                      "values", source, what, section.size()));
  return static_cast<int64_t>(section.size() / 4);
}

}  // namespace

std::vector<std::byte> ModelSerializer::toBytes(const MultiLayerNetwork& model, bool saveUpdater) {
  if (!model.isInitialized())
    throw ConfigError("ModelSerializer: the model has no parameters to save (call init() first)");
  if (!model.params().device().isCpu())
    throw ConfigError("ModelSerializer: only models on the CPU can be saved");

  Writer file;
  file.raw(kMagic.data(), kMagic.size());
  file.u32(kFormatVersion);
  file.u32(saveUpdater ? 4 : 3);
  file.u32(crc32Of(file.bytes()));

  const std::string json = model.getConfiguration().toJson();
  std::vector<std::byte> conf(json.size());
  std::memcpy(conf.data(), json.data(), json.size());
  appendSection(file, kConfigurationTag, conf);

  Writer params;
  params.floats(model.params());
  appendSection(file, kParamsTag, params.bytes());

  if (saveUpdater) {
    Writer state;
    state.floats(model.updaterState());
    appendSection(file, kUpdaterTag, state.bytes());
  }

  Writer counters;
  counters.u64(static_cast<uint64_t>(model.getIterationCount()));
  counters.u32(static_cast<uint32_t>(model.getEpochCount()));
  counters.u64(static_cast<uint64_t>(model.getMinibatchesInEpoch()));
  counters.f64(model.score());
  appendSection(file, kCountersTag, counters.bytes());
  return std::move(file.bytes());
}

MultiLayerNetwork ModelSerializer::restoreFromBytes(std::span<const std::byte> bytes,
                                                    bool loadUpdater, const std::string& source) {
  Reader r(bytes, source);
  const auto magic = r.take(kMagic.size(), "the magic number");
  if (std::memcmp(magic.data(), kMagic.data(), kMagic.size()) != 0)
    throw DataFormatError(fmt::format("{}: not a dl4cpp model file (bad magic number)", source));
  const uint32_t version = r.u32("the format version");

  // One reader per format version ever written; each returns the same Contents.
  Contents c;
  switch (version) {
    case 1:
      c = readVersion1(bytes, source);
      break;
    default:
      throw VersionError(fmt::format("{}: model format version {} cannot be read by this dl4cpp "
                                     "(it reads versions 1 to {}){}", source, version,
                                     kFormatVersion,
                                     version > kFormatVersion ? "; it was written by a newer dl4cpp" : ""));
  }

  MultiLayerConfiguration conf;
  try {
    conf = MultiLayerConfiguration::fromJson(c.configurationJson);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: configuration section: {}", source, e.what()));
  }
  // Checked before anything is allocated: the parameter count follows from the configuration,
  // and the section that must hold it is bounded by the file's size.
  int64_t expectedParams = 0;
  for (const auto& layer : conf.layers) expectedParams += layer->numParams();
  const int64_t storedParams = floatCount(c.params, "PARM (parameters)", source);
  if (storedParams != expectedParams)
    throw DataMismatchError(fmt::format("{}: the file holds {} parameters but its configuration "
                                        "has {}", source, storedParams, expectedParams));

  MultiLayerNetwork model(std::move(conf));
  model.init();
  readFloats(c.params, model.params());
  if (loadUpdater && c.updater) {
    const int64_t storedState = floatCount(*c.updater, "UPDT (updater state)", source);
    if (storedState != model.updaterState().numel())
      throw DataMismatchError(fmt::format("{}: the file holds {} updater state values but its "
                                          "configuration's updaters need {}",
                                          source, storedState, model.updaterState().numel()));
    readFloats(*c.updater, model.updaterState());
  }
  model.setIterationCount(c.iteration);
  model.setEpochCount(c.epoch);
  model.setMinibatchesInEpoch(c.minibatchesInEpoch);
  model.setScore(c.score);
  return model;
}

void ModelSerializer::writeModel(const MultiLayerNetwork& model, const std::filesystem::path& path,
                                 bool saveUpdater) {
  writeFileAtomically(path, toBytes(model, saveUpdater));
}

MultiLayerNetwork ModelSerializer::restoreMultiLayerNetwork(const std::filesystem::path& path,
                                                            bool loadUpdater) {
  const std::vector<std::byte> bytes = readWholeFile(path);
  return restoreFromBytes(bytes, loadUpdater, path.string());
}

}  // namespace dl4cpp
