#include <dl4cpp/iterators/IdxReader.h>

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <dl4cpp/nn/Error.h>

namespace dl4cpp {

namespace {

namespace fs = std::filesystem;

std::string hex32(uint32_t v) {
  std::array<char, 16> buf{};
  std::snprintf(buf.data(), buf.size(), "0x%08x", v);
  return buf.data();
}

uint32_t bigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

// A raw or gzip file read front to back, tracking the offset in the (decompressed) byte stream so
// that every error can say where it happened. zlib reads raw files transparently.
class ByteSource {
 public:
  explicit ByteSource(const std::string& path) : path_(path) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (!fs::exists(st))
      throw DataNotFoundError(
          path +
          ": file not found. For MNIST run `scripts/get-mnist.sh DIR` (it downloads and "
          "verifies the four IDX files; DIR defaults to $DL4CPP_DATA_DIR/MNIST or "
          "~/.dl4cpp/data/MNIST); for Fashion-MNIST run `apt-get install "
          "dataset-fashion-mnist` (files in /usr/share/datasets/fashion-mnist)");
    if (fs::is_directory(st)) throw DataError(path + ": is a directory, not an IDX file");
    gzip_ = IdxReader::isGzip(path);
    if (!gzip_) {
      std::error_code sizeError;
      const auto size = fs::file_size(path, sizeError);
      if (!sizeError) rawSize_ = static_cast<int64_t>(size);  // else: unknown, checked as read
    }
    errno = 0;
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_)
      throw DataError(path + ": cannot open: " +
                      (errno ? std::strerror(errno) : std::string("zlib could not allocate")));
    gzbuffer(file_.get(), 1 << 17);
  }

  bool gzip() const { return gzip_; }
  int64_t offset() const { return offset_; }

  // Fails early, before any allocation, when a raw file is shorter than `expectedEnd` bytes.
  void requireSize(int64_t expectedEnd, const std::string& what) const {
    if (rawSize_ >= 0 && rawSize_ < expectedEnd) truncated(rawSize_, expectedEnd, what);
  }

  // Reads exactly n bytes or throws DataTruncatedError. `expectedEnd` is the stream length the
  // header announces, quoted in the message.
  void readExact(uint8_t* dst, size_t n, int64_t expectedEnd, const std::string& what) {
    const size_t got = readSome(dst, n);
    if (got < n) truncated(offset_, expectedEnd, what);
  }

  // Reads `n` bytes in bounded chunks, so a corrupt header in a small gzip file fails with
  // DataTruncatedError instead of first allocating what the header claims.
  std::vector<uint8_t> readBody(int64_t n, int64_t expectedEnd, const std::string& what) {
    requireSize(expectedEnd, what);
    constexpr int64_t kChunk = int64_t{1} << 24;
    std::vector<uint8_t> out;
    out.reserve(static_cast<size_t>(rawSize_ >= 0 ? n : std::min(n, kChunk)));
    while (static_cast<int64_t>(out.size()) < n) {
      const size_t old = out.size();
      const size_t want = static_cast<size_t>(std::min(n - static_cast<int64_t>(old), kChunk));
      out.resize(old + want);
      readExact(out.data() + old, want, expectedEnd, what);
    }
    return out;
  }

  // For gzip: reading on past the data makes zlib check the stream's CRC and length trailer.
  void checkGzipTrailer() {
    if (!gzip_) return;
    uint8_t extra = 0;
    const int r = gzread(file_.get(), &extra, 1);
    int err = Z_OK;
    const char* msg = gzerror(file_.get(), &err);
    if (r >= 0 && err == Z_OK) return;  // end of stream, or trailing bytes (ignored)
    if (err == Z_BUF_ERROR)
      throw DataTruncatedError(path_ +
                               ": gzip stream ends without its trailer after decompressed "
                               "byte offset " +
                               std::to_string(offset_) +
                               " (the file was cut short; download it again)");
    corrupt(msg);
  }

 private:
  size_t readSome(uint8_t* dst, size_t n) {
    size_t total = 0;
    while (total < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - total, size_t{1} << 30));
      const int r = gzread(file_.get(), dst + total, chunk);
      if (r < 0) {
        int err = Z_OK;
        const char* msg = gzerror(file_.get(), &err);
        if (err == Z_BUF_ERROR) break;  // gzip stream cut short: reported as truncation
        offset_ += static_cast<int64_t>(total);
        corrupt(msg);
      }
      if (r == 0) break;
      total += static_cast<size_t>(r);
    }
    offset_ += static_cast<int64_t>(total);
    return total;
  }

  [[noreturn]] void corrupt(const char* zlibMessage) const {
    throw DataFormatError(
        path_ + ": corrupt gzip stream near decompressed byte offset " + std::to_string(offset_) +
        ": " + (zlibMessage ? zlibMessage : "unknown zlib error") + " (download the file again)");
  }

  [[noreturn]] void truncated(int64_t at, int64_t expectedEnd, const std::string& what) const {
    throw DataTruncatedError(
        path_ + ": file is truncated: data ran out at byte offset " + std::to_string(at) +
        (gzip_ ? " of the decompressed gzip stream" : "") + " while reading " + what +
        "; expected " + std::to_string(expectedEnd) + " bytes in all (" +
        std::to_string(expectedEnd - at) + " missing). Download the file again");
  }

  std::string path_;
  std::unique_ptr<gzFile_s, GzCloser> file_;
  bool gzip_ = false;
  int64_t rawSize_ = -1;  // size on disk of a raw file; -1 for gzip (unknown until read)
  int64_t offset_ = 0;
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
  std::ifstream in(path, std::ios::binary);
  std::array<char, 2> magic{};
  if (!in.read(magic.data(), 2)) return false;
  return static_cast<uint8_t>(magic[0]) == 0x1f && static_cast<uint8_t>(magic[1]) == 0x8b;
}

IdxImages IdxReader::readImages(const std::string& path) {
  ByteSource src(path);
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
  src.checkGzipTrailer();
  return out;
}

IdxLabels IdxReader::readLabels(const std::string& path, int numClasses) {
  ByteSource src(path);
  std::array<uint8_t, 8> header{};
  src.readExact(header.data(), 4, 8, "the magic number");
  checkMagic(path, bigEndian32(header.data()), kLabelsMagic);
  src.readExact(header.data() + 4, 4, 8, "the header (label count)");

  const int64_t count = bigEndian32(header.data() + 4);
  IdxLabels out;
  out.labels = src.readBody(count, 8 + count, std::to_string(count) + " labels");
  src.checkGzipTrailer();
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
