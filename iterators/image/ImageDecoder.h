#pragma once
// ImageDecoder: PNG and JPEG files decoded into an Image (CHW floats in [0, 255]) with the number
// of channels the caller asks for, whatever the file holds:
//   1  grey. A colour image becomes its BT.601 luma 0.299 R + 0.587 G + 0.114 B (as OpenCV's
//      cvtColor; unrounded). A colour JPEG gives its Y plane instead, which its encoder computed
//      with the same weights (rounded to integers), as OpenCV's imread does.
//   3  RGB. A grey image is repeated in the three channels.
//   4  RGBA. An image without alpha gets alpha 255 (opaque).
// Alpha is dropped for 1 and 3 channels, not composited onto a background. 8-bit samples keep their
// values, 16-bit ones are scaled by 255/65535. No gamma or colour-profile conversion is made.
//
// The format is recognised by its magic bytes, never by the file's name:
//   PNG   every colour type and bit depth: grey 1, 2, 4, 8, 16 bits; grey+alpha, RGB and RGBA 8 and
//         16 bits; palette 1 to 8 bits, its tRNS transparency as alpha (so is a grey or RGB
//         image's tRNS colour); interlaced or not.
//   JPEG  grey, YCbCr and RGB; CMYK and YCCK converted to RGB without colour management (Adobe's
//         inverted CMYK as Photoshop writes it when the file has an Adobe marker); baseline,
//         progressive and arithmetic-coded, 8-bit precision. The EXIF orientation is not applied.
//
// The size hint is the size the caller will resize the decoded image to. A JPEG then decodes
// directly at the smallest of libjpeg's scales 1/8, 2/8, ..., 6/8, 8/8 that still gives at least
// the hinted height and width (the inverse DCT computes the reduced image, cheaper than a full
// decode followed by a resize; 7/8 is skipped, being slower than 8/8). Other formats, and hints of
// 0, decode at full size; the decoded image may be larger than the hint, never smaller unless the
// file is.
//
// Limits: at most kMaxSide pixels a side and kMaxPixels pixels in all, checked on the header before
// anything is allocated. The sample buffer is filled as the data arrives, so a header that claims
// a large image costs memory only as far as the file really holds it. The limits also bound what
// any file can cost, however small: an arithmetic-coded JPEG of a few hundred bytes validly
// describes an image of the largest size (its encoder may drop the trailing zero data, which the
// decoder then supplies); at the limits such a file takes 0.6 GB and a fraction of a second to
// decode to RGBA (docs/data.md, "Limits").
// Within the limits a PNG still yields up to about 1000 bytes of samples per byte (zlib's ratio):
// a caller taking images of a known size from untrusted sources reads the header first (readHeader)
// and decodes only those it accepts.
//
// Errors, each naming the file (readHeader's are those of the bytes up to the end of the header):
//   DataFormatError     not a PNG or JPEG (the message says what the bytes look like: a GIF, BMP,
//                       WebP, TIFF image, an ICO icon, text, ...); corrupt data (libpng's or
//                       libjpeg's reason); dimensions over the limits; more than 500 progressive
//                       scans; a JPEG colour space or precision not supported; for decodeFile, a
//                       path that is not a regular file (directory, FIFO)
//   DataTruncatedError  the data ends before the image does: an empty file, one cut off anywhere,
//                       a JPEG without its end marker
//   DataNotFoundError   decodeFile: no such file
//   IoError             decodeFile: the file cannot be opened or read
//   AllocationError     the decoded image does not fit in memory
//   ConfigError         channels not 1, 3 or 4, or a negative size hint
// Warnings (libpng's "iCCP: known incorrect sRGB profile", extraneous bytes between JPEG markers)
// do not fail a good image; nothing is ever printed.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "iterators/image/Image.h"
#include "iterators/image/ImageFormat.h"

namespace dl4cpp {

// The size an image will be resized to after decoding; 0 and 0 for none.
struct DecodeSizeHint {
  int height = 0;
  int width = 0;
};

// What an image's header states, read without decoding the image.
struct ImageHeader {
  ImageFormat format = ImageFormat::Png;
  int height = 0;  // the file's size, at least 1 (a header claiming 0 is corrupt); not checked
  int width = 0;   // against the limits, which decode applies
};

class ImageDecoder {
 public:
  // 2^25 pixels: 65535 x 512 or 5792 x 5792 (a 24-megapixel photo fits); as RGBA floats, 512 MiB.
  static constexpr int kMaxSide = 65535;
  static constexpr int64_t kMaxPixels = int64_t{1} << 25;

  // `name` names the bytes' source (a file path) in error messages.
  static Image decode(std::span<const std::byte> bytes, int channels, std::string_view name,
                      DecodeSizeHint hint = {});
  // The format and size of the image in `bytes`, from its header alone (a JPEG's is everything up
  // to its first scan): lets a caller refuse an image by its size before decoding it costs memory
  // and time.
  static ImageHeader readHeader(std::span<const std::byte> bytes, std::string_view name);
  // Reads a regular file (RegularFile: directories, FIFOs and devices are refused before a byte is
  // read) and decodes it.
  static Image decodeFile(const std::filesystem::path& path, int channels,
                          DecodeSizeHint hint = {});
};

}  // namespace dl4cpp
