#include "frame_decode.h"

#include "frame_cache.h"

#include "jpeg.h"
#include "png.h"
#include "pnm.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace egogeo::vo {
namespace {

/// Area average down to the working resolution, the same size libjpeg's DCT scaling gives
/// (ceil(W / ds) x ceil(H / ds)).
Decoded shrink(const cv::Mat& full, int ds) {
  Decoded d{full, full.cols, full.rows};
  if (ds > 1) cv::resize(full, d.img, cv::Size((full.cols + ds - 1) / ds, (full.rows + ds - 1) / ds), 0, 0, cv::INTER_AREA);
  return d;
}

/// A JPEG or PNG cut short decodes without an error (libjpeg fills the rest with grey and only
/// prints a warning), so the file's end is checked first: a JPEG must end with the end-of-image
/// marker FF D9 (trailing padding bytes allowed), a PNG with its IEND chunk. Errors name the file.
void check_complete(const std::vector<uchar>& b, const std::string& path, size_t index) {
  const std::string where = "frame " + std::to_string(index) + ": '" + path + "' ";
  const size_t n = b.size();
  if (n >= 2 && b[0] == 0xFF && b[1] == 0xD8) {
    size_t end = n;
    // Some writers pad after EOI (zeros, newlines); at most a little.
    while (end > 2 && n - end < 4096 && (b[end - 1] == 0x00 || b[end - 1] == 0x0A || b[end - 1] == 0x0D || b[end - 1] == 0x20 || b[end - 1] == 0xFF)) --end;
    if (end < 4 || b[end - 2] != 0xFF || b[end - 1] != 0xD9) throw InputError(where + "is a truncated or corrupt JPEG (no end-of-image marker FF D9)");
    return;
  }
  static const uchar png_sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  if (n >= 8 && std::equal(png_sig, png_sig + 8, b.begin())) {
    static const uchar iend[8] = {'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
    if (n < 20 || !std::equal(iend, iend + 8, b.end() - 8)) throw InputError(where + "is a truncated or corrupt PNG (no IEND chunk at its end)");
  }
}

}  // namespace

namespace {

/// The whole file, read at once (istreambuf_iterator would read it a character at a time).
std::vector<uchar> read_file(const FrameSource& src, size_t index) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(src.path, ec)) {
    const bool exists = std::filesystem::exists(src.path, ec);
    throw InputError("frame " + std::to_string(index) + ": '" + src.path + "' " + (exists ? "is not a regular file" : "does not exist"));
  }
  std::ifstream f(src.path, std::ios::binary | std::ios::ate);
  if (!f) throw InputError("frame " + std::to_string(index) + ": cannot open '" + src.path + "'");
  std::vector<uchar> bytes(static_cast<size_t>(std::max<std::streamoff>(0, f.tellg())));
  f.seekg(0);
  if (!f.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()))) {
    throw InputError("frame " + std::to_string(index) + ": cannot read '" + src.path + "'");
  }
  if (bytes.empty()) throw InputError("frame " + std::to_string(index) + ": '" + src.path + "' is empty");
  return bytes;
}

/// A file's bytes decoded (`src` and `index` name it in errors).
Decoded decode_bytes(const std::vector<uchar>& bytes, const FrameSource& src, size_t index, int ds, GreyPath path) {
  check_complete(bytes, src.path, index);
  cv::Mat img;
  if (is_jpeg(bytes) && path == GreyPath::OpenCvBgr) {
    const std::string problem = decode_jpeg_as_opencv_grey(bytes, img);
    if (!problem.empty()) throw InputError("frame " + std::to_string(index) + ": '" + src.path + "' is a corrupt JPEG (" + problem + ")");
    return shrink(img, ds);
  }
  if (is_jpeg(bytes)) {
    Decoded d;
    const std::string problem = decode_jpeg_grey(bytes, d.img, ds, &d.width, &d.height);
    if (!problem.empty()) throw InputError("frame " + std::to_string(index) + ": '" + src.path + "' is a corrupt JPEG (" + problem + ")");
    return d;
  }
  const bool png = is_png(bytes);
  if (!png && !is_pnm(bytes)) throw InputError("frame " + std::to_string(index) + ": '" + src.path + "' is not a readable JPEG/PNG/PGM image");
  const std::string problem = png ? decode_png_grey(bytes, img) : decode_pnm_grey(bytes, img);
  if (!problem.empty()) {
    throw InputError("frame " + std::to_string(index) + ": '" + src.path + "' is a corrupt " + (png ? "PNG" : "PGM/PPM") + " (" + problem + ")");
  }
  return shrink(img, ds);
}

}  // namespace

Decoded decode_frame(const FrameSource& src, size_t index, int ds, GreyPath path, FrameCache* cache) {
  if (src.pixels) {
    if (src.width <= 0 || src.height <= 0) throw InputError("frame " + std::to_string(index) + ": width and height must be positive");
    Decoded d = shrink(cv::Mat(src.height, src.width, CV_8UC1, const_cast<uint8_t*>(src.pixels)), ds);
    if (ds == 1) d.img = d.img.clone();
    return d;
  }
  const std::vector<uchar> bytes = read_file(src, index);
  if (!cache) return decode_bytes(bytes, src, index, ds, path);
  // Keyed by the bytes themselves: a file rewritten in between, however soon, is decoded anew.
  const FrameKey key{content_hash(bytes.data(), bytes.size()), ds, static_cast<int>(path)};
  Decoded d;
  if (cache->find(key, d)) return d;
  d = decode_bytes(bytes, src, index, ds, path);
  cache->keep(key, d, d.img.total() * d.img.elemSize());
  return d;
}

}  // namespace egogeo::vo
