#include "iterators/image/codec/PngErrors.h"

#include <cstdio>

namespace dl4cpp::codec {

void onPngError(png_structp png, png_const_charp message) {
  auto* failure = static_cast<PngFailure*>(png_get_error_ptr(png));
  // snprintf truncates and terminates; it cannot fail on this format.
  (void)std::snprintf(failure->message, sizeof failure->message, "%s", message);
  png_longjmp(png, 1);
}

void onPngWarning(png_structp, png_const_charp) {}

}  // namespace dl4cpp::codec
