#pragma once
// JPEG files written with libjpeg directly, for what ImageWriter does not write: CMYK and YCCK
// (with or without Adobe's marker), progressive and arithmetic coding, restart markers, 4:4:4.
// Errors go through the library's JpegErrorManager (libjpeg's default would exit()).
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "iterators/image/codec/JpegErrors.h"

namespace testutil {

struct JpegOptions {
  J_COLOR_SPACE input = JCS_RGB;     // the samples given: JCS_GRAYSCALE, JCS_RGB or JCS_CMYK
  J_COLOR_SPACE stored = JCS_YCbCr;  // in the file
  bool adobeMarker = false;          // libjpeg writes one for RGB, CMYK and YCCK unless cleared
  bool progressive = false;
  bool arithmetic = false;
  unsigned restartInterval = 0;  // MCUs
  bool fullChroma = false;       // 4:4:4 instead of libjpeg's 4:2:0
  int quality = 95;
  std::vector<jpeg_scan_info> scans;  // a progression script of one's own, instead of libjpeg's
};

namespace detail {

// The setjmp frame: no C++ object with a destructor in it.
inline bool writeJpeg(jpeg_compress_struct* cinfo, dl4cpp::codec::JpegErrorManager* errors,
                      unsigned char** out, unsigned long* size, const uint8_t* samples, int width,
                      int height, int components, const JpegOptions& o) {
  if (setjmp(errors->jump)) return false;
  jpeg_create_compress(cinfo);
  jpeg_mem_dest(cinfo, out, size);
  cinfo->image_width = static_cast<JDIMENSION>(width);
  cinfo->image_height = static_cast<JDIMENSION>(height);
  cinfo->input_components = components;
  cinfo->in_color_space = o.input;
  jpeg_set_defaults(cinfo);
  jpeg_set_colorspace(cinfo, o.stored);
  cinfo->write_Adobe_marker = o.adobeMarker ? TRUE : FALSE;
  jpeg_set_quality(cinfo, o.quality, TRUE);
  if (o.progressive) jpeg_simple_progression(cinfo);
  if (!o.scans.empty()) {
    cinfo->scan_info = o.scans.data();
    cinfo->num_scans = static_cast<int>(o.scans.size());
  }
  cinfo->arith_code = o.arithmetic ? TRUE : FALSE;
  cinfo->restart_interval = o.restartInterval;
  if (o.fullChroma)
    for (int c = 0; c < cinfo->num_components; ++c)
      cinfo->comp_info[c].h_samp_factor = cinfo->comp_info[c].v_samp_factor = 1;
  jpeg_start_compress(cinfo, TRUE);
  while (cinfo->next_scanline < cinfo->image_height) {
    JSAMPROW row = const_cast<uint8_t*>(samples) + static_cast<size_t>(cinfo->next_scanline) *
                                                       static_cast<size_t>(width * components);
    jpeg_write_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_compress(cinfo);
  return true;
}

}  // namespace detail

// `samples`: height rows of width x components interleaved bytes.
inline std::vector<uint8_t> jpegFile(const std::vector<uint8_t>& samples, int width, int height,
                                     int components, const JpegOptions& options) {
  jpeg_compress_struct cinfo{};
  dl4cpp::codec::JpegErrorManager errors;
  cinfo.err = dl4cpp::codec::installJpegErrorManager(errors);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  const bool ok = detail::writeJpeg(&cinfo, &errors, &out, &size, samples.data(), width, height,
                                    components, options);
  jpeg_destroy_compress(&cinfo);
  std::vector<uint8_t> file;
  if (ok) file.assign(out, out + size);
  if (ok) std::free(out);  // after an error libjpeg may already have freed it
  if (!ok) throw std::runtime_error(std::string("libjpeg: ") + errors.message);
  return file;
}

}  // namespace testutil
