#include "iterators/image/LabeledFileSplit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <map>
#include <set>
#include <system_error>

#include "iterators/image/ExampleRandom.h"
#include "nn/core/Error.h"
#include "nn/core/QuoteForMessage.h"

namespace dl4cpp {

namespace fs = std::filesystem;

namespace {

std::string lowerCase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::set<std::string> extensionSet(const std::vector<std::string>& extensions) {
  if (extensions.empty())
    throw ConfigError("LabeledFileSplit: no file extension given; nothing would be read");
  std::set<std::string> set;
  for (const std::string& e : extensions)
    set.insert(lowerCase(!e.empty() && e.front() == '.' ? e.substr(1) : e));
  return set;
}

bool hidden(const fs::path& path) {
  const std::string name = path.filename().string();
  return !name.empty() && name.front() == '.';
}

[[noreturn]] void throwSymlinkLoop(const fs::path& path, const std::string& detail) {
  throw DataError(
      fmt::format("LabeledFileSplit: '{}' is a loop of symbolic links{}", path.string(), detail));
}

// Refuses a link to a folder that contains the link (following it would never end).
void requireNoLoopThrough(const fs::path& link) {
  std::error_code ec;
  const fs::path target = fs::canonical(link, ec);
  if (ec.value() == ELOOP) throwSymlinkLoop(link, "");
  const fs::path folder = fs::canonical(link.parent_path(), ec);
  if (ec) return;  // the walk itself reports a folder it cannot read
  const auto [t, f] = std::mismatch(target.begin(), target.end(), folder.begin(), folder.end());
  if (t == target.end())
    throwSymlinkLoop(link, fmt::format(": it leads to '{}', a folder it is in", target.string()));
}

// The files of each label's index, in the split's order.
std::vector<std::vector<LabeledFile>> byLabel(const LabeledFileSplit& split) {
  std::vector<std::vector<LabeledFile>> groups(static_cast<size_t>(split.numLabels()));
  for (const LabeledFile& file : split.files())
    groups[static_cast<size_t>(file.label)].push_back(file);
  return groups;
}

void sortByPath(std::vector<LabeledFile>& files) {
  std::sort(files.begin(), files.end(),
            [](const LabeledFile& a, const LabeledFile& b) { return a.path < b.path; });
}

// A label's own stream, so that one label's draws do not depend on another's file count.
ExampleRandom labelRandom(uint64_t seed, size_t label) { return ExampleRandom(seed, label, 0); }

}  // namespace

LabeledFileSplit::LabeledFileSplit(const fs::path& root, const std::vector<std::string>& extensions,
                                   const PathLabelGenerator& labels) {
  scan(root, extensions, labels, nullptr);
}

LabeledFileSplit::LabeledFileSplit(const fs::path& root,
                                   const std::vector<std::string>& knownLabels,
                                   const std::vector<std::string>& extensions,
                                   const PathLabelGenerator& labels) {
  scan(root, extensions, labels, &knownLabels);
}

void LabeledFileSplit::scan(const fs::path& root, const std::vector<std::string>& extensions,
                            const PathLabelGenerator& labels,
                            const std::vector<std::string>* knownLabels) {
  const std::set<std::string> accepted = extensionSet(extensions);
  std::error_code ec;
  if (!fs::exists(root, ec)) {
    if (ec.value() == ELOOP) throwSymlinkLoop(root, "");
    throw DataNotFoundError(fmt::format("LabeledFileSplit: '{}' does not exist", root.string()));
  }

  std::vector<fs::path> paths;
  // Folders without subfolders, and whether each holds an accepted file.
  std::map<fs::path, bool> leafFolders;
  if (fs::is_directory(root, ec)) {
    leafFolders[root] = false;
    // Links to folders are followed (a class folder may live elsewhere); one that leads back into
    // a folder it is in would be walked forever, and is refused.
    for (fs::recursive_directory_iterator
             it(root, fs::directory_options::follow_directory_symlink, ec),
         end;
         !ec && it != end; it.increment(ec)) {
      const fs::path& path = it->path();
      std::error_code statusError;
      const fs::file_status status = it->status(statusError);
      if (statusError.value() == ELOOP) throwSymlinkLoop(path, "");
      if (hidden(path)) {
        ++skipped_;
        if (fs::is_directory(status)) it.disable_recursion_pending();
        continue;
      }
      if (fs::is_directory(status)) {
        if (it->is_symlink(statusError)) requireNoLoopThrough(path);
        leafFolders.erase(path.parent_path());
        leafFolders.emplace(path, false);
      } else if (fs::is_regular_file(status)) {
        const std::string extension = lowerCase(path.extension().string());
        if (extension.size() > 1 && accepted.count(extension.substr(1))) {
          paths.push_back(path);
          auto folder = leafFolders.find(path.parent_path());
          if (folder != leafFolders.end()) folder->second = true;
        } else {
          ++skipped_;
        }
      } else {
        ++skipped_;  // a FIFO, socket or device, or a dangling link, whatever its name
      }
    }
    if (ec)
      throw IoError(
          fmt::format("LabeledFileSplit: cannot list '{}': {}", root.string(), ec.message()));
  } else {
    paths.push_back(root);
  }
  if (paths.empty())
    throw DataNotFoundError(fmt::format("LabeledFileSplit: '{}' holds no file with extension {}",
                                        root.string(), fmt::join(accepted, ", ")));
  for (const auto& [folder, hasFile] : leafFolders)
    if (!hasFile)
      throw DataError(fmt::format(
          "LabeledFileSplit: folder '{}' holds no file with extension {}: an empty class "
          "folder (remove it, or add its images)",
          folder.string(), fmt::join(accepted, ", ")));
  std::sort(paths.begin(), paths.end());

  std::vector<std::string> names;
  names.reserve(paths.size());
  for (const fs::path& path : paths) names.push_back(labels.labelFor(path));
  if (knownLabels) {
    labels_ = *knownLabels;
  } else {
    labels_ = names;
    std::sort(labels_.begin(), labels_.end());
    labels_.erase(std::unique(labels_.begin(), labels_.end()), labels_.end());
  }
  std::map<std::string, int> index;
  for (size_t i = 0; i < labels_.size(); ++i) index.emplace(labels_[i], static_cast<int>(i));
  files_.reserve(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    const auto found = index.find(names[i]);
    if (found == index.end())
      throw DataError(fmt::format(
          "LabeledFileSplit: '{}' has label {}, which the known labels ({}) do not have: a "
          "class the model was not trained on",
          paths[i].string(), quoteForMessage(names[i]), fmt::join(labels_, ", ")));
    files_.push_back({paths[i], found->second});
  }
}

std::vector<int64_t> LabeledFileSplit::countPerLabel() const {
  std::vector<int64_t> counts(labels_.size(), 0);
  for (const LabeledFile& file : files_) ++counts[static_cast<size_t>(file.label)];
  return counts;
}

std::vector<LabeledFileSplit> LabeledFileSplit::splitEachLabel(const std::vector<double>& fractions,
                                                               uint64_t seed) const {
  if (fractions.empty()) throw ConfigError("splitEachLabel: no fraction given");
  double sum = 0;
  for (double f : fractions) {
    if (!(f > 0 && f <= 1))
      throw ConfigError(fmt::format("splitEachLabel: fraction {} is not in (0, 1]", f));
    sum += f;
  }
  if (sum > 1 + 1e-9)
    throw ConfigError(fmt::format("splitEachLabel: the fractions sum to {}, more than 1", sum));

  std::vector<std::vector<LabeledFile>> parts(fractions.size());
  const std::vector<std::vector<LabeledFile>> groups = byLabel(*this);
  for (size_t label = 0; label < groups.size(); ++label) {
    std::vector<LabeledFile> files = groups[label];
    ExampleRandom random = labelRandom(seed, label);
    shuffleInPlace(files, random);
    const double n = static_cast<double>(files.size());
    double cumulative = 0;
    size_t begin = 0, firstPart = 0;
    for (size_t p = 0; p < fractions.size(); ++p) {
      cumulative += fractions[p];
      const size_t end =
          std::min(files.size(), static_cast<size_t>(std::llround(std::min(cumulative, 1.0) * n)));
      parts[p].insert(parts[p].end(), files.begin() + static_cast<std::ptrdiff_t>(begin),
                      files.begin() + static_cast<std::ptrdiff_t>(end));
      if (p == 0) firstPart = end;
      begin = end;
    }
    if (firstPart == 0 && begin > 0)
      throw DataError(fmt::format(
          "splitEachLabel: class {} has {} file(s): a fraction of {} leaves it none for "
          "training but some for the other parts (a class present only in the test split)",
          quoteForMessage(labels_[label]), files.size(), fractions[0]));
  }
  std::vector<LabeledFileSplit> result;
  for (std::vector<LabeledFile>& part : parts) {
    sortByPath(part);
    result.push_back(LabeledFileSplit(labels_, std::move(part)));
  }
  return result;
}

BalancedPathFilter::BalancedPathFilter(uint64_t seed, int64_t maxPathsPerLabel)
    : seed_(seed), maxPathsPerLabel_(maxPathsPerLabel) {
  if (maxPathsPerLabel < 0)
    throw ConfigError(
        fmt::format("BalancedPathFilter: maxPathsPerLabel must be >= 0 (0: no cap), "
                    "got {}",
                    maxPathsPerLabel));
}

LabeledFileSplit BalancedPathFilter::filter(const LabeledFileSplit& split) const {
  std::vector<std::vector<LabeledFile>> groups = byLabel(split);
  size_t keep = SIZE_MAX;
  for (const auto& group : groups)
    if (!group.empty()) keep = std::min(keep, group.size());
  if (maxPathsPerLabel_ > 0) keep = std::min(keep, static_cast<size_t>(maxPathsPerLabel_));
  std::vector<LabeledFile> kept;
  for (size_t label = 0; label < groups.size(); ++label) {
    ExampleRandom random = labelRandom(seed_, label);
    shuffleInPlace(groups[label], random);
    const size_t n = std::min(keep, groups[label].size());
    kept.insert(kept.end(), groups[label].begin(),
                groups[label].begin() + static_cast<std::ptrdiff_t>(n));
  }
  sortByPath(kept);
  return LabeledFileSplit(split.labels(), std::move(kept));
}

LabeledFileSplit LabeledFileSplit::fromFiles(std::vector<fs::path> files,
                                             const PathLabelGenerator& labels) {
  std::vector<std::string> names;
  names.reserve(files.size());
  for (const fs::path& path : files) names.push_back(labels.labelFor(path));
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<LabeledFile> labelled;
  labelled.reserve(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const auto found = std::lower_bound(sorted.begin(), sorted.end(), names[i]);
    labelled.push_back({std::move(files[i]), static_cast<int>(found - sorted.begin())});
  }
  return LabeledFileSplit(std::move(sorted), std::move(labelled));
}

BalancedPathFilter::BalancedPathFilter(uint64_t seed, std::vector<std::string> extensions,
                                       std::shared_ptr<const PathLabelGenerator> labelGenerator,
                                       int64_t maxPathsPerLabel)
    : BalancedPathFilter(seed, maxPathsPerLabel) {
  for (std::string& e : extensions)
    extensions_.push_back(lowerCase(!e.empty() && e.front() == '.' ? e.substr(1) : std::move(e)));
  labelGenerator_ = std::move(labelGenerator);
}

std::vector<fs::path> BalancedPathFilter::filter(const std::vector<fs::path>& paths) const {
  std::vector<fs::path> accepted;
  for (const fs::path& path : paths) {
    const std::string extension = lowerCase(path.extension().string());
    if (extensions_.empty() ||
        (extension.size() > 1 && std::find(extensions_.begin(), extensions_.end(),
                                           extension.substr(1)) != extensions_.end()))
      accepted.push_back(path);
  }
  // Its own stream: the per-label streams of filter(LabeledFileSplit) use small indices.
  ExampleRandom random(seed_, ~uint64_t{0}, 0);
  shuffleInPlace(accepted, random);

  const ParentPathLabelGenerator parentFolder;
  const PathLabelGenerator& labels = labelGenerator_ ? *labelGenerator_ : parentFolder;
  std::vector<std::vector<fs::path>> groups;  // by label, in order of first appearance
  std::map<std::string, size_t> group;
  for (fs::path& path : accepted) {
    const auto [it, added] = group.emplace(labels.labelFor(path), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(std::move(path));
  }
  size_t keep = SIZE_MAX;
  for (const auto& members : groups) keep = std::min(keep, members.size());
  if (maxPathsPerLabel_ > 0) keep = std::min(keep, static_cast<size_t>(maxPathsPerLabel_));
  std::vector<fs::path> interleaved;
  if (groups.empty()) return interleaved;
  interleaved.reserve(keep * groups.size());
  for (size_t i = 0; i < keep; ++i)
    for (auto& members : groups) interleaved.push_back(std::move(members[i]));
  return interleaved;
}

}  // namespace dl4cpp
