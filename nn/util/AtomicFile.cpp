#include <dl4cpp/nn/util/AtomicFile.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include <fmt/format.h>

#include <dl4cpp/nn/Error.h>

namespace dl4cpp {

namespace {

[[noreturn]] void fail(const char* step, const std::filesystem::path& file, int err) {
  throw IoError(fmt::format("cannot {} {}: {}", step, file.string(), std::strerror(err)));
}

// Closes the descriptor and removes the temporary file unless the write completed.
class TemporaryFile {
 public:
  explicit TemporaryFile(std::filesystem::path path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("create", path_, errno);
  }
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  void write(std::span<const std::byte> bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("write", path_, errno);
      done += static_cast<size_t>(n);
    }
  }
  void syncAndClose() {
    if (::fsync(fd_) != 0) fail("fsync", path_, errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("close", path_, errno);
  }
  void renameTo(const std::filesystem::path& target) {
    if (::rename(path_.c_str(), target.c_str()) != 0) fail(("rename " + path_.string() + " to").c_str(), target, errno);
    committed_ = true;
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool committed_ = false;
};

std::string randomSuffix() {
  std::random_device device;
  return fmt::format("{:08x}{:08x}", device(), device());
}

}  // namespace

void writeFileAtomically(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  std::filesystem::path tmp = path;
  tmp += ".tmp-" + randomSuffix();
  {
    TemporaryFile file(tmp);
    file.write(bytes);
    file.syncAndClose();
    file.renameTo(path);
  }
  // The rename is durable only once the directory entry is on disk.
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  const int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd < 0) fail("open directory", dir, errno);
  const int rc = ::fsync(dirFd);
  const int err = errno;
  ::close(dirFd);
  if (rc != 0) fail("fsync directory", dir, err);
}

std::vector<std::byte> readWholeFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      throw DataNotFoundError(fmt::format("{}: no such file", path.string()));
    fail("open", path, errno);
  }
  std::vector<std::byte> bytes;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) bytes.reserve(static_cast<size_t>(st.st_size));
  std::byte chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      fail("read", path, err);
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  ::close(fd);
  return bytes;
}

}  // namespace dl4cpp
