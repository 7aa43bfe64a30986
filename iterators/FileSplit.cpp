#include <dl4cpp/iterators/FileSplit.h>
#include <dl4cpp/nn/Error.h>

#include <algorithm>
#include <system_error>

namespace dl4cpp {

namespace fs = std::filesystem;

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

}  // namespace dl4cpp
