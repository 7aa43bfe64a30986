#include <dl4cpp/nn/Error.h>
#include <dl4cpp/nn/util/AtomicFile.h>
#include <dl4cpp/nn/util/HostMemory.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <random>
#include <string>

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

std::vector<std::byte> readWholeFile(const std::filesystem::path& path, std::string_view what) {
  return readWholeFile(RegularFile(path, what), path);
}

std::vector<std::byte> readWholeFile(const RegularFile& file, const std::filesystem::path& path) {
  const uint64_t size = file.size();
  auto tooLarge = [&](const std::string& why) {
    return AllocationError(
        fmt::format("{}: cannot read its {} bytes into memory: {}", path.string(), size, why));
  };
  if (size > hostMemoryBytes())
    throw tooLarge(
        fmt::format("more than this machine's {} bytes of RAM and swap", hostMemoryBytes()));
  std::vector<std::byte> bytes;
  try {
    bytes.resize(size);
  } catch (const std::bad_alloc&) {
    throw tooLarge("out of memory");
  }
  readFileAt(file, path, 0, bytes);
  return bytes;
}

void readFileAt(const RegularFile& file, const std::filesystem::path& path, uint64_t offset,
                std::span<std::byte> out) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        ::pread(file.fd(), out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("read", path, errno);
    if (n == 0)
      throw DataTruncatedError(
          fmt::format("{}: the file ends at offset {}, {} bytes short of what was "
                      "to be read (it was {} bytes when opened)",
                      path.string(), offset + done, out.size() - done, file.size()));
    done += static_cast<size_t>(n);
  }
}

}  // namespace dl4cpp
