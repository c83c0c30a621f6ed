#include "jpeg.h"

#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE

#include <jpeglib.h>

#include <opencv2/imgproc.hpp>

namespace egogeo::vo {
namespace {

// libjpeg reports through callbacks: an error must not return (longjmp back to the decoder's
// frame, which holds only trivially destructible objects), a warning (level < 0) is counted.
struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  int warnings;
};

extern "C" void on_error(j_common_ptr c) {
  auto* e = reinterpret_cast<ErrorManager*>(c->err);
  (*c->err->format_message)(c, e->message);
  std::longjmp(e->jump, 1);
}

extern "C" void on_message(j_common_ptr c, int level) {
  auto* e = reinterpret_cast<ErrorManager*>(c->err);
  if (level < 0 && e->warnings++ == 0) (*c->err->format_message)(c, e->message);
}

}  // namespace

namespace {

/// One decode: grey (`bgr` false, DCT-scaled by `downsample`) or BGR at full size.
std::string decode(const std::vector<uchar>& bytes, cv::Mat& out, bool bgr, int downsample, int* width, int* height, bool* grey_source = nullptr) {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = on_error;
  err.pub.emit_message = on_message;
  err.warnings = 0;
  err.message[0] = '\0';
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    out.release();
    return err.message[0] ? err.message : "libjpeg error";
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  // A greyscale JPEG read as OpenCV reads colour (each grey copied to B, G and R) and converted back
  // to grey gives the grey itself (BGR2GRAY's weights sum to exactly 1 << 14): read it as grey.
  if (bgr && grey_source && cinfo.num_components == 1 && cinfo.jpeg_color_space == JCS_GRAYSCALE) {
    bgr = false;
    downsample = 1;
    *grey_source = true;
  } else if (grey_source) {
    *grey_source = false;
  }
  if (bgr) {
    cinfo.out_color_space = JCS_EXT_BGR;
    cinfo.out_color_components = 3;
  } else {
    cinfo.out_color_space = JCS_GRAYSCALE;
    cinfo.scale_num = 1;
    cinfo.scale_denom = static_cast<unsigned>(downsample);
  }
  if (width) *width = static_cast<int>(cinfo.image_width);
  if (height) *height = static_cast<int>(cinfo.image_height);
  jpeg_start_decompress(&cinfo);
  out.create(static_cast<int>(cinfo.output_height), static_cast<int>(cinfo.output_width), bgr ? CV_8UC3 : CV_8UC1);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out.ptr<uchar>(static_cast<int>(cinfo.output_scanline));
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  if (err.warnings > 0) {
    out.release();
    return err.message;
  }
  return {};
}

}  // namespace

std::string decode_jpeg_grey(const std::vector<uchar>& bytes, cv::Mat& out, int downsample, int* width, int* height) {
  return decode(bytes, out, false, downsample, width, height);
}

std::string decode_jpeg_bgr(const std::vector<uchar>& bytes, cv::Mat& out) { return decode(bytes, out, true, 1, nullptr, nullptr); }

std::string decode_jpeg_as_opencv_grey(const std::vector<uchar>& bytes, cv::Mat& out) {
  bool grey = false;
  cv::Mat img;
  const std::string problem = decode(bytes, img, true, 1, nullptr, nullptr, &grey);
  if (!problem.empty()) return problem;
  if (grey) out = img;
  else cv::cvtColor(img, out, cv::COLOR_BGR2GRAY);
  return {};
}

}  // namespace egogeo::vo
