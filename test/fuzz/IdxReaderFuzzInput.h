#pragma once
// What the IDX-reader fuzz target does with one input, shared with the CTest that replays the
// committed corpus (test/iterators/IdxReaderCorpusTest.cpp), so both exercise the same path.
//
// IdxReader reads paths, so each input is put in an anonymous in-memory file (memfd) and read
// through /proc/self/fd/N, as images and as labels. Inputs that are not gzip are read a second
// time gzip-compressed: mutations of a gzip input almost never keep its CRC-32 valid, so the
// compressed copy is what carries arbitrary IDX headers and data through the gzip path, while the
// gzip inputs of the corpus exercise the container checks (members, trailers, trailing bytes).
//
// The contract under test: only dl4cpp::Error may escape, and what is accepted is whole. Any other
// exception is rethrown (under libFuzzer: an uncaught exception, a crash); memory errors are the
// sanitizers' to report.
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "iterators/IdxReader.h"
#include "nn/core/Error.h"

namespace dl4cpp::fuzz {

// The bytes in an anonymous file that lives as long as the object, reachable by path.
class MemoryFile {
 public:
  explicit MemoryFile(std::span<const uint8_t> bytes)
      : fd_(::memfd_create("idx-fuzz-input", MFD_CLOEXEC)) {
    if (fd_ < 0) throw std::runtime_error("memfd_create failed");
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n <= 0) throw std::runtime_error("cannot write the memfd");
      done += static_cast<size_t>(n);
    }
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

inline bool isGzip(std::span<const uint8_t> b) {
  return b.size() >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

// `bytes` as one gzip member (fastest level: the fuzzer wants executions, not ratio).
inline std::vector<uint8_t> gzipped(std::span<const uint8_t> bytes) {
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::vector<uint8_t> out(deflateBound(&z, static_cast<uLong>(bytes.size())));
  z.next_in = const_cast<Bytef*>(bytes.data());
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  return out;
}

// Reads `bytes` as IDX images and as IDX labels, as given and (when not gzip) gzip-compressed; a
// dl4cpp::Error is an accepted outcome. Returns how many of the reads succeeded.
inline int readIdxInput(std::span<const uint8_t> bytes) {
  int accepted = 0;
  auto attempt = [&](std::span<const uint8_t> input) {
    const MemoryFile file(input);
    try {
      const IdxImages images = IdxReader::readImages(file.path());
      if (images.count < 0 ||
          static_cast<int64_t>(images.pixels.size()) != images.count * images.imageSize())
        throw std::logic_error("IdxReader accepted images whose pixels do not match the header");
      ++accepted;
    } catch (const Error&) {
    }
    try {
      const IdxLabels labels = IdxReader::readLabels(file.path());
      for (const uint8_t label : labels.labels)
        if (label >= 10) throw std::logic_error("IdxReader accepted a label outside [0, 10)");
      ++accepted;
    } catch (const Error&) {
    }
  };
  attempt(bytes);
  if (!isGzip(bytes)) attempt(gzipped(bytes));
  return accepted;
}

}  // namespace dl4cpp::fuzz
