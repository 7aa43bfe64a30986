#pragma once
// The byte-level pieces of the model file format (docs/model-format.md), shared by
// ModelSerializer and NormalizerSerializer: a little-endian writer, and a bounds-checked reader
// of untrusted bytes whose every read first checks that the bytes are there.
#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nn/core/Error.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::modelfile {

// Little-endian, whatever the host: a file moves between machines.
class Writer {
 public:
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    u64(bits);
  }
  void raw(const void* data, size_t n) {
    const auto* p = static_cast<const std::byte*>(data);
    out_.insert(out_.end(), p, p + n);
  }
  void floats(const Tensor& t) {
    const float* p = t.data();
    out_.reserve(out_.size() + static_cast<size_t>(t.numel()) * 4);
    for (int64_t i = 0; i < t.numel(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, p + i, 4);
      u32(bits);
    }
  }
  std::vector<std::byte>& bytes() { return out_; }

 private:
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
  }
  std::vector<std::byte> out_;
};

// Reads `out.size()` bytes at `offset` of what holds a model file (memory, or a file on disk);
// callers ask only for ranges inside it.
using ReadAt = std::function<void(uint64_t offset, std::span<std::byte> out)>;

inline ReadAt readFrom(std::span<const std::byte> bytes) {
  return [bytes](uint64_t offset, std::span<std::byte> out) {
    std::memcpy(out.data(), bytes.data() + offset, out.size());
  };
}

// A bounds-checked cursor over `size` untrusted bytes: every read first checks that the bytes are
// there.
class Reader {
 public:
  Reader(ReadAt readAt, uint64_t size, const std::string& source)
      : readAt_(std::move(readAt)), size_(size), source_(source) {}
  Reader(std::span<const std::byte> bytes, const std::string& source)
      : Reader(readFrom(bytes), bytes.size(), source) {}

  uint64_t offset() const { return offset_; }
  uint64_t remaining() const { return size_ - offset_; }

  // Steps over `n` bytes; returns the offset they start at.
  uint64_t skip(uint64_t n, const char* what) {
    require(n, what);
    offset_ += n;
    return offset_ - n;
  }
  template <size_t N>
  std::array<std::byte, N> bytes(const char* what) {
    std::array<std::byte, N> b{};
    readAt_(skip(N, what), b);
    return b;
  }
  uint32_t u32(const char* what) { return static_cast<uint32_t>(le(bytes<4>(what))); }
  uint64_t u64(const char* what) { return le(bytes<8>(what)); }
  double f64(const char* what) {
    const uint64_t bits = u64(what);
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }

  static uint64_t le(std::span<const std::byte> b) {
    uint64_t v = 0;
    for (size_t i = b.size(); i-- > 0;) v = (v << 8) | static_cast<uint8_t>(b[i]);
    return v;
  }

 private:
  void require(uint64_t n, const char* what) const {
    if (n > remaining())
      throw DataTruncatedError(
          fmt::format("{}: truncated model file: {} needs {} bytes at offset "
                      "{}, only {} left (file is {} bytes)",
                      source_, what, n, offset_, remaining(), size_));
  }

  ReadAt readAt_;
  uint64_t size_;
  std::string source_;
  uint64_t offset_ = 0;
};

}  // namespace dl4cpp::modelfile
