#pragma once
// EncodedBuffer: the bytes a PNG or JPEG encoder writes. libpng's and libjpeg's output callbacks
// grow it from inside their C frames, where nothing may throw, so grow() reports running out of
// memory by its result and the bytes are plain realloc'ed memory. The buffer itself lives in the
// frame that owns the encoder, above the frames a longjmp skips, and frees the bytes when it goes.
#include <cstddef>
#include <string_view>
#include <vector>

namespace dl4cpp::codec {

class EncodedBuffer {
 public:
  EncodedBuffer() = default;
  ~EncodedBuffer();
  EncodedBuffer(const EncodedBuffer&) = delete;
  EncodedBuffer& operator=(const EncodedBuffer&) = delete;

  // Room for at least `more` bytes after the first `used` (which are kept), by doubling; false
  // when memory runs out (the buffer is then unchanged).
  bool grow(size_t used, size_t more) noexcept;
  unsigned char* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  // The first `size` bytes; AllocationError naming `what` when memory runs out.
  std::vector<std::byte> copy(size_t size, std::string_view what) const;

 private:
  unsigned char* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace dl4cpp::codec
