#pragma once
// FileByteStream: a data file read front to back as one byte stream, a raw file as it is and a
// gzip file (recognised by its magic bytes 1f 8b, not by its name) decompressed on the fly.
//
// Only regular files are opened (RegularFile): a directory, FIFO or device is refused before a
// byte is read. A gzip file is checked as a whole, not only as far as a caller reads:
//  - finish() decompresses to the end of the file, so every member's CRC-32 and length trailer is
//    verified; a corrupt or cut-off file cannot pass for a good one. zlib's gzread() is not used:
//    it reports a stream whose trailer is missing as a clean end of file.
//  - Members that follow one another form one stream, as for gunzip (RFC 1952 allows this).
//  - Bytes after the last member that do not start another member are an error, not ignored.
// Errors name the file and where it failed:
//   DataNotFoundError, DataFormatError, IoError: as RegularFile, for a path that does not exist,
//                       is not a regular file or cannot be opened
//   DataTruncatedError  the gzip data ends inside a member (cut short, trailer missing)
//   DataFormatError     corrupt deflate data, a wrong CRC-32 or length, trailing bytes
//   IoError             a read fails, or zlib cannot allocate its state
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nn/core/RegularFile.h"

struct z_stream_s;

namespace dl4cpp {

class FileByteStream {
 public:
  // Deflate's largest expansion: a compressed byte decompresses to at most this many bytes.
  static constexpr int64_t kMaxGzipRatio = 1032;

  // `what` names the expected content ("an IDX file") in the errors of RegularFile.
  FileByteStream(const std::filesystem::path& path, std::string_view what);
  ~FileByteStream();
  FileByteStream(FileByteStream&&) noexcept;
  FileByteStream& operator=(FileByteStream&&) = delete;
  FileByteStream(const FileByteStream&) = delete;
  FileByteStream& operator=(const FileByteStream&) = delete;

  bool gzip() const { return gzip_; }
  // The file's size on disk when it was opened.
  int64_t fileSize() const { return static_cast<int64_t>(file_.size()); }
  // Bytes of the stream read so far (decompressed bytes for a gzip file).
  int64_t offset() const { return offset_; }
  // The most bytes the stream can hold: the file size, or for gzip kMaxGzipRatio times it. A
  // length read from a header can be checked against this before anything is allocated.
  int64_t maxLength() const;

  // Reads up to n bytes into dst; fewer only at the end of the stream.
  size_t read(uint8_t* dst, size_t n);
  // Reads and discards the rest of a gzip stream, verifying every member's trailer and that
  // nothing follows the last one. Nothing to do for a raw file.
  void finish();

 private:
  struct InflateEnd {
    void operator()(z_stream_s* z) const;
  };

  size_t readRaw(uint8_t* dst, size_t n);
  size_t inflateInto(uint8_t* dst, size_t n);
  bool refill();
  int64_t compressedOffset() const;
  [[noreturn]] void corrupt(const char* zlibMessage, int64_t decompressedOffset) const;

  std::string path_;
  RegularFile file_;
  bool gzip_ = false;
  std::unique_ptr<z_stream_s, InflateEnd> zs_;  // gzip only; at a stable address, as zlib needs
  std::vector<uint8_t> in_;                     // compressed bytes read but not yet inflated
  int64_t fileRead_ = 0;                        // bytes read from the file so far
  bool atMemberStart_ = true;                   // no byte of the current gzip member consumed yet
  bool ended_ = false;                          // the gzip file ended right after a member
  int64_t offset_ = 0;
};

}  // namespace dl4cpp
