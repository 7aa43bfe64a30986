#include "iterators/image/codec/JpegEncoder.h"

#include <fmt/format.h>

#include "iterators/image/codec/EncodedBuffer.h"
#include "iterators/image/codec/JpegErrors.h"
#include "nn/core/Error.h"

namespace dl4cpp::codec {

namespace {

// libjpeg's destination (jpeg_mem_dest's own buffer cannot be freed safely after an error: it
// frees the old block when it grows but reports the new one only at the end).
struct JpegOutput {
  jpeg_destination_mgr base{};  // first: libjpeg's cinfo->dest points here
  EncodedBuffer buffer;
  size_t size = 0;  // set when the encoding ends
};

JpegOutput& outputOf(j_compress_ptr cinfo) { return *reinterpret_cast<JpegOutput*>(cinfo->dest); }

// Gives libjpeg the buffer from `used` bytes on, with room for `more`.
void growBy(j_compress_ptr cinfo, size_t used, size_t more) {
  JpegOutput& output = outputOf(cinfo);
  if (!output.buffer.grow(used, more))
    failJpeg(reinterpret_cast<j_common_ptr>(cinfo), JpegFailure::OutOfMemory,
             "out of memory for the encoded JPEG");
  output.base.next_output_byte = output.buffer.data() + used;
  output.base.free_in_buffer = output.buffer.capacity() - used;
}

void startOutput(j_compress_ptr cinfo) { growBy(cinfo, 0, 1); }

// Called when the buffer is full.
boolean growOutput(j_compress_ptr cinfo) {
  const size_t used = outputOf(cinfo).buffer.capacity();
  growBy(cinfo, used, 1);
  return TRUE;
}

void endOutput(j_compress_ptr cinfo) {
  JpegOutput& output = outputOf(cinfo);
  output.size = output.buffer.capacity() - output.base.free_in_buffer;
}

// Owns libjpeg's compressor and the output, in the C++ frame above the setjmp frame below.
struct JpegCompressor {
  jpeg_compress_struct cinfo{};
  JpegErrorManager errors;
  JpegOutput output;

  JpegCompressor() {
    cinfo.err = installJpegErrorManager(errors);
    output.base.init_destination = startOutput;
    output.base.empty_output_buffer = growOutput;
    output.base.term_destination = endOutput;
  }
  ~JpegCompressor() { jpeg_destroy_compress(&cinfo); }
  JpegCompressor(const JpegCompressor&) = delete;
  JpegCompressor& operator=(const JpegCompressor&) = delete;
};

// The frame libjpeg longjmps back to; false when libjpeg reported an error. It holds no C++ object
// with a destructor, which a longjmp would skip.
bool compress(JpegCompressor& c, const InterleavedSamples* samples, int quality) {
  if (setjmp(c.errors.jump)) return false;  // NOLINT(cert-err52-cpp): libjpeg's errors longjmp
  jpeg_create_compress(&c.cinfo);
  c.cinfo.dest = &c.output.base;
  c.cinfo.image_width = static_cast<JDIMENSION>(samples->width);
  c.cinfo.image_height = static_cast<JDIMENSION>(samples->height);
  c.cinfo.input_components = samples->channels;
  c.cinfo.in_color_space = samples->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c.cinfo);
  jpeg_set_quality(&c.cinfo, quality, TRUE);
  jpeg_start_compress(&c.cinfo, TRUE);
  while (c.cinfo.next_scanline < c.cinfo.image_height) {
    JSAMPROW row = samples->row(static_cast<int>(c.cinfo.next_scanline));
    jpeg_write_scanlines(&c.cinfo, &row, 1);
  }
  jpeg_finish_compress(&c.cinfo);
  return true;
}

}  // namespace

std::vector<std::byte> encodeJpeg(const InterleavedSamples& samples, int quality,
                                  std::string_view what) {
  JpegCompressor c;
  if (!compress(c, &samples, quality)) {
    if (c.errors.failure == JpegFailure::OutOfMemory)
      throw AllocationError(fmt::format("{}: cannot encode the JPEG: {}", what, c.errors.message));
    throw ConfigError(
        fmt::format("{}: libjpeg cannot encode the image: {}", what, c.errors.message));
  }
  return c.output.buffer.copy(c.output.size, what);
}

}  // namespace dl4cpp::codec
