#pragma once
// LabeledFileSplit: the labelled files of an image data set, as DataVec's FileSplit with an
// extension filter and a PathLabelGenerator (MATLAB's imageDatastore with 'IncludeSubfolders' and
// 'LabelSource', 'foldernames'):
//
//   LabeledFileSplit all("fashion/train");                    // root/<class>/<image>
//   auto parts = BalancedPathFilter(42).filter(all).splitEachLabel({0.8, 0.2}, 42);
//   // parts[0]: 80% of every class, parts[1]: the rest; both keep all's label list
//
// Only paths are held: images are decoded as batches are asked for (ImageRecordReader).
//
// Order and labels. Files are every regular file under root (recursively) whose extension is one
// of `extensions` (case-insensitive), in sorted path order. The labels are the distinct names the
// generator gives, sorted (byte order), so a label's index does not depend on the file system and
// a class added later shifts only those after it. Files with other extensions are skipped and
// counted (skippedFiles()); so are hidden files (a name starting with '.') and entries that are
// not regular files whatever their name (a FIFO, socket or device, a dangling symbolic link).
// Links are followed: to a file (read as that file) and to a folder (walked as a folder under
// root).
//
// Errors:
//   DataNotFoundError  root does not exist, or holds no file with an accepted extension
//   DataError          an empty class folder: a folder under root without subfolders that holds
//                      no accepted file (a class that would silently not exist); a label the
//                      knownLabels list (the training split's) does not have; a loop of symbolic
//                      links, or a link to a folder that contains it (naming the link)
//   IoError            a directory cannot be listed
//   ConfigError        no extension given
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "iterators/InputSplit.h"
#include "iterators/image/PathLabelGenerator.h"

namespace dl4cpp {

struct LabeledFile {
  std::filesystem::path path;
  int label = 0;  // index into the split's labels()
};

class LabeledFileSplit {
 public:
  static std::vector<std::string> defaultImageExtensions() { return {"png", "jpg", "jpeg"}; }

  explicit LabeledFileSplit(const std::filesystem::path& root,
                            const std::vector<std::string>& extensions = defaultImageExtensions(),
                            const PathLabelGenerator& labels = ParentPathLabelGenerator());
  // For a held-out folder: labels indexed as in `knownLabels` (the training split's labels()),
  // so that label k means the same class in both; a class the list lacks is a DataError.
  LabeledFileSplit(const std::filesystem::path& root, const std::vector<std::string>& knownLabels,
                   const std::vector<std::string>& extensions,
                   const PathLabelGenerator& labels = ParentPathLabelGenerator());

  // The files as given, in that order (a DataVec InputSplit's locations), labelled by
  // `labels`: labels() are the distinct names it gives, sorted, as for a folder. Nothing is
  // listed or checked on disk; no file gives an empty split (no label).
  static LabeledFileSplit fromFiles(std::vector<std::filesystem::path> files,
                                    const PathLabelGenerator& labels);

  const std::vector<std::string>& labels() const { return labels_; }
  const std::vector<LabeledFile>& files() const { return files_; }
  int64_t size() const { return static_cast<int64_t>(files_.size()); }
  int numLabels() const { return static_cast<int>(labels_.size()); }
  int64_t skippedFiles() const { return skipped_; }
  // Files per label, indexed like labels().
  std::vector<int64_t> countPerLabel() const;

  // MATLAB's splitEachLabel(imds, p1, p2, ..., 'randomized'): every label's files are shuffled
  // with `seed` and cut into parts holding fractions[i] of them (rounded on the cumulative
  // fraction, so the parts never overlap and sum to the whole when the fractions sum to 1; when
  // they sum to less, the rest is left out). Every part keeps this split's label list and sorted
  // path order. ConfigError for no fraction, one outside (0, 1], or a sum above 1. DataError when a
  // label with files gets none in the first (training) part but some in another: a class the
  // model could never learn.
  std::vector<LabeledFileSplit> splitEachLabel(const std::vector<double>& fractions,
                                               uint64_t seed) const;

 private:
  friend class BalancedPathFilter;
  LabeledFileSplit(std::vector<std::string> labels, std::vector<LabeledFile> files)
      : labels_(std::move(labels)), files_(std::move(files)) {}
  void scan(const std::filesystem::path& root, const std::vector<std::string>& extensions,
            const PathLabelGenerator& labels, const std::vector<std::string>* knownLabels);

  std::vector<std::string> labels_;
  std::vector<LabeledFile> files_;
  int64_t skipped_ = 0;
};

// BalancedPathFilter: as DataVec's, keeps the same number of files of every label: the smallest
// label's count, or maxPathsPerLabel when that is smaller (0: no cap), drawn at random with
// `seed`. Two faces:
//   filter(LabeledFileSplit)  the split's files of every label; the result keeps the label list
//                             and sorted path order.
//   filter(paths)             DataVec's PathFilter, for InputSplit::sample(): the paths whose
//                             extension is one of `extensions` (case-insensitive; none given:
//                             all), shuffled with `seed`, grouped by the label `labelGenerator`
//                             gives (null: ParentPathLabelGenerator), each label cut to the
//                             common count and the labels interleaved: the first kept path of
//                             each label in the order the labels first appear in the shuffle,
//                             then the second of each, ... So any leading run of the result is
//                             balanced to within one path per label, and sample(filter, 80, 20)
//                             gives two balanced parts.
// ConfigError for a negative maxPathsPerLabel.
class BalancedPathFilter : public PathFilter {
 public:
  explicit BalancedPathFilter(uint64_t seed, int64_t maxPathsPerLabel = 0);
  // DataVec's BalancedPathFilter(random, extensions, labelGenerator[, maxPathsPerLabel]).
  BalancedPathFilter(uint64_t seed, std::vector<std::string> extensions,
                     std::shared_ptr<const PathLabelGenerator> labelGenerator,
                     int64_t maxPathsPerLabel = 0);

  LabeledFileSplit filter(const LabeledFileSplit& split) const;
  std::vector<std::filesystem::path> filter(
      const std::vector<std::filesystem::path>& paths) const override;

 private:
  uint64_t seed_;
  int64_t maxPathsPerLabel_;
  std::vector<std::string> extensions_;                       // lower case, no dot; empty: all
  std::shared_ptr<const PathLabelGenerator> labelGenerator_;  // null: the parent folder's name
};

}  // namespace dl4cpp
