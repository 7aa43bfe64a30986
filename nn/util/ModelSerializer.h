#pragma once
// ModelSerializer: saves a MultiLayerNetwork to one file and restores it, in another process if
// need be (DL4J's ModelSerializer). The format is in docs/model-format.md: magic, format version,
// then sections (configuration JSON, flat parameters, optional updater state, layer state when
// the layers have any, the normalizer when one was saved, training counters), each with its
// length and CRC32.
//
//   ModelSerializer::writeModel(model, "lenet.dl4cpp", true);       // or model.save(path)
//   MultiLayerNetwork m = ModelSerializer::restoreMultiLayerNetwork("lenet.dl4cpp");
//
// A model file may also carry the normalizer its training data went through (DL4J's
// ModelSerializer.writeModel(model, file, saveUpdater, normalizer), addNormalizerToModel and
// restoreNormalizerFromFile), so whoever serves the model applies it to the inputs:
//   ModelSerializer::writeModel(model, "lenet.dl4cpp", true, normalizer.get());
//   ModelAndNormalizer r = ModelSerializer::restoreMultiLayerNetworkAndNormalizer("lenet.dl4cpp");
//   ParallelInference inference = ParallelInference::Builder(r).build();   // applies r.normalizer
// The normalizer must be fitted and apply to the network's input (DataNormalization::
// requireInput); a file whose normalizer does not is refused too.
//
// Writing is atomic (writeFileAtomically): the bytes go to "<path>.tmp-<random>", which is
// fsynced and renamed over `path`, then the directory is fsynced. A failure at any point (IoError
// naming the file and the OS's reason) leaves a previous file at `path` untouched and no temporary
// behind. The path follows the output-path rule (nn/core/OutputPath.h), checked before the model
// is serialised: a symbolic link is written through (the file it leads to is replaced, the link
// kept), an existing target that is not a regular file (/dev/null, a FIFO, a directory) is refused
// with OutputPathError, and an existing file keeps its permission bits.
//
// Reading never trusts the file: every length is checked against the bytes present before
// anything is read or allocated. A file is read only if it is a regular file (not a FIFO, device
// or directory) and only after its headers (a few dozen bytes) show a model whose sections add up
// to exactly the file's size. Problems are typed, each message naming the file:
//   DataNotFoundError   the file does not exist
//   DataTruncatedError  the file ends inside a header or section (offset given)
//   DataFormatError     not a regular file, not a dl4cpp model (bad magic), unknown or duplicate
//                       section, bad layout, a normalizer section NormalizerSerializer refuses
//   ChecksumError       a section's CRC32 does not match its bytes (section named)
//   VersionError        a format version this build cannot read (e.g. written by a newer dl4cpp)
//   DataMismatchError   the parameters (or updater or layer state, or the normalizer) do not fit
//                       the stored configuration
//   ConfigError         the stored configuration JSON is invalid (JSON path named), nested more
//                       than 64 levels, larger than 16 MiB, or beyond the size limits of
//                       nn/conf/ConfigurationLimits.h
//   AllocationError     the file, or the model it describes, does not fit in memory
//   IoError             the file exists but cannot be read
// Older format versions stay readable: the reader dispatches on the version number.
//
// A model restored with its updater state continues training exactly as the saved one would
// have (bit-identical), given the same thread count: oneDNN's results may depend on it.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "iterators/DataNormalization.h"
#include "nn/graph/ComputationGraph.h"
#include "nn/multilayer/MultiLayerNetwork.h"

namespace dl4cpp {

// A network read from a model file, and the normalizer saved with it (null when none was).
struct ModelAndNormalizer {
  MultiLayerNetwork model;
  std::shared_ptr<DataNormalization> normalizer;
};

class ModelSerializer {
 public:
  // The format version writeModel() writes, and the newest restore*() reads.
  static constexpr uint32_t kFormatVersion = 5;

  // Writes `model` (initialised) to `path` atomically. saveUpdater: include the updater state
  // (needed to continue training exactly; not for inference). normalizer: saved with the network
  // when given (fitted, and applying to the network's input: ConfigError / DataMismatchError).
  static void writeModel(const MultiLayerNetwork& model, const std::filesystem::path& path,
                         bool saveUpdater, const DataNormalization* normalizer = nullptr);
  // Saves `normalizer` in the model file at `path`, replacing one it held: the file is read
  // (with every check of restoreMultiLayerNetwork) and written again atomically, in the current
  // format version, with the same network, updater state (if it had one), layer state and
  // counters.
  static void addNormalizerToModel(const std::filesystem::path& path,
                                   const DataNormalization& normalizer);
  // Reads a model written by writeModel(): configuration, parameters, layer state, counters and,
  // when loadUpdater and the file has it, updater state (otherwise the updater state is zero, as
  // after init()). The network runs on the CPU with all cores (as MultiLayerNetwork's default).
  static MultiLayerNetwork restoreMultiLayerNetwork(const std::filesystem::path& path,
                                                    bool loadUpdater = true);
  // The same, with the normalizer saved in the file (null when it has none).
  static ModelAndNormalizer restoreMultiLayerNetworkAndNormalizer(const std::filesystem::path& path,
                                                                  bool loadUpdater = true);
  // The normalizer saved in the model file (null when it has none); the whole file is checked.
  static std::shared_ptr<DataNormalization> restoreNormalizerFromFile(
      const std::filesystem::path& path);

  // The same, to and from memory (restoreMultiLayerNetwork reads the file and calls
  // restoreFromBytes; the fuzz target calls it directly). `source` names the bytes in error
  // messages.
  static std::vector<std::byte> toBytes(const MultiLayerNetwork& model, bool saveUpdater,
                                        const DataNormalization* normalizer = nullptr);
  static MultiLayerNetwork restoreFromBytes(std::span<const std::byte> bytes,
                                            bool loadUpdater = true,
                                            const std::string& source = "<memory>");
  static ModelAndNormalizer restoreModelAndNormalizerFromBytes(
      std::span<const std::byte> bytes, bool loadUpdater = true,
      const std::string& source = "<memory>");

  // A ComputationGraph in the same format (the configuration section holds the graph's JSON;
  // no normalizer), with the same checks on reading: a hostile file is one of the typed errors
  // above. restoreMultiLayerNetwork on a graph's file is a ConfigError naming the format field,
  // and restoreComputationGraph on a network's likewise.
  static void writeModel(const ComputationGraph& model, const std::filesystem::path& path,
                         bool saveUpdater);
  static ComputationGraph restoreComputationGraph(const std::filesystem::path& path,
                                                  bool loadUpdater = true);
  static std::vector<std::byte> toBytes(const ComputationGraph& model, bool saveUpdater);
  // Either kind of model, through the Model interface (ParallelWrapper's checkpoints): a network
  // as writeModel above, a graph likewise (a normalizer with a graph: ConfigError).
  static void writeModel(const Model& model, const std::filesystem::path& path, bool saveUpdater,
                         const DataNormalization* normalizer);
  // Either kind of model from its file, as the file's configuration says (a network's normalizer
  // is not restored); the checks of restoreMultiLayerNetwork / restoreComputationGraph.
  static std::unique_ptr<Model> restoreModel(const std::filesystem::path& path,
                                             bool loadUpdater = true);
  static ComputationGraph restoreComputationGraphFromBytes(std::span<const std::byte> bytes,
                                                           bool loadUpdater = true,
                                                           const std::string& source = "<memory>");
};

}  // namespace dl4cpp
