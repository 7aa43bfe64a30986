#include "nn/core/RegularFile.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "nn/core/ErrnoText.h"
#include "nn/core/Error.h"

namespace dl4cpp {

const char* fileTypeName(uint32_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

RegularFile::RegularFile(const std::filesystem::path& path, std::string_view what) {
  // O_NONBLOCK: a FIFO without a writer would otherwise block here. Reads from a regular file
  // ignore the flag.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd_ < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      throw DataNotFoundError(fmt::format("{}: no such file (expected {})", path.string(), what));
    throw IoError(fmt::format("cannot open {}: {}", path.string(), errnoText(err)));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw IoError(fmt::format("cannot stat {}: {}", path.string(), errnoText(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw DataFormatError(fmt::format("{}: is {}, not {} (only regular files are read)",
                                      path.string(), fileTypeName(st.st_mode), what));
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

int RegularFile::release() { return std::exchange(fd_, -1); }

}  // namespace dl4cpp
