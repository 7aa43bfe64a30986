#include "nn/core/AtomicFile.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <new>
#include <random>
#include <string>

#include "nn/core/ErrnoText.h"
#include "nn/core/Error.h"
#include "nn/core/HostMemory.h"
#include "nn/core/OutputPath.h"

namespace dl4cpp {

namespace {

[[noreturn]] void fail(const char* step, const std::filesystem::path& file, int err) {
  throw IoError(fmt::format("cannot {} {}: {}", step, file.string(), errnoText(err)));
}

constexpr std::string_view kTemporaryMarker = ".tmp-";
constexpr size_t kSuffixDigits = 16;

std::string randomSuffix() {
  std::random_device device;
  return fmt::format("{:08x}{:08x}", device(), device());
}

// "<target>.tmp-<random>", created exclusively and locked until the write is over. Closes the
// descriptor and removes the file unless the write completed.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::filesystem::path& target) {
    // A cleaner (removeStaleTemporaries) may take the file for stale in the instant between its
    // creation and the lock, and remove it; then it has no link left, and another name is tried.
    for (int attempt = 0; attempt < 8; ++attempt) {
      path_ = target;
      path_ += std::string(kTemporaryMarker) + randomSuffix();
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd_ < 0) fail("create", path_, errno);
      if (lockedAndLinked()) return;
      ::close(fd_);
      fd_ = -1;
    }
    throw IoError(
        fmt::format("cannot create a temporary file beside {}: each one was removed "
                    "by another process before it could be locked",
                    target.string()));
  }
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
    if (lockFd_ >= 0) ::close(lockFd_);
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
  // Gives the file the existing target's owner and group where this process may (fchown fails
  // with EPERM otherwise, and the new file keeps this process's IDs), then its mode. setuid and
  // setgid bits are kept only along with the owner and group they were given for.
  void takeOwnerAndMode(const OutputTarget& target) {
    struct stat own {};
    if (::fstat(fd_, &own) != 0) fail("stat", path_, errno);
    bool ownersKept = own.st_uid == target.owner && own.st_gid == target.group;
    if (!ownersKept) {
      if (::fchown(fd_, target.owner, target.group) == 0)
        ownersKept = true;
      else if (errno != EPERM)
        fail("set the owner of", path_, errno);
      else if (own.st_gid != target.group)
        (void)::fchown(fd_, static_cast<uid_t>(-1), target.group);  // the group alone, if a member
    }
    const mode_t bits = target.mode & (ownersKept ? 07777 : 01777);
    if (::fchmod(fd_, bits) != 0) fail("set the mode of", path_, errno);
  }
  void sync() {
    if (::fsync(fd_) != 0) fail("fsync", path_, errno);
  }
  void close() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("close", path_, errno);
  }
  // Renames the file over `target`. The target is checked again just before: a FIFO or device
  // that appeared there since the path was resolved is refused, not replaced.
  void renameTo(const std::filesystem::path& target, std::string_view what) {
    struct stat st {};
    if (::lstat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      throw OutputPathError(fmt::format(
          "cannot write {} to {}: it became {} while the file was written; it is not replaced",
          what, target.string(), fileTypeName(st.st_mode)));
    if (::rename(path_.c_str(), target.c_str()) != 0)
      fail(("rename " + path_.string() + " to").c_str(), target, errno);
    committed_ = true;
  }

 private:
  // Takes an exclusive flock on the new file (waiting for a cleaner that holds it) and says
  // whether the file still has its name. On failure the file is closed, removed, and IoError
  // thrown.
  bool lockedAndLinked() {
    int rc = 0;
    while ((rc = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
    }
    struct stat st {};
    if (rc == 0) rc = ::fstat(fd_, &st);
    // The lock lives as long as any descriptor of this open file: lockFd_ keeps it held from the
    // close of fd_ (whose result is checked) until after the rename.
    if (rc == 0 && st.st_nlink > 0 && (lockFd_ = ::dup(fd_)) < 0) rc = -1;
    if (rc == 0) return st.st_nlink > 0;
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    ::unlink(path_.c_str());
    fail("lock", path_, err);
  }

  std::filesystem::path path_;
  int fd_ = -1;
  int lockFd_ = -1;
  bool committed_ = false;
};

// The target of a temporary's name, or empty when the name is not "<target>.tmp-<16 hex>".
std::string_view targetOfTemporary(std::string_view name) {
  const size_t marker = name.rfind(kTemporaryMarker);
  if (marker == std::string_view::npos || marker == 0) return {};
  const std::string_view suffix = name.substr(marker + kTemporaryMarker.size());
  const bool hex =
      suffix.size() == kSuffixDigits && std::all_of(suffix.begin(), suffix.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
      });
  return hex ? name.substr(0, marker) : std::string_view{};
}

// Removes `file` if it is a regular file that no writer holds locked. The lock is taken on the
// file itself and the name checked to still lead to it before unlinking, so neither a file being
// written nor one that replaced it under the same name is touched.
bool removeIfUnlocked(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat held {};
  struct stat named {};
  bool removed = false;
  if (::fstat(fd, &held) == 0 && S_ISREG(held.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
      ::lstat(file.c_str(), &named) == 0 && named.st_dev == held.st_dev &&
      named.st_ino == held.st_ino)
    removed = ::unlink(file.c_str()) == 0;
  ::close(fd);
  return removed;
}

}  // namespace

void writeFileAtomically(const std::filesystem::path& path, std::span<const std::byte> bytes,
                         std::string_view what, Durability durability) {
  const OutputTarget target = checkOutputPath(path, what);
  {
    TemporaryFile file(target.path);
    if (target.exists) file.takeOwnerAndMode(target);
    file.write(bytes);
    if (durability == Durability::Synced) file.sync();
    file.close();
    file.renameTo(target.path, what);
  }
  if (durability == Durability::Unsynced) return;
  // The rename is durable only once the directory entry is on disk.
  const std::filesystem::path dir = target.path.has_parent_path() ? target.path.parent_path() : ".";
  const int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd < 0) fail("open directory", dir, errno);
  const int rc = ::fsync(dirFd);
  const int err = errno;
  ::close(dirFd);
  if (rc != 0) fail("fsync directory", dir, err);
}

std::vector<std::filesystem::path> removeStaleTemporaries(
    const std::filesystem::path& directory, const std::function<bool(std::string_view)>& isTarget) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(directory, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::string_view target = targetOfTemporary(name);
    if (!target.empty() && isTarget(target) && removeIfUnlocked(it->path()))
      removed.push_back(it->path());
  }
  return removed;
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
