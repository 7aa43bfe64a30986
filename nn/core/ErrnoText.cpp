#include "nn/core/ErrnoText.h"

#include <array>
#include <cstring>

namespace dl4cpp {

namespace {
// strerror_r is either the GNU one (returns the text, which may or may not be in buf) or the
// POSIX one (fills buf, returns 0 on success), depending on the C library and feature macros;
// the overload for the other one goes unused.
[[maybe_unused]] const char* textOf(const char* gnuResult, const char* /*buf*/) {
  return gnuResult;
}
[[maybe_unused]] const char* textOf(int posixResult, const char* buf) {
  return posixResult == 0 ? buf : "unknown error";
}
}  // namespace

std::string errnoText(int err) {
  std::array<char, 256> buf{};
  return textOf(strerror_r(err, buf.data(), buf.size()), buf.data());
}

}  // namespace dl4cpp
