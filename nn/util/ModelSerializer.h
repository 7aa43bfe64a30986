#pragma once
// ModelSerializer: saves a MultiLayerNetwork to one file and restores it, in another process if
// need be (DL4J's ModelSerializer). The format is in docs/model-format.md: magic, format version,
// then sections (configuration JSON, flat parameters, optional updater state, layer state when
// the layers have any, training counters), each with its length and CRC32.
//
//   ModelSerializer::writeModel(model, "lenet.dl4cpp", true);       // or model.save(path)
//   MultiLayerNetwork m = ModelSerializer::restoreMultiLayerNetwork("lenet.dl4cpp");
//
// Writing is atomic: the bytes go to "<path>.tmp-<random>", which is fsynced and renamed over
// `path`, then the directory is fsynced. A failure at any point (IoError naming the file and the
// OS's reason) leaves a previous file at `path` untouched.
//
// Reading never trusts the file: every length is checked against the bytes present before
// anything is read or allocated. A file is read only if it is a regular file (not a FIFO, device
// or directory) and only after its headers (a few dozen bytes) show a model whose sections add up
// to exactly the file's size. Problems are typed, each message naming the file:
//   DataNotFoundError   the file does not exist
//   DataTruncatedError  the file ends inside a header or section (offset given)
//   DataFormatError     not a regular file, not a dl4cpp model (bad magic), unknown or duplicate
//                       section, bad layout
//   ChecksumError       a section's CRC32 does not match its bytes (section named)
//   VersionError        a format version this build cannot read (e.g. written by a newer dl4cpp)
//   DataMismatchError   the parameters (or updater or layer state) do not fit the stored
//                       configuration
//   ConfigError         the stored configuration JSON is invalid (JSON path named), nested more
//                       than 64 levels, larger than 16 MiB, or beyond the size limits of
//                       nn/conf/ConfigurationLimits.h
//   AllocationError     the file, or the model it describes, does not fit in memory
//   IoError             the file exists but cannot be read
// Older format versions stay readable: the reader dispatches on the version number.
//
// A model restored with its updater state continues training exactly as the saved one would
// have (bit-identical), given the same thread count: oneDNN's results may depend on it.
#include <dl4cpp/nn/multilayer/MultiLayerNetwork.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace dl4cpp {

class ModelSerializer {
 public:
  // The format version writeModel() writes, and the newest restore*() reads.
  static constexpr uint32_t kFormatVersion = 4;

  // Writes `model` (initialised) to `path` atomically. saveUpdater: include the updater state
  // (needed to continue training exactly; not for inference).
  static void writeModel(const MultiLayerNetwork& model, const std::filesystem::path& path,
                         bool saveUpdater);
  // Reads a model written by writeModel(): configuration, parameters, layer state, counters and,
  // when loadUpdater and the file has it, updater state (otherwise the updater state is zero, as
  // after init()). The network runs on the CPU with all cores (as MultiLayerNetwork's default).
  static MultiLayerNetwork restoreMultiLayerNetwork(const std::filesystem::path& path,
                                                    bool loadUpdater = true);

  // The same, to and from memory (restoreMultiLayerNetwork reads the file and calls
  // restoreFromBytes; the fuzz target calls it directly). `source` names the bytes in error
  // messages.
  static std::vector<std::byte> toBytes(const MultiLayerNetwork& model, bool saveUpdater);
  static MultiLayerNetwork restoreFromBytes(std::span<const std::byte> bytes,
                                            bool loadUpdater = true,
                                            const std::string& source = "<memory>");
};

}  // namespace dl4cpp
