#include "iterators/FileByteStream.h"

#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <limits>

#include "nn/core/ErrnoText.h"
#include "nn/core/Error.h"

namespace dl4cpp {

namespace {

constexpr size_t kInputBuffer = size_t{1} << 16;
constexpr uint8_t kGzipMagic0 = 0x1f, kGzipMagic1 = 0x8b;
constexpr int kGzipOnly = 16 + MAX_WBITS;  // inflate's windowBits for the gzip container only

// One read(2), retried on EINTR. IoError on failure.
size_t readSome(int fd, uint8_t* dst, size_t n, const std::string& path) {
  for (;;) {
    const ssize_t got = ::read(fd, dst, n);
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) throw IoError(fmt::format("cannot read {}: {}", path, errnoText(errno)));
  }
}

bool startsWithGzipMagic(int fd, const std::string& path) {
  std::array<uint8_t, 2> magic{};
  ssize_t got = 0;
  do {
    got = ::pread(fd, magic.data(), magic.size(), 0);
  } while (got < 0 && errno == EINTR);
  if (got < 0) throw IoError(fmt::format("cannot read {}: {}", path, errnoText(errno)));
  return got == 2 && magic[0] == kGzipMagic0 && magic[1] == kGzipMagic1;
}

}  // namespace

void FileByteStream::InflateEnd::operator()(z_stream_s* z) const {
  inflateEnd(z);
  delete z;
}

FileByteStream::FileByteStream(const std::filesystem::path& path, std::string_view what)
    : path_(path.string()), file_(path, what) {
  gzip_ = startsWithGzipMagic(file_.fd(), path_);
  if (!gzip_) return;
  auto* z = new z_stream_s{};
  if (inflateInit2(z, kGzipOnly) != Z_OK) {
    delete z;
    throw IoError(path_ + ": zlib could not allocate its decompression state");
  }
  zs_.reset(z);
  in_.resize(kInputBuffer);
}

FileByteStream::~FileByteStream() = default;
FileByteStream::FileByteStream(FileByteStream&&) noexcept = default;

int64_t FileByteStream::maxLength() const {
  return gzip_ ? fileSize() * kMaxGzipRatio : fileSize();
}

size_t FileByteStream::read(uint8_t* dst, size_t n) {
  size_t total = 0;
  while (total < n) {
    // inflate counts in unsigned int.
    const size_t chunk = std::min<size_t>(n - total, std::numeric_limits<unsigned>::max());
    const size_t got = gzip_ ? inflateInto(dst + total, chunk) : readRaw(dst + total, chunk);
    if (got == 0) break;
    total += got;
    offset_ += static_cast<int64_t>(got);
  }
  return total;
}

void FileByteStream::finish() {
  if (!gzip_) return;
  std::vector<uint8_t> scratch(kInputBuffer);
  while (read(scratch.data(), scratch.size()) > 0) {
  }
}

size_t FileByteStream::readRaw(uint8_t* dst, size_t n) {
  size_t total = 0;
  while (total < n) {
    const size_t got = readSome(file_.fd(), dst + total, n - total, path_);
    if (got == 0) break;
    total += got;
  }
  fileRead_ += static_cast<int64_t>(total);
  return total;
}

bool FileByteStream::refill() {
  const size_t got = readSome(file_.fd(), in_.data(), in_.size(), path_);
  zs_->next_in = in_.data();
  zs_->avail_in = static_cast<uInt>(got);
  fileRead_ += static_cast<int64_t>(got);
  return got > 0;
}

int64_t FileByteStream::compressedOffset() const {
  return fileRead_ - static_cast<int64_t>(zs_->avail_in);
}

size_t FileByteStream::inflateInto(uint8_t* dst, size_t n) {
  z_stream_s& z = *zs_;
  z.next_out = dst;
  z.avail_out = static_cast<uInt>(n);
  const auto decompressed = [&] { return offset_ + static_cast<int64_t>(n - z.avail_out); };
  while (z.avail_out > 0 && !ended_) {
    if (z.avail_in == 0 && !refill()) {
      if (!atMemberStart_)
        throw DataTruncatedError(fmt::format(
            "{}: the gzip data ends at byte {} of the file, inside a gzip member (after {} "
            "decompressed bytes): the file was cut short or its trailer is missing; download it "
            "again",
            path_, fileRead_, decompressed()));
      ended_ = true;
      break;
    }
    if (atMemberStart_ && z.next_in[0] != kGzipMagic0)
      throw DataFormatError(fmt::format(
          "{}: {} unexpected bytes after the end of the gzip data at byte {} of the file (they "
          "do not start another gzip member): the file is damaged",
          path_, std::max<int64_t>(fileSize() - compressedOffset(), 1), compressedOffset()));
    atMemberStart_ = false;
    const int rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      // The member's CRC-32 and length matched; another member may follow.
      inflateReset(&z);
      atMemberStart_ = true;
    } else if (rc == Z_MEM_ERROR) {
      throw IoError(path_ + ": zlib could not allocate memory to decompress the file");
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      corrupt(z.msg, decompressed());
    }
  }
  return n - z.avail_out;
}

void FileByteStream::corrupt(const char* zlibMessage, int64_t decompressedOffset) const {
  throw DataFormatError(fmt::format(
      "{}: corrupt gzip data near byte {} of the file (decompressed byte offset {}): {}; "
      "download the file again",
      path_, compressedOffset(), decompressedOffset,
      zlibMessage ? zlibMessage : "unknown zlib error"));
}

}  // namespace dl4cpp
