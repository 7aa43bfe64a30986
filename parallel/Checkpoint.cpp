#include "parallel/Checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <system_error>

#include "nn/core/AtomicFile.h"
#include "nn/core/Error.h"
#include "nn/core/OutputPath.h"
#include "nn/util/ModelSerializer.h"

namespace dl4cpp::parallel {

namespace {

constexpr std::string_view kPrefix = "checkpoint-i";
constexpr std::string_view kEpochPart = "-e";
constexpr std::string_view kSuffix = ".dl4cpp";
constexpr size_t kIterationDigits = 12;
constexpr size_t kEpochDigits = 6;

bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Exactly the names fileName() makes; temporary files ("...dl4cpp.tmp-...") do not match.
bool isCheckpointName(std::string_view name) {
  if (name.size() !=
      kPrefix.size() + kIterationDigits + kEpochPart.size() + kEpochDigits + kSuffix.size())
    return false;
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  name.remove_prefix(kPrefix.size());
  if (!digits(name.substr(0, kIterationDigits))) return false;
  name.remove_prefix(kIterationDigits);
  if (name.substr(0, kEpochPart.size()) != kEpochPart) return false;
  name.remove_prefix(kEpochPart.size());
  return digits(name.substr(0, kEpochDigits)) && name.substr(kEpochDigits) == kSuffix;
}

constexpr std::string_view kOuterSuffix = ".outer";

// "<checkpoint name>.outer"
bool isOuterStateName(std::string_view name) {
  return name.size() > kOuterSuffix.size() &&
         name.substr(name.size() - kOuterSuffix.size()) == kOuterSuffix &&
         isCheckpointName(name.substr(0, name.size() - kOuterSuffix.size()));
}

}  // namespace

Checkpoint Checkpoint::iterations(int64_t n) {
  if (n < 1) throw ConfigError(fmt::format("Checkpoint::iterations: n must be >= 1, got {}", n));
  return Checkpoint(Unit::Iterations, n);
}

Checkpoint Checkpoint::epochs(int n) {
  if (n < 1) throw ConfigError(fmt::format("Checkpoint::epochs: n must be >= 1, got {}", n));
  return Checkpoint(Unit::Epochs, n);
}

std::string Checkpoints::fileName(int64_t iteration, int epoch) {
  return fmt::format("{}{:0{}}{}{:0{}}{}", kPrefix, iteration, kIterationDigits, kEpochPart, epoch,
                     kEpochDigits, kSuffix);
}

std::vector<std::filesystem::path> Checkpoints::list(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  std::filesystem::directory_iterator it(directory, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return found;
    throw IoError(
        fmt::format("cannot list checkpoint directory {}: {}", directory.string(), ec.message()));
  }
  for (const auto& entry : it)
    if (isCheckpointName(entry.path().filename().string())) found.push_back(entry.path());
  // Zero-padded names: lexicographic order is (iteration, epoch) order.
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.filename().string() < b.filename().string();
  });
  return found;
}

std::optional<std::filesystem::path> Checkpoints::latest(const std::filesystem::path& directory) {
  auto all = list(directory);
  if (all.empty()) return std::nullopt;
  return all.back();
}

std::filesystem::path Checkpoints::outerStateFile(const std::filesystem::path& checkpoint) {
  auto path = checkpoint;
  path += kOuterSuffix;
  return path;
}

void Checkpoints::requireNoneAfter(const std::filesystem::path& directory, int64_t iteration,
                                   int epoch) {
  const std::string position = fileName(iteration, epoch);
  std::vector<std::string> newer;
  for (const auto& path : list(directory))
    if (path.filename().string() > position) newer.push_back(path.filename().string());
  if (newer.empty()) return;
  constexpr size_t kNamed = 5;
  std::string names;
  for (size_t i = 0; i < newer.size() && i < kNamed; ++i) names += (i ? ", " : "") + newer[i];
  if (newer.size() > kNamed) names += fmt::format(" and {} more", newer.size() - kNamed);
  throw ConfigError(fmt::format(
      "checkpoint directory {} holds {} checkpoint(s) newer than this model (iteration {}, "
      "epoch {}): {}. They belong to another run, or to a later point of this run than the model "
      "was resumed from; new checkpoints would sort before them and be deleted by keepLast. "
      "Resume from the newest (MultiLayerNetwork::load(Checkpoints::latest(dir))), move those "
      "files away, or use another directory",
      directory.string(), newer.size(), iteration, epoch, names));
}

std::filesystem::path Checkpoints::write(const Model& model, const std::filesystem::path& directory,
                                         int keepLast, const DataNormalization* normalizer,
                                         std::span<const std::byte> outerState) {
  if (keepLast < 1)
    throw ConfigError(fmt::format("Checkpoints::write: keepLast must be >= 1, got {}", keepLast));
  checkOutputDirectory(directory, "checkpoints");
  requireNoneAfter(directory, model.getIterationCount(), model.getEpochCount());
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec)
    throw IoError(
        fmt::format("cannot create checkpoint directory {}: {}", directory.string(), ec.message()));
  auto path = directory / fileName(model.getIterationCount(), model.getEpochCount());
  // The companion first: a checkpoint on disk always has the state it needs to resume exactly.
  if (!outerState.empty())
    writeFileAtomically(outerStateFile(path), outerState, "an outer updater state file");
  ModelSerializer::writeModel(model, path, true, normalizer);
  // Only once the new checkpoint is safely on disk may older ones go, with the temporaries of
  // saves that were killed.
  const auto all = list(directory);
  for (size_t i = 0; i + static_cast<size_t>(keepLast) < all.size(); ++i) {
    std::filesystem::remove(all[i], ec);
    if (ec)
      throw IoError(
          fmt::format("cannot delete old checkpoint {}: {}", all[i].string(), ec.message()));
  }
  // Companions of checkpoints that are gone (deleted above, or a save killed between the two
  // writes).
  std::vector<std::filesystem::path> orphans;
  std::error_code listError;
  std::filesystem::directory_iterator entries(directory, listError);
  for (; !listError && entries != std::filesystem::directory_iterator();
       entries.increment(listError)) {
    const std::string name = entries->path().filename().string();
    if (isOuterStateName(name) &&
        !std::filesystem::exists(directory / name.substr(0, name.size() - kOuterSuffix.size())))
      orphans.push_back(entries->path());
  }
  for (const auto& orphan : orphans) {
    std::filesystem::remove(orphan, ec);
    if (ec)
      throw IoError(fmt::format("cannot delete old outer updater state {}: {}", orphan.string(),
                                ec.message()));
  }
  removeStaleTemporaries(
      directory, [](std::string_view n) { return isCheckpointName(n) || isOuterStateName(n); });
  return path;
}

}  // namespace dl4cpp::parallel
