#pragma once
// A file opened for reading that is known to be a regular file, for every reader of user-supplied
// paths (model files, checkpoints, data files). Opening a FIFO for reading blocks until a writer
// appears and a device such as /dev/zero never ends, so such paths are refused before a byte is
// read: the open does not block, and the file's type is checked on the descriptor itself (no race
// between a check of the path and the open).
#include <cstdint>
#include <filesystem>
#include <string_view>

namespace dl4cpp {

// What a file of st_mode `mode` is, for messages: "a directory", "a FIFO", "a character device",
// "a block device", "a socket", "a symbolic link", "a regular file".
const char* fileTypeName(uint32_t mode);

class RegularFile {
 public:
  // `what` names what the file should be ("a model file", "an IDX file") in error messages.
  // DataNotFoundError: the path does not exist. DataFormatError: it is a directory, FIFO, device or
  // socket. IoError: it cannot be opened (permissions, too many open files, ...).
  RegularFile(const std::filesystem::path& path, std::string_view what);
  ~RegularFile();
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&&) = delete;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  int fd() const { return fd_; }
  // The size when opened (a file that grows or shrinks afterwards is the reader's to notice).
  uint64_t size() const { return size_; }
  // Hands the descriptor over (to gzdopen, say): the caller closes it from now on.
  int release();

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace dl4cpp
