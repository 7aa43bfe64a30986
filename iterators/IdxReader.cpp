#include "iterators/IdxReader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "iterators/FileByteStream.h"
#include "nn/core/Error.h"

namespace dl4cpp {

namespace {

std::string hex32(uint32_t v) { return fmt::format("{:#010x}", v); }

uint32_t bigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// An IDX file read front to back (FileByteStream), with the messages of IDX truncation.
class IdxSource {
 public:
  explicit IdxSource(const std::string& path) : path_(path), stream_(open(path)) {}

  // Fails before any allocation when the file cannot hold `expectedEnd` bytes of stream: a raw
  // file shorter than that, or a gzip file that small even at deflate's largest expansion.
  void requireLength(int64_t expectedEnd, const std::string& what) const {
    if (expectedEnd <= stream_.maxLength()) return;
    if (!stream_.gzip()) truncated(stream_.fileSize(), expectedEnd, what);
    throw DataTruncatedError(
        path_ + ": the header announces " + std::to_string(expectedEnd) +
        " bytes of decompressed data (" + what + "), but a gzip file of " +
        std::to_string(stream_.fileSize()) + " bytes decompresses to at most " +
        std::to_string(stream_.maxLength()) + " (deflate expands at most " +
        std::to_string(FileByteStream::kMaxGzipRatio) +
        ":1): the file is truncated or its header is corrupt. Download it again");
  }

  // Reads exactly n bytes or throws DataTruncatedError. `expectedEnd` is the stream length the
  // header announces, quoted in the message.
  void readExact(uint8_t* dst, size_t n, int64_t expectedEnd, const std::string& what) {
    if (stream_.read(dst, n) < n) truncated(stream_.offset(), expectedEnd, what);
  }

  // Reads `n` bytes. A raw file holds them (requireLength), so the buffer is allocated once; for
  // gzip it grows only as data arrives (at most doubling, never past n), so a header that claims
  // more than the stream holds costs no more memory than the data present.
  std::vector<uint8_t> readBody(int64_t n, int64_t expectedEnd, const std::string& what) {
    requireLength(expectedEnd, what);
    constexpr int64_t kChunk = int64_t{1} << 24;
    std::vector<uint8_t> out;
    if (!stream_.gzip()) out.reserve(static_cast<size_t>(n));
    while (static_cast<int64_t>(out.size()) < n) {
      const int64_t old = static_cast<int64_t>(out.size());
      const int64_t want = std::min(n - old, kChunk);
      if (old + want > static_cast<int64_t>(out.capacity()))
        out.reserve(static_cast<size_t>(std::min(n, std::max(2 * old, old + want))));
      out.resize(static_cast<size_t>(old + want));
      readExact(out.data() + old, static_cast<size_t>(want), expectedEnd, what);
    }
    return out;
  }

  // For gzip: decompresses the rest, so the trailers are verified before the data is used.
  void finish() { stream_.finish(); }

 private:
  static FileByteStream open(const std::string& path) {
    try {
      return FileByteStream(path, "an IDX file");
    } catch (const DataNotFoundError&) {
      throw DataNotFoundError(
          path +
          ": file not found. For MNIST run `scripts/get-mnist.sh DIR` (it downloads and "
          "verifies the four IDX files; DIR defaults to $DL4CPP_DATA_DIR/MNIST or "
          "~/.dl4cpp/data/MNIST); for Fashion-MNIST run `apt-get install "
          "dataset-fashion-mnist` (files in /usr/share/datasets/fashion-mnist)");
    }
  }

  [[noreturn]] void truncated(int64_t at, int64_t expectedEnd, const std::string& what) const {
    throw DataTruncatedError(
        path_ + ": file is truncated: data ran out at byte offset " + std::to_string(at) +
        (stream_.gzip() ? " of the decompressed gzip stream" : "") + " while reading " + what +
        "; expected " + std::to_string(expectedEnd) + " bytes in all (" +
        std::to_string(expectedEnd - at) + " missing). Download the file again");
  }

  std::string path_;
  FileByteStream stream_;
};

void checkMagic(const std::string& path, uint32_t magic, uint32_t expected) {
  if (magic == expected) return;
  const bool images = expected == IdxReader::kImagesMagic;
  std::string hint;
  if (magic == (images ? IdxReader::kLabelsMagic : IdxReader::kImagesMagic))
    hint = std::string(" (that is the magic of an IDX ") + (images ? "label" : "image") +
           " file: are the images and labels files swapped?)";
  else
    hint = " (not an IDX file: a failed download or an HTML error page? Download it again)";
  throw DataFormatError(path + ": bad magic number " + hex32(magic) + ", expected " +
                        hex32(expected) + " for an IDX " + (images ? "image" : "label") + " file" +
                        hint);
}

}  // namespace

bool IdxReader::isGzip(const std::string& path) {
  try {
    return FileByteStream(path, "an IDX file").gzip();
  } catch (const Error&) {
    return false;
  }
}

IdxImages IdxReader::readImages(const std::string& path) {
  IdxSource src(path);
  std::array<uint8_t, 16> header{};
  src.readExact(header.data(), 4, 16, "the magic number");
  checkMagic(path, bigEndian32(header.data()), kImagesMagic);
  src.readExact(header.data() + 4, 12, 16, "the header (image count, rows, cols)");

  IdxImages out;
  out.count = bigEndian32(header.data() + 4);
  out.rows = bigEndian32(header.data() + 8);
  out.cols = bigEndian32(header.data() + 12);
  // rows, cols <= 2^15 and count < 2^32 keep count*rows*cols below 2^62: no overflow.
  if (out.rows < 1 || out.cols < 1 || out.rows > kMaxImageSide || out.cols > kMaxImageSide)
    throw DataFormatError(path + ": header claims images of " + std::to_string(out.rows) + "x" +
                          std::to_string(out.cols) + " pixels; each side must be in [1, " +
                          std::to_string(kMaxImageSide) + "] (corrupt header?)");
  const int64_t bytes = out.count * out.imageSize();
  out.pixels = src.readBody(bytes, 16 + bytes,
                            "the pixels of " + std::to_string(out.count) + " images of " +
                                std::to_string(out.rows) + "x" + std::to_string(out.cols));
  src.finish();
  return out;
}

IdxLabels IdxReader::readLabels(const std::string& path, int numClasses) {
  IdxSource src(path);
  std::array<uint8_t, 8> header{};
  src.readExact(header.data(), 4, 8, "the magic number");
  checkMagic(path, bigEndian32(header.data()), kLabelsMagic);
  src.readExact(header.data() + 4, 4, 8, "the header (label count)");

  const int64_t count = bigEndian32(header.data() + 4);
  IdxLabels out;
  out.labels = src.readBody(count, 8 + count, std::to_string(count) + " labels");
  src.finish();
  if (numClasses > 0) {
    for (int64_t i = 0; i < count; ++i) {
      const int label = out.labels[static_cast<size_t>(i)];
      if (label >= numClasses)
        throw DataFormatError(path + ": label " + std::to_string(i) + " (byte offset " +
                              std::to_string(8 + i) + ") is " + std::to_string(label) +
                              ", outside the " + std::to_string(numClasses) + " classes [0, " +
                              std::to_string(numClasses - 1) + "]");
    }
  }
  return out;
}

}  // namespace dl4cpp
