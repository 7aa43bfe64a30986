#pragma once
// libjpeg's error handling for the JPEG reader and writer. libjpeg's default error_exit calls
// exit() and its default error_exit and emit_message print to stderr; JpegErrorManager's keep the
// message instead and longjmp to `jump`, which every caller of libjpeg sets in a small function of
// its own that holds no C++ object with a destructor (a longjmp skips destructors). Nothing here
// may throw: these functions run inside libjpeg's C frames.
//
// Warnings: "premature end of JPEG file" is a truncation and ends decoding (libjpeg would pad the
// image with grey); warnings that entropy-coded data is corrupt (bad Huffman or arithmetic code,
// a segment or restart interval cut short) end it as corrupt data, since pixels would be lost.
// Other warnings (extraneous bytes between markers, an unknown Adobe transform or JFIF version, a
// bad ICC marker) leave the pixels whole and are dropped.
#include <csetjmp>
// jpeglib.h uses FILE and size_t without including their headers.
// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on

namespace dl4cpp::codec {

enum class JpegFailure { None, Error, OutOfMemory, Truncated, CorruptData };

// Trivially destructible: it lives across the longjmp, in the frame that owns the libjpeg struct.
struct JpegErrorManager {
  jpeg_error_mgr base{};  // first: libjpeg's j_common_ptr->err points here
  std::jmp_buf jump{};
  JpegFailure failure = JpegFailure::None;
  char message[JMSG_LENGTH_MAX] = {};
};

// Installs the handlers; returns &manager.base for cinfo.err.
jpeg_error_mgr* installJpegErrorManager(JpegErrorManager& manager);

// Ends decoding or encoding from inside libjpeg: keeps `message` and `failure`, and longjmps.
[[noreturn]] void failJpeg(j_common_ptr cinfo, JpegFailure failure, const char* message);

}  // namespace dl4cpp::codec
