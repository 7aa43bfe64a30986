#include "iterators/image/codec/PngDecoder.h"

#include <fmt/format.h>

#include <cstring>
#include <new>
#include <vector>

#include "iterators/image/codec/PngErrors.h"
#include "nn/core/Error.h"
#include "nn/core/QuoteForMessage.h"

namespace dl4cpp::codec {

namespace {

// The bytes libpng reads from. Trivially destructible: it lives across the longjmp.
struct PngInput {
  const unsigned char* data = nullptr;
  size_t size = 0;
  size_t offset = 0;
  PngFailure* failure = nullptr;
};

void readPngBytes(png_structp png, png_bytep out, size_t count) {
  auto* input = static_cast<PngInput*>(png_get_io_ptr(png));
  if (count > input->size - input->offset) {
    input->failure->truncated = true;
    png_error(png, "the data ends before the image does");
  }
  std::memcpy(out, input->data + input->offset, count);
  input->offset += count;
}

// Owns libpng's read structures, in the C++ frame above the setjmp frames below.
struct PngReadStructs {
  png_structp png = nullptr;
  png_infop info = nullptr;

  PngReadStructs(PngFailure* failure, PngInput* input)
      : png(png_create_read_struct(PNG_LIBPNG_VER_STRING, failure, onPngError, onPngWarning)) {
    if (!png) return;
    info = png_create_info_struct(png);
    png_set_read_fn(png, input, readPngBytes);
    // libpng's own limit (1,000,000 a side) would fail first, with a message naming neither the
    // size nor ours: checkImageSize checks the header instead.
    png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
  }
  ~PngReadStructs() { png_destroy_read_struct(&png, &info, nullptr); }
  PngReadStructs(const PngReadStructs&) = delete;
  PngReadStructs& operator=(const PngReadStructs&) = delete;
};

// The frames libpng longjmps back to: each returns false when libpng reported an error (its text
// in the PngFailure). They hold no C++ object with a destructor, which a longjmp would skip.
// NOLINTBEGIN(cert-err52-cpp): libpng reports errors only by longjmp.
bool readHeader(png_structp png, png_infop info) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  return true;
}

bool setTransforms(png_structp png, png_infop info) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_expand(png);  // palette to RGB, grey below 8 bits to 8, tRNS to alpha
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  return true;
}

bool readRows(png_structp png, png_bytepp rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_image(png, rows);
  png_read_end(png, nullptr);  // to IEND: a file cut off after its last row is truncated too
  return true;
}
// NOLINTEND(cert-err52-cpp)

[[noreturn]] void fail(const PngInput& input, std::string_view name) {
  const PngFailure& failure = *input.failure;
  if (failure.truncated)
    throw DataTruncatedError(
        fmt::format("{}: truncated PNG: the file ends (after {} bytes) before the image does", name,
                    input.size));
  // libpng's message may quote bytes of the file (a chunk name).
  throw DataFormatError(fmt::format("{}: corrupt PNG: {}", name,
                                    escapeForMessage(failure.message, kLibraryMessageBytes)));
}

// A PNG whose header has been read: libpng's structures and the input they read from.
struct OpenedPng {
  PngFailure failure;
  PngInput input;
  PngReadStructs structs;

  OpenedPng(std::span<const std::byte> bytes, std::string_view name)
      : input{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), 0, &failure},
        structs(&failure, &input) {
    if (!structs.png || !structs.info)
      throw AllocationError(fmt::format("{}: cannot allocate libpng's read structures", name));
    if (!readHeader(structs.png, structs.info)) fail(input, name);
  }
  OpenedPng(const OpenedPng&) = delete;
  OpenedPng& operator=(const OpenedPng&) = delete;

  int width() const { return static_cast<int>(png_get_image_width(structs.png, structs.info)); }
  int height() const { return static_cast<int>(png_get_image_height(structs.png, structs.info)); }
};

}  // namespace

ImageHeader readPngHeader(std::span<const std::byte> bytes, std::string_view name) {
  const OpenedPng png(bytes, name);
  return {ImageFormat::Png, png.height(), png.width()};
}

InterleavedSamples decodePng(std::span<const std::byte> bytes, std::string_view name) {
  OpenedPng png(bytes, name);
  const int width = png.width();
  const int height = png.height();
  checkImageSize(width, height, name, "PNG");
  const PngReadStructs& structs = png.structs;
  if (!setTransforms(structs.png, structs.info)) fail(png.input, name);

  const int channels = png_get_channels(structs.png, structs.info);
  const int bitDepth = png_get_bit_depth(structs.png, structs.info);
  const size_t rowBytes = png_get_rowbytes(structs.png, structs.info);
  // What png_set_expand promises; checked because the rows below are sized by it.
  if (channels < 1 || channels > 4 || (bitDepth != 8 && bitDepth != 16) ||
      rowBytes != static_cast<size_t>(width) * static_cast<size_t>(channels * bitDepth / 8))
    throw DataFormatError(fmt::format(
        "{}: PNG decodes to {} channels of {} bits and {} bytes a row, not a layout of 8 or 16-bit "
        "grey, grey+alpha, RGB or RGBA",
        name, channels, bitDepth, rowBytes));

  InterleavedSamples samples = allocateSamples(height, width, channels, bitDepth, rowBytes, name);
  std::vector<png_bytep> rows(static_cast<size_t>(height));
  for (int y = 0; y < height; ++y) rows[static_cast<size_t>(y)] = samples.row(y);
  if (!readRows(structs.png, rows.data())) fail(png.input, name);
  return samples;
}

}  // namespace dl4cpp::codec
