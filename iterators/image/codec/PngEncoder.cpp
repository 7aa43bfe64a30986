#include "iterators/image/codec/PngEncoder.h"

#include <fmt/format.h>

#include <cstring>

#include "iterators/image/codec/EncodedBuffer.h"
#include "iterators/image/codec/PngErrors.h"
#include "nn/core/Error.h"

namespace dl4cpp::codec {

namespace {

// Where libpng's write callback puts the bytes.
struct PngOutput {
  EncodedBuffer buffer;
  size_t size = 0;
  bool outOfMemory = false;
};

void writePngBytes(png_structp png, png_bytep bytes, size_t count) {
  auto* output = static_cast<PngOutput*>(png_get_io_ptr(png));
  if (!output->buffer.grow(output->size, count)) {
    output->outOfMemory = true;
    png_error(png, "out of memory for the encoded PNG");
  }
  std::memcpy(output->buffer.data() + output->size, bytes, count);
  output->size += count;
}

void flushNothing(png_structp) {}

// Owns libpng's write structures and the output, in the C++ frame above the setjmp frame below.
struct PngWriteStructs {
  PngFailure failure;
  PngOutput output;
  png_structp png = nullptr;
  png_infop info = nullptr;

  PngWriteStructs()
      : png(png_create_write_struct(PNG_LIBPNG_VER_STRING, &failure, onPngError, onPngWarning)) {
    if (!png) return;
    info = png_create_info_struct(png);
    png_set_write_fn(png, &output, writePngBytes, flushNothing);
  }
  ~PngWriteStructs() { png_destroy_write_struct(&png, &info); }
  PngWriteStructs(const PngWriteStructs&) = delete;
  PngWriteStructs& operator=(const PngWriteStructs&) = delete;
};

int colourType(int channels) {
  switch (channels) {
    case 1:
      return PNG_COLOR_TYPE_GRAY;
    case 2:
      return PNG_COLOR_TYPE_GRAY_ALPHA;
    case 3:
      return PNG_COLOR_TYPE_RGB;
    default:
      return PNG_COLOR_TYPE_RGB_ALPHA;
  }
}

// The frame libpng longjmps back to; false when libpng reported an error. It holds no C++ object
// with a destructor, which a longjmp would skip.
bool writeImage(png_structp png, png_infop info, const InterleavedSamples& samples,
                png_bytepp rows) {
  if (setjmp(png_jmpbuf(png))) return false;  // NOLINT(cert-err52-cpp): libpng's errors longjmp
  png_set_IHDR(png, info, static_cast<png_uint_32>(samples.width),
               static_cast<png_uint_32>(samples.height), samples.bitDepth,
               colourType(samples.channels), PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows);
  png_write_end(png, nullptr);
  return true;
}

}  // namespace

std::vector<std::byte> encodePng(const InterleavedSamples& samples, std::string_view what) {
  PngWriteStructs structs;
  if (!structs.png || !structs.info)
    throw AllocationError(fmt::format("{}: cannot allocate libpng's write structures", what));
  std::vector<png_bytep> rows(static_cast<size_t>(samples.height));
  for (int y = 0; y < samples.height; ++y) rows[static_cast<size_t>(y)] = samples.row(y);
  if (!writeImage(structs.png, structs.info, samples, rows.data())) {
    if (structs.output.outOfMemory)
      throw AllocationError(fmt::format("{}: out of memory for the encoded PNG ({} bytes so far)",
                                        what, structs.output.size));
    throw ConfigError(
        fmt::format("{}: libpng cannot encode the image: {}", what, structs.failure.message));
  }
  return structs.output.buffer.copy(structs.output.size, what);
}

}  // namespace dl4cpp::codec
