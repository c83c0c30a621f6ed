#include "png.h"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>

namespace egogeo::vo {
namespace {

struct Reader {
  const std::vector<uchar>* bytes;
  size_t pos;
  char message[256];
};

extern "C" void on_png_error(png_structp png, png_const_charp msg) {
  auto* r = static_cast<Reader*>(png_get_error_ptr(png));
  std::snprintf(r->message, sizeof r->message, "%s", msg);
  png_longjmp(png, 1);
}

extern "C" void on_png_warning(png_structp, png_const_charp) {}  // e.g. unknown chunks: harmless

extern "C" void read_bytes(png_structp png, png_bytep data, png_size_t n) {
  auto* r = static_cast<Reader*>(png_get_io_ptr(png));
  if (r->pos + n > r->bytes->size()) png_error(png, "file ends early");
  std::memcpy(data, r->bytes->data() + r->pos, n);
  r->pos += n;
}

}  // namespace

bool is_png(const std::vector<uchar>& b) {
  return b.size() >= 8 && png_sig_cmp(b.data(), 0, 8) == 0;
}

std::string decode_png_grey(const std::vector<uchar>& bytes, cv::Mat& out) {
  Reader r{&bytes, 0, {0}};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &r, on_png_error, on_png_warning);
  if (!png) return "libpng: out of memory";
  png_infop info = png_create_info_struct(png);
  // Only trivially destructible locals live across setjmp; `out` is released on error.
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    out.release();
    return r.message[0] ? r.message : "libpng error";
  }
  png_set_read_fn(png, &r, read_bytes);
  png_read_info(png, info);
  const int color = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
  if (depth == 16) png_set_strip_16(png);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (!(color & PNG_COLOR_MASK_COLOR) && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  png_set_strip_alpha(png);
  if (color & PNG_COLOR_MASK_COLOR) png_set_rgb_to_gray(png, 1, 0.299, 0.587);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const int w = static_cast<int>(png_get_image_width(png, info)), h = static_cast<int>(png_get_image_height(png, info));
  if (png_get_channels(png, info) != 1 || png_get_bit_depth(png, info) != 8) png_error(png, "unsupported pixel format");
  out.create(h, w, CV_8UC1);
  // Row by row (every pass of an interlaced file): no row-pointer vector to leak on a longjmp.
  for (int p = 0; p < passes; ++p)
    for (int y = 0; y < h; ++y) png_read_row(png, out.ptr<uchar>(y), nullptr);
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return {};
}

}  // namespace egogeo::vo
