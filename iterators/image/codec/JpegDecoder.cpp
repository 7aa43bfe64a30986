#include "iterators/image/codec/JpegDecoder.h"

#include <fmt/format.h>

#include "iterators/image/codec/JpegErrors.h"
#include "nn/core/Error.h"
#include "nn/core/QuoteForMessage.h"

namespace dl4cpp::codec {

namespace {

// A progressive file may hold any number of scans, each a pass over the whole image: a small
// hostile file could keep the decoder busy for minutes. Real files have about 10; the limit is
// libjpeg-turbo's own fuzzers' (TJPARAM_SCANLIMIT).
constexpr int kMaxScans = 500;

void limitScans(j_common_ptr cinfo) {
  if (reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number > kMaxScans)
    failJpeg(cinfo, JpegFailure::CorruptData, "more than 500 scans in a progressive JPEG");
}

// Owns libjpeg's decompressor, in the C++ frame above the setjmp frames below.
struct JpegDecompressor {
  jpeg_decompress_struct cinfo{};
  JpegErrorManager errors;
  jpeg_progress_mgr progress{};

  JpegDecompressor() {
    cinfo.err = installJpegErrorManager(errors);
    progress.progress_monitor = limitScans;
  }
  // Safe after a failed or skipped jpeg_create_decompress too (it frees what was allocated).
  ~JpegDecompressor() { jpeg_destroy_decompress(&cinfo); }
  JpegDecompressor(const JpegDecompressor&) = delete;
  JpegDecompressor& operator=(const JpegDecompressor&) = delete;
};

// The frames libjpeg longjmps back to: each returns false when libjpeg reported an error (its text
// in the JpegErrorManager). They hold no C++ object with a destructor, which a longjmp would skip.
// NOLINTBEGIN(cert-err52-cpp): libjpeg reports errors only through error_exit, which must not
// return.
bool readHeader(JpegDecompressor& d, const unsigned char* data, size_t size) {
  if (setjmp(d.errors.jump)) return false;
  jpeg_create_decompress(&d.cinfo);
  d.cinfo.progress = &d.progress;
  jpeg_mem_src(&d.cinfo, data, size);
  jpeg_read_header(&d.cinfo, TRUE);
  return true;
}

// Sets the output colour space and the scale: the smallest of 1/8 ... 6/8 and 8/8 that gives at
// least the hinted size (8/8 without a hint). Not 7/8: libjpeg-turbo's 7 x 7 inverse DCT has no
// SIMD version, and decoding at 7/8 takes longer than at 8/8, more than the smaller image saves in
// the resize that follows.
bool chooseOutput(JpegDecompressor& d, J_COLOR_SPACE space, DecodeSizeHint hint) {
  if (setjmp(d.errors.jump)) return false;
  d.cinfo.out_color_space = space;
  d.cinfo.scale_denom = 8;
  for (unsigned num = hint.height > 0 || hint.width > 0 ? 1 : 8; num <= 8;
       num += num == 6 ? 2 : 1) {
    d.cinfo.scale_num = num;
    jpeg_calc_output_dimensions(&d.cinfo);
    if (d.cinfo.output_height >= static_cast<unsigned>(hint.height) &&
        d.cinfo.output_width >= static_cast<unsigned>(hint.width))
      break;
  }
  return true;
}

bool readRows(JpegDecompressor& d, InterleavedSamples* samples) {
  if (setjmp(d.errors.jump)) return false;
  jpeg_start_decompress(&d.cinfo);
  if (d.cinfo.output_width != static_cast<unsigned>(samples->width) ||
      d.cinfo.output_height != static_cast<unsigned>(samples->height) ||
      d.cinfo.output_components != samples->channels)
    failJpeg(reinterpret_cast<j_common_ptr>(&d.cinfo), JpegFailure::Error,
             "libjpeg's output size changed between jpeg_calc_output_dimensions and "
             "jpeg_start_decompress");
  while (d.cinfo.output_scanline < d.cinfo.output_height) {
    JSAMPROW row = samples->row(static_cast<int>(d.cinfo.output_scanline));
    jpeg_read_scanlines(&d.cinfo, &row, 1);
  }
  jpeg_finish_decompress(&d.cinfo);  // to the end marker: a file cut off before it is truncated
  return true;
}
// NOLINTEND(cert-err52-cpp)

[[noreturn]] void fail(const JpegDecompressor& d, size_t size, std::string_view name) {
  // libjpeg's message may quote values read from the file.
  const std::string message = escapeForMessage(d.errors.message, kLibraryMessageBytes);
  if (d.errors.failure == JpegFailure::Truncated)
    throw DataTruncatedError(
        fmt::format("{}: truncated JPEG: the file ends (after {} bytes) before the image does ({})",
                    name, size, message));
  if (d.errors.failure == JpegFailure::OutOfMemory)
    throw AllocationError(fmt::format("{}: cannot decode the JPEG: {}", name, message));
  throw DataFormatError(fmt::format("{}: JPEG cannot be decoded: {}", name, message));
}

// CMYK to RGB in place (3 samples a pixel at the start of each row), without colour management:
// R = 255 (1 - C/255)(1 - K/255) and so on. With an Adobe marker the samples are inverted (255 is
// no ink), as Photoshop writes them and as libjpeg, OpenCV and Pillow read them.
void cmykToRgb(InterleavedSamples& samples, bool inverted) {
  const unsigned flip = inverted ? 0 : 255;
  for (int y = 0; y < samples.height; ++y) {
    uint8_t* row = samples.row(y);
    for (size_t x = 0; x < static_cast<size_t>(samples.width); ++x) {
      const unsigned k = row[4 * x + 3] ^ flip;  // v ^ 255 == 255 - v for a byte
      const unsigned cmy[3] = {row[4 * x] ^ flip, row[4 * x + 1] ^ flip, row[4 * x + 2] ^ flip};
      for (size_t i = 0; i < 3; ++i)
        row[3 * x + i] = static_cast<uint8_t>((cmy[i] * k + 127) / 255);
    }
  }
  samples.channels = 3;
}

// A decompressor that has read the file's header, up to its first scan.
void openJpeg(JpegDecompressor& d, std::span<const std::byte> bytes, std::string_view name) {
  if (!readHeader(d, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()))
    fail(d, bytes.size(), name);
}

}  // namespace

ImageHeader readJpegHeader(std::span<const std::byte> bytes, std::string_view name) {
  JpegDecompressor d;
  openJpeg(d, bytes, name);
  return {ImageFormat::Jpeg, static_cast<int>(d.cinfo.image_height),
          static_cast<int>(d.cinfo.image_width)};
}

InterleavedSamples decodeJpeg(std::span<const std::byte> bytes, std::string_view name, bool grey,
                              DecodeSizeHint hint) {
  JpegDecompressor d;
  openJpeg(d, bytes, name);
  checkImageSize(d.cinfo.image_width, d.cinfo.image_height, name, "JPEG");

  J_COLOR_SPACE space = JCS_UNKNOWN;
  int components = 0;
  switch (d.cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
      space = JCS_GRAYSCALE, components = 1;
      break;
    case JCS_YCbCr:
    case JCS_RGB:
      space = grey ? JCS_GRAYSCALE : JCS_RGB, components = grey ? 1 : 3;
      break;
    case JCS_CMYK:
    case JCS_YCCK:
      space = JCS_CMYK, components = 4;
      break;
    default:
      throw DataFormatError(fmt::format(
          "{}: JPEG with {} components in an unknown colour space is not supported (grey, "
          "YCbCr, RGB, CMYK and YCCK are)",
          name, d.cinfo.num_components));
  }
  if (!chooseOutput(d, space, hint)) fail(d, bytes.size(), name);

  const int width = static_cast<int>(d.cinfo.output_width);
  const int height = static_cast<int>(d.cinfo.output_height);
  InterleavedSamples samples =
      allocateSamples(height, width, components, 8, static_cast<size_t>(width) * components, name);
  if (!readRows(d, &samples)) fail(d, bytes.size(), name);
  if (space == JCS_CMYK) cmykToRgb(samples, d.cinfo.saw_Adobe_marker);
  return samples;
}

}  // namespace dl4cpp::codec
