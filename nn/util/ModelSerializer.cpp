#include "nn/util/ModelSerializer.h"

#include <fmt/format.h>
#include <zlib.h>

#include <array>
#include <bit>
#include <cstring>
#include <functional>
#include <optional>
#include <utility>

#include "nn/core/AtomicFile.h"
#include "nn/core/OutputPath.h"
#include "nn/core/QuoteForMessage.h"
#include "nn/util/ModelFileBytes.h"
#include "nn/util/NormalizerSerializer.h"

namespace dl4cpp {

namespace {

constexpr std::string_view kModelFile = "a model file";

// --- Layout (docs/model-format.md)
// -----------------------------------------------------------------

constexpr std::array<char, 8> kMagic{'D', 'L', '4', 'C', 'P', 'P', 'M', 0x1a};
constexpr size_t kPreambleSize = 8 + 4;            // magic, format version
constexpr size_t kV1CountersSize = 8 + 4 + 8 + 8;  // iteration, epoch, minibatches in epoch, score

using Tag = std::array<char, 4>;
constexpr Tag kConfigurationTag{'C', 'O', 'N', 'F'};
constexpr Tag kParamsTag{'P', 'A', 'R', 'M'};
constexpr Tag kUpdaterTag{'U', 'P', 'D', 'T'};
constexpr Tag kCountersTag{'C', 'N', 'T', 'R'};
constexpr Tag kLayerStateTag{'S', 'T', 'A', 'T'};  // format version 2 on
constexpr Tag kNormalizerTag{'N', 'O', 'R', 'M'};  // format version 3 on

// A tag read from a file may hold any bytes.
std::string tagName(const Tag& t) { return escapeForMessage(std::string_view(t.data(), t.size())); }

uint32_t crc32Of(std::span<const std::byte> bytes) {
  return static_cast<uint32_t>(
      ::crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

// --- Writing
// ---------------------------------------------------------------------------------------

using modelfile::Writer;

void appendSection(Writer& file, const Tag& tag, const std::vector<std::byte>& payload) {
  file.raw(tag.data(), tag.size());
  file.u64(payload.size());
  file.u32(crc32Of(payload));
  file.raw(payload.data(), payload.size());
}

// --- Reading
// ---------------------------------------------------------------------------------------

using modelfile::ReadAt;
using modelfile::Reader;
using modelfile::readFrom;

// Where a section lies, as its header says.
struct Section {
  Tag tag{};
  uint64_t offset = 0;  // of the section header
  uint64_t payloadOffset = 0;
  uint64_t length = 0;
  uint32_t crc = 0;
};

// The sections of a file, from its headers alone: everything about a file that can be checked
// without reading its payloads. So the file reader can reject what is not a model, or a model
// whose sections do not add up to the file's size, after a few dozen bytes.
struct Layout {
  std::optional<Section> configuration, params, updater, counters, layerState, normalizer;
};

// Format versions 1 to 4: after the preamble, section count and header CRC32 (over the 16 bytes
// before it), then the sections, in any order, each at most once; CONF, PARM and CNTR required.
// Version 2 adds STAT (the layer state), present when the configuration has layer state;
// version 3 NORM (a normalizer), present when one was saved with the network; versions 4 and 5
// have version 3's layout (their configurations may hold schedules, and from 5 frozen layers).
Layout readSections(Reader& r, const ReadAt& readAt, uint32_t version, const std::string& source) {
  const uint32_t sectionCount = r.u32("the section count");
  const uint32_t storedHeaderCrc = r.u32("the header checksum");
  std::array<std::byte, kPreambleSize + 4> header{};
  readAt(0, header);
  if (crc32Of(header) != storedHeaderCrc)
    throw ChecksumError(
        fmt::format("{}: header checksum mismatch (the file is corrupted)", source));

  // Each tag may occur once, so one section more than the version's tags is always an error:
  // however large the count, the loop reads at most that many.
  Layout layout;
  for (uint32_t i = 0; i < sectionCount; ++i) {
    Section s;
    s.offset = r.offset();
    s.tag = std::bit_cast<Tag>(r.bytes<4>("a section tag"));
    s.length = r.u64("a section length");
    s.crc = r.u32("a section checksum");
    if (s.length > r.remaining())
      throw DataTruncatedError(
          fmt::format("{}: truncated model file: section {} at offset {} "
                      "declares {} bytes, only {} left",
                      source, tagName(s.tag), s.offset, s.length, r.remaining()));
    s.payloadOffset = r.skip(s.length, "a section");
    std::optional<Section>* slot = s.tag == kConfigurationTag                ? &layout.configuration
                                   : s.tag == kParamsTag                     ? &layout.params
                                   : s.tag == kUpdaterTag                    ? &layout.updater
                                   : s.tag == kCountersTag                   ? &layout.counters
                                   : s.tag == kLayerStateTag && version >= 2 ? &layout.layerState
                                   : s.tag == kNormalizerTag && version >= 3 ? &layout.normalizer
                                                                             : nullptr;
    if (!slot)
      throw DataFormatError(
          fmt::format("{}: unknown section {} at offset {}", source, tagName(s.tag), s.offset));
    if (slot->has_value())
      throw DataFormatError(fmt::format("{}: section {} appears twice (second at offset {})",
                                        source, tagName(s.tag), s.offset));
    *slot = s;
  }
  if (r.remaining() != 0)
    throw DataFormatError(fmt::format("{}: {} unexpected bytes after the last section (offset {})",
                                      source, r.remaining(), r.offset()));
  for (const auto& [section, name] : {std::pair{&layout.configuration, "CONF (configuration)"},
                                      std::pair{&layout.params, "PARM (parameters)"},
                                      std::pair{&layout.counters, "CNTR (counters)"}})
    if (!section->has_value())
      throw DataFormatError(fmt::format("{}: required section {} is missing", source, name));
  return layout;
}

// The layout of a model file of `size` bytes: magic number, then one reader per format version
// ever written, each returning the same Layout.
Layout readLayout(const ReadAt& readAt, uint64_t size, const std::string& source) {
  Reader r(readAt, size, source);
  if (r.bytes<kMagic.size()>("the magic number") !=
      std::bit_cast<std::array<std::byte, kMagic.size()>>(kMagic))
    throw DataFormatError(fmt::format("{}: not a dl4cpp model file (bad magic number)", source));
  const uint32_t version = r.u32("the format version");
  switch (version) {
    case 1:
    case 2:
    case 3:
    case 4:  // version 3's layout; its configuration may hold schedules (docs/model-format.md)
    case 5:  // version 4's layout; its configuration may hold frozen layers
      return readSections(r, readAt, version, source);
    default:
      throw VersionError(fmt::format(
          "{}: model format version {} cannot be read by this dl4cpp "
          "(it reads versions 1 to {}){}",
          source, version, ModelSerializer::kFormatVersion,
          version > ModelSerializer::kFormatVersion ? "; it was written by a newer dl4cpp" : ""));
  }
}

// What a file holds.
struct Contents {
  std::string configurationJson;
  std::span<const std::byte> params;                     // float32 little-endian
  std::optional<std::span<const std::byte>> updater;     // float32 little-endian
  std::optional<std::span<const std::byte>> layerState;  // float32 little-endian
  std::optional<std::span<const std::byte>> normalizer;  // NormalizerSerializer's bytes
  int64_t iteration = 0;
  int epoch = 0;
  int64_t minibatchesInEpoch = 0;
  double score = 0;
};

void readCountersV1(std::span<const std::byte> payload, Contents& c, const std::string& source) {
  if (payload.size() != kV1CountersSize)
    throw DataFormatError(
        fmt::format("{}: counters section holds {} bytes, format version 1 "
                    "defines {}",
                    source, payload.size(), kV1CountersSize));
  Reader r(payload, source);
  const uint64_t iteration = r.u64("iteration");
  const uint32_t epoch = r.u32("epoch");
  const uint64_t minibatches = r.u64("minibatches in epoch");
  const double score = r.f64("score");
  if (iteration > uint64_t(INT64_MAX) || epoch > uint32_t(INT32_MAX) ||
      minibatches > uint64_t(INT64_MAX))
    throw DataFormatError(
        fmt::format("{}: counters out of range (iteration {}, epoch {}, "
                    "minibatches in epoch {})",
                    source, iteration, epoch, minibatches));
  c.iteration = static_cast<int64_t>(iteration);
  c.epoch = static_cast<int>(epoch);
  c.minibatchesInEpoch = static_cast<int64_t>(minibatches);
  c.score = score;
}

// The payloads of the sections `layout` found in `bytes`, each checked against its CRC32.
Contents readContents(std::span<const std::byte> bytes, const Layout& layout,
                      const std::string& source) {
  auto payload = [&](const Section& s) {
    const auto p = bytes.subspan(s.payloadOffset, s.length);
    if (crc32Of(p) != s.crc)
      throw ChecksumError(
          fmt::format("{}: checksum mismatch in section {} at offset {} (the file "
                      "is corrupted)",
                      source, tagName(s.tag), s.offset));
    return p;
  };
  Contents c;
  const auto conf = payload(*layout.configuration);
  c.configurationJson.assign(reinterpret_cast<const char*>(conf.data()), conf.size());
  c.params = payload(*layout.params);
  if (layout.updater) c.updater = payload(*layout.updater);
  if (layout.layerState) c.layerState = payload(*layout.layerState);
  if (layout.normalizer) c.normalizer = payload(*layout.normalizer);
  readCountersV1(payload(*layout.counters), c, source);
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
int64_t floatCount(std::span<const std::byte> section, const char* what,
                   const std::string& source) {
  if (section.size() % 4 != 0)
    throw DataFormatError(
        fmt::format("{}: {} section is {} bytes, not a whole number of float32 "
                    "values",
                    source, what, section.size()));
  return static_cast<int64_t>(section.size() / 4);
}

// A model file's bytes, its headers read first (a few dozen bytes): a file that is not a model,
// or whose sections do not add up to its size, is rejected before the rest is read.
std::vector<std::byte> readModelFile(const std::filesystem::path& path) {
  const RegularFile file(path, "a dl4cpp model file");
  readLayout(
      [&](uint64_t offset, std::span<std::byte> out) { readFileAt(file, path, offset, out); },
      file.size(), path.string());
  return readWholeFile(file, path);
}

}  // namespace

std::vector<std::byte> ModelSerializer::toBytes(const MultiLayerNetwork& model, bool saveUpdater,
                                                const DataNormalization* normalizer) {
  if (!model.isInitialized())
    throw ConfigError("ModelSerializer: the model has no parameters to save (call init() first)");
  if (!model.params().onHost())
    throw ConfigError("ModelSerializer: only models on the CPU can be saved");
  std::vector<std::byte> normalizerBytes;
  if (normalizer) {
    normalizerBytes = NormalizerSerializer::toBytes(*normalizer);
    normalizer->requireInput(model.getConfiguration().inputType);
  }

  Writer file;
  file.raw(kMagic.data(), kMagic.size());
  file.u32(kFormatVersion);
  const bool hasLayerState = model.layerState().numel() > 0;
  file.u32(3 + (saveUpdater ? 1 : 0) + (hasLayerState ? 1 : 0) + (normalizer ? 1 : 0));
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

  if (hasLayerState) {
    Writer state;
    state.floats(model.layerState());
    appendSection(file, kLayerStateTag, state.bytes());
  }

  if (normalizer) appendSection(file, kNormalizerTag, normalizerBytes);

  Writer counters;
  counters.u64(static_cast<uint64_t>(model.getIterationCount()));
  counters.u32(static_cast<uint32_t>(model.getEpochCount()));
  counters.u64(static_cast<uint64_t>(model.getMinibatchesInEpoch()));
  counters.f64(model.score());
  appendSection(file, kCountersTag, counters.bytes());
  return std::move(file.bytes());
}

ModelAndNormalizer ModelSerializer::restoreModelAndNormalizerFromBytes(
    std::span<const std::byte> bytes, bool loadUpdater, const std::string& source) {
  const Contents c = readContents(bytes, readLayout(readFrom(bytes), bytes.size(), source), source);

  MultiLayerConfiguration conf;
  try {
    conf = MultiLayerConfiguration::fromJson(c.configurationJson);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: configuration section: {}", source, e.what()));
  }
  // Checked before anything is allocated: the parameter count follows from the configuration,
  // and the section that must hold it is bounded by the file's size.
  int64_t expectedParams = 0, expectedLayerState = 0;
  for (const auto& layer : conf.layers) {
    expectedParams += layer->numParams();
    expectedLayerState += layer->stateSize();
  }
  const int64_t storedParams = floatCount(c.params, "PARM (parameters)", source);
  if (storedParams != expectedParams)
    throw DataMismatchError(
        fmt::format("{}: the file holds {} parameters but its configuration "
                    "has {}",
                    source, storedParams, expectedParams));

  const int64_t storedLayerState =
      c.layerState ? floatCount(*c.layerState, "STAT (layer state)", source) : 0;
  if (storedLayerState != expectedLayerState)
    throw DataMismatchError(fmt::format(
        "{}: the file holds {} layer state values{} but its configuration has {}", source,
        storedLayerState, c.layerState ? "" : " (no STAT section)", expectedLayerState));

  std::shared_ptr<DataNormalization> normalizer;
  if (c.normalizer) {
    normalizer = NormalizerSerializer::fromBytes(*c.normalizer, source);
    try {
      normalizer->requireInput(conf.inputType);
    } catch (const DataMismatchError& e) {
      throw DataMismatchError(fmt::format("{}: section NORM: {}", source, e.what()));
    }
  }

  MultiLayerNetwork model(std::move(conf));
  model.init();
  readFloats(c.params, model.params());
  if (c.layerState) readFloats(*c.layerState, model.layerState());
  if (loadUpdater && c.updater) {
    const int64_t storedState = floatCount(*c.updater, "UPDT (updater state)", source);
    if (storedState != model.updaterState().numel())
      throw DataMismatchError(
          fmt::format("{}: the file holds {} updater state values but its "
                      "configuration's updaters need {}",
                      source, storedState, model.updaterState().numel()));
    readFloats(*c.updater, model.updaterState());
  }
  model.setIterationCount(c.iteration);
  model.setEpochCount(c.epoch);
  model.setMinibatchesInEpoch(c.minibatchesInEpoch);
  model.setScore(c.score);
  return {std::move(model), std::move(normalizer)};
}

MultiLayerNetwork ModelSerializer::restoreFromBytes(std::span<const std::byte> bytes,
                                                    bool loadUpdater, const std::string& source) {
  return restoreModelAndNormalizerFromBytes(bytes, loadUpdater, source).model;
}

void ModelSerializer::writeModel(const MultiLayerNetwork& model, const std::filesystem::path& path,
                                 bool saveUpdater, const DataNormalization* normalizer) {
  checkOutputPath(path, kModelFile);
  writeFileAtomically(path, toBytes(model, saveUpdater, normalizer), kModelFile);
}

void ModelSerializer::addNormalizerToModel(const std::filesystem::path& path,
                                           const DataNormalization& normalizer) {
  const std::vector<std::byte> bytes = readModelFile(path);
  const bool hasUpdater =
      readLayout(readFrom(bytes), bytes.size(), path.string()).updater.has_value();
  const ModelAndNormalizer restored =
      restoreModelAndNormalizerFromBytes(bytes, true, path.string());
  writeFileAtomically(path, toBytes(restored.model, hasUpdater, &normalizer), kModelFile);
}

MultiLayerNetwork ModelSerializer::restoreMultiLayerNetwork(const std::filesystem::path& path,
                                                            bool loadUpdater) {
  return restoreMultiLayerNetworkAndNormalizer(path, loadUpdater).model;
}

ModelAndNormalizer ModelSerializer::restoreMultiLayerNetworkAndNormalizer(
    const std::filesystem::path& path, bool loadUpdater) {
  return restoreModelAndNormalizerFromBytes(readModelFile(path), loadUpdater, path.string());
}

std::shared_ptr<DataNormalization> ModelSerializer::restoreNormalizerFromFile(
    const std::filesystem::path& path) {
  return restoreMultiLayerNetworkAndNormalizer(path, false).normalizer;
}

// --- ComputationGraph: the same file format, the configuration section holding the graph's JSON
// (whose "format" field tells a graph from a network).

std::vector<std::byte> ModelSerializer::toBytes(const ComputationGraph& model, bool saveUpdater) {
  if (!model.isInitialized())
    throw ConfigError("ModelSerializer: the model has no parameters to save (call init() first)");
  Writer file;
  file.raw(kMagic.data(), kMagic.size());
  file.u32(kFormatVersion);
  const bool hasLayerState = model.layerState().numel() > 0;
  file.u32(3 + (saveUpdater ? 1 : 0) + (hasLayerState ? 1 : 0));
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
  if (hasLayerState) {
    Writer state;
    state.floats(model.layerState());
    appendSection(file, kLayerStateTag, state.bytes());
  }
  Writer counters;
  counters.u64(static_cast<uint64_t>(model.getIterationCount()));
  counters.u32(static_cast<uint32_t>(model.getEpochCount()));
  counters.u64(static_cast<uint64_t>(model.getMinibatchesInEpoch()));
  counters.f64(model.score());
  appendSection(file, kCountersTag, counters.bytes());
  return std::move(file.bytes());
}

ComputationGraph ModelSerializer::restoreComputationGraphFromBytes(std::span<const std::byte> bytes,
                                                                   bool loadUpdater,
                                                                   const std::string& source) {
  const Contents c = readContents(bytes, readLayout(readFrom(bytes), bytes.size(), source), source);
  if (c.normalizer)
    throw DataFormatError(fmt::format(
        "{}: a NORM section in a graph's model file (normalizers are saved with networks only)",
        source));
  ComputationGraphConfiguration conf;
  try {
    conf = ComputationGraphConfiguration::fromJson(c.configurationJson);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: configuration section: {}", source, e.what()));
  }
  int64_t expectedParams = 0, expectedLayerState = 0;
  for (const auto& v : conf.vertices)
    if (v.layer) {
      expectedParams += v.layer->numParams();
      expectedLayerState += v.layer->stateSize();
    }
  const int64_t storedParams = floatCount(c.params, "PARM (parameters)", source);
  if (storedParams != expectedParams)
    throw DataMismatchError(
        fmt::format("{}: the file holds {} parameters but its configuration has {}", source,
                    storedParams, expectedParams));
  const int64_t storedLayerState =
      c.layerState ? floatCount(*c.layerState, "STAT (layer state)", source) : 0;
  if (storedLayerState != expectedLayerState)
    throw DataMismatchError(fmt::format(
        "{}: the file holds {} layer state values{} but its configuration has {}", source,
        storedLayerState, c.layerState ? "" : " (no STAT section)", expectedLayerState));

  ComputationGraph model(std::move(conf));
  model.init();
  readFloats(c.params, model.params());
  if (c.layerState) readFloats(*c.layerState, model.layerState());
  if (loadUpdater && c.updater) {
    const int64_t storedState = floatCount(*c.updater, "UPDT (updater state)", source);
    if (storedState != model.updaterState().numel())
      throw DataMismatchError(fmt::format(
          "{}: the file holds {} updater state values but its configuration's updaters need {}",
          source, storedState, model.updaterState().numel()));
    readFloats(*c.updater, model.updaterState());
  }
  model.setIterationCount(c.iteration);
  model.setEpochCount(c.epoch);
  model.setMinibatchesInEpoch(c.minibatchesInEpoch);
  model.setScore(c.score);
  return model;
}

void ModelSerializer::writeModel(const Model& model, const std::filesystem::path& path,
                                 bool saveUpdater, const DataNormalization* normalizer) {
  if (const auto* net = dynamic_cast<const MultiLayerNetwork*>(&model)) {
    writeModel(*net, path, saveUpdater, normalizer);
    return;
  }
  if (const auto* graph = dynamic_cast<const ComputationGraph*>(&model)) {
    if (normalizer)
      throw ConfigError(
          "ModelSerializer::writeModel: a normalizer is saved with a MultiLayerNetwork only, not "
          "with a ComputationGraph");
    writeModel(*graph, path, saveUpdater);
    return;
  }
  throw ConfigError(
      "ModelSerializer::writeModel: the model is neither a MultiLayerNetwork nor a "
      "ComputationGraph");
}

void ModelSerializer::writeModel(const ComputationGraph& model, const std::filesystem::path& path,
                                 bool saveUpdater) {
  checkOutputPath(path, kModelFile);
  writeFileAtomically(path, toBytes(model, saveUpdater), kModelFile);
}

ComputationGraph ModelSerializer::restoreComputationGraph(const std::filesystem::path& path,
                                                          bool loadUpdater) {
  return restoreComputationGraphFromBytes(readModelFile(path), loadUpdater, path.string());
}

std::unique_ptr<Model> ModelSerializer::restoreModel(const std::filesystem::path& path,
                                                     bool loadUpdater) {
  const std::vector<std::byte> bytes = readModelFile(path);
  const std::string source = path.string();
  const Contents c = readContents(bytes, readLayout(readFrom(bytes), bytes.size(), source), source);
  // "format" is the first field of both configurations' JSON, so its first occurrence is the
  // top-level one; the chosen reader then checks the whole file.
  const std::string& json = c.configurationJson;
  const size_t format = json.find("\"format\"");
  const size_t value =
      format == std::string::npos ? format : json.find('"', json.find(':', format));
  static constexpr std::string_view kGraph = "\"dl4cpp.ComputationGraphConfiguration\"";
  if (value != std::string::npos && json.compare(value, kGraph.size(), kGraph) == 0)
    return std::make_unique<ComputationGraph>(
        restoreComputationGraphFromBytes(bytes, loadUpdater, source));
  return std::make_unique<MultiLayerNetwork>(
      restoreModelAndNormalizerFromBytes(bytes, loadUpdater, source).model);
}

// DL4J's MultiLayerNetwork.save/load and ComputationGraph.save/load, defined here rather than with
// the network: model files are a layer above the network (serialization includes the network, never
// the other way round).
void MultiLayerNetwork::save(const std::filesystem::path& path, bool saveUpdater) const {
  ModelSerializer::writeModel(*this, path, saveUpdater);
}

MultiLayerNetwork MultiLayerNetwork::load(const std::filesystem::path& path, bool loadUpdater) {
  return ModelSerializer::restoreMultiLayerNetwork(path, loadUpdater);
}

void ComputationGraph::save(const std::filesystem::path& path, bool saveUpdater) const {
  ModelSerializer::writeModel(*this, path, saveUpdater);
}

ComputationGraph ComputationGraph::load(const std::filesystem::path& path, bool loadUpdater) {
  return ModelSerializer::restoreComputationGraph(path, loadUpdater);
}

}  // namespace dl4cpp
