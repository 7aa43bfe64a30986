#include "iterators/image/codec/JpegErrors.h"

#include <jerror.h>

namespace dl4cpp::codec {

namespace {

JpegErrorManager& managerOf(j_common_ptr cinfo) {
  return *reinterpret_cast<JpegErrorManager*>(cinfo->err);
}

// libjpeg's message for the current msg_code and parameters.
[[noreturn]] void failWithLibjpegMessage(j_common_ptr cinfo, JpegFailure failure) {
  JpegErrorManager& manager = managerOf(cinfo);
  (*cinfo->err->format_message)(cinfo, manager.message);
  manager.failure = failure;
  std::longjmp(manager.jump, 1);  // NOLINT(cert-err52-cpp): libjpeg's errors must not return
}

void onError(j_common_ptr cinfo) {
  failWithLibjpegMessage(cinfo, cinfo->err->msg_code == JERR_OUT_OF_MEMORY
                                    ? JpegFailure::OutOfMemory
                                    : JpegFailure::Error);
}

// Level -1 is a warning; levels 0 and up are trace messages.
void onMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  switch (cinfo->err->msg_code) {
    case JWRN_JPEG_EOF:
      failWithLibjpegMessage(cinfo, JpegFailure::Truncated);
    case JWRN_HUFF_BAD_CODE:
    case JWRN_ARITH_BAD_CODE:
    case JWRN_HIT_MARKER:
    case JWRN_MUST_RESYNC:
      failWithLibjpegMessage(cinfo, JpegFailure::CorruptData);
    default:
      ++cinfo->err->num_warnings;
  }
}

}  // namespace

jpeg_error_mgr* installJpegErrorManager(JpegErrorManager& manager) {
  jpeg_std_error(&manager.base);
  manager.base.error_exit = onError;
  manager.base.emit_message = onMessage;
  return &manager.base;
}

void failJpeg(j_common_ptr cinfo, JpegFailure failure, const char* message) {
  JpegErrorManager& manager = managerOf(cinfo);
  (void)std::snprintf(manager.message, sizeof manager.message, "%s", message);
  manager.failure = failure;
  std::longjmp(manager.jump, 1);  // NOLINT(cert-err52-cpp): libjpeg's errors must not return
}

}  // namespace dl4cpp::codec
