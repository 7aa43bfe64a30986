#pragma once
// libpng's error handling for the PNG reader and writer. libpng reports an error by calling an
// error function that must not return; onPngError keeps the message and longjmps to the setjmp of
// png_jmpbuf, which every caller of libpng makes in a small function of its own that holds no C++
// object with a destructor (a longjmp skips destructors). Warnings are dropped: a warning (a known
// incorrect sRGB profile, a bad ancillary chunk) must not fail a good image, and the library never
// prints. Nothing here may throw: these functions run inside libpng's C frames.
#include <png.h>

namespace dl4cpp::codec {

// The error pointer handed to png_create_*_struct. Trivially destructible: it lives across the
// longjmp, in the frame that owns the png_struct.
struct PngFailure {
  char message[256] = {};
  bool truncated = false;  // the decoder's read function ran out of bytes
};

// Keeps the message in the PngFailure and longjmps to png_jmpbuf(png).
[[noreturn]] void onPngError(png_structp png, png_const_charp message);
void onPngWarning(png_structp png, png_const_charp message);

}  // namespace dl4cpp::codec
