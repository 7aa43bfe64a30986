#include "iterators/FileSplit.h"

#include <algorithm>
#include <system_error>

#include "iterators/image/ExampleRandom.h"
#include "iterators/image/LabeledFileSplit.h"
#include "nn/core/Error.h"

namespace dl4cpp {

namespace fs = std::filesystem;

namespace {

// The shuffle's stream: apart from BalancedPathFilter's and splitEachLabel's (which key theirs
// by label index), so that one seed given to all of them does not draw the same numbers twice.
constexpr uint64_t kShuffleStream = ~uint64_t{0} - 1;

}  // namespace

FileSplit::FileSplit(const fs::path& path) : root_(path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status))
    throw DataNotFoundError("FileSplit: '" + path.string() + "' does not exist");
  if (!fs::is_directory(status)) {
    // Not a directory: the reader opens it and reports a FIFO or device itself (RegularFile).
    locations_.push_back(path);
    return;
  }
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) locations_.push_back(it->path());
  if (ec)
    throw IoError("FileSplit: cannot list directory '" + path.string() + "': " + ec.message());
  if (locations_.empty())
    throw DataNotFoundError("FileSplit: directory '" + path.string() + "' holds no file");
  std::sort(locations_.begin(), locations_.end());
}

FileSplit::FileSplit(const fs::path& path, uint64_t seed) : FileSplit(path) { shuffle(seed); }

FileSplit::FileSplit(const fs::path& dir, const std::vector<std::string>& allowedFormats)
    : root_(dir) {
  // The image folder's listing: one set of rules (extensions, hidden files, empty class folders)
  // whichever face, DataVec's or LabeledFileSplit, reads a folder.
  const LabeledFileSplit listed(dir, allowedFormats);
  locations_.reserve(listed.files().size());
  for (const LabeledFile& file : listed.files()) locations_.push_back(file.path);
  skipped_ = listed.skippedFiles();
}

FileSplit::FileSplit(const fs::path& dir, const std::vector<std::string>& allowedFormats,
                     uint64_t seed)
    : FileSplit(dir, allowedFormats) {
  shuffle(seed);
}

void FileSplit::shuffle(uint64_t seed) {
  ExampleRandom random(seed, kShuffleStream, 0);
  shuffleInPlace(locations_, random);
}

}  // namespace dl4cpp
