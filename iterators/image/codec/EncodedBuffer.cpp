#include "iterators/image/codec/EncodedBuffer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "nn/core/Error.h"

namespace dl4cpp::codec {

EncodedBuffer::~EncodedBuffer() { std::free(data_); }

bool EncodedBuffer::grow(size_t used, size_t more) noexcept {
  if (more <= capacity_ - used) return true;
  const size_t capacity = std::max({2 * capacity_, used + more, size_t{1} << 16});
  void* grown = std::realloc(data_, capacity);
  if (!grown) return false;
  data_ = static_cast<unsigned char*>(grown);
  capacity_ = capacity;
  return true;
}

std::vector<std::byte> EncodedBuffer::copy(size_t size, std::string_view what) const {
  const auto* begin = reinterpret_cast<const std::byte*>(data_);
  try {
    return {begin, begin + size};
  } catch (const std::bad_alloc&) {
    throw AllocationError(
        fmt::format("{}: out of memory for the encoded file's {} bytes", what, size));
  }
}

}  // namespace dl4cpp::codec
