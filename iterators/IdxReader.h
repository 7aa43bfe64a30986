#pragma once
// IdxReader: reads the IDX files of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/),
// either raw or gzip-compressed (recognised by the gzip magic bytes 1f 8b, not by the name).
//
// Format (all integers big-endian uint32):
//   images: magic 0x00000803, count, rows, cols, then count*rows*cols pixel bytes (row-major)
//   labels: magic 0x00000801, count, then count label bytes
//
// The file is read through FileByteStream: only regular files are opened, and a gzip file is
// decompressed to its end so that every member's CRC-32 and length are verified before the data
// is returned (concatenated members are one stream; bytes after the last member are an error).
//
// Every failure is a typed exception whose message names the file:
//   DataNotFoundError   the file does not exist (the message says how to get the data sets)
//   DataFormatError     not a regular file (a directory, FIFO or device), wrong magic number
//                       (expected and actual shown in hex), absurd header dimensions, a label
//                       outside [0, numClasses), or a corrupt gzip stream (bad deflate data, CRC-32
//                       or length mismatch, trailing bytes; the byte offset in the file is given)
//   DataTruncatedError  the file ends before the header says it should; the message gives the
//                       byte offset where the data ran out and how many bytes were expected
//                       (for gzip files, offsets count bytes of the decompressed stream), or the
//                       gzip data ends inside a member (its trailer cut off)
//   IoError             the file cannot be opened or read (permissions)
// Reading never goes out of bounds, and memory is bounded by the data actually present: a header
// that announces more than the file can hold (its size, or for gzip 1032 times its size, deflate's
// largest expansion) fails before any allocation, and the buffer grows only as data arrives.
// Bytes after the data the header announces are ignored (for gzip, they are still decompressed
// and checked).
#include <cstdint>
#include <string>
#include <vector>

namespace dl4cpp {

struct IdxImages {
  int64_t count = 0;            // number of images
  int64_t rows = 0, cols = 0;   // size of one image
  std::vector<uint8_t> pixels;  // (count, rows, cols) row-major, 0 = background, 255 = ink

  int64_t imageSize() const { return rows * cols; }
  // The rows*cols pixels of image i (no bounds check; i in [0, count)).
  const uint8_t* image(int64_t i) const { return pixels.data() + i * imageSize(); }
};

struct IdxLabels {
  std::vector<uint8_t> labels;  // one class index per example

  int64_t count() const { return static_cast<int64_t>(labels.size()); }
};

class IdxReader {
 public:
  static constexpr uint32_t kImagesMagic = 0x00000803;  // unsigned byte, 3 dimensions
  static constexpr uint32_t kLabelsMagic = 0x00000801;  // unsigned byte, 1 dimension
  // Upper bound for rows and cols of one image: anything larger is a corrupt header.
  static constexpr int64_t kMaxImageSide = 1 << 15;

  static IdxImages readImages(const std::string& path);
  // Labels must lie in [0, numClasses); numClasses <= 0 disables that check.
  static IdxLabels readLabels(const std::string& path, int numClasses = 10);

  // True when the file is a regular file that starts with the gzip magic bytes 1f 8b (false if it
  // cannot be opened or read).
  static bool isGzip(const std::string& path);
};

}  // namespace dl4cpp
