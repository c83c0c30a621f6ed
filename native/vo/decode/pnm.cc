#include "pnm.h"

#include <cctype>
#include <cmath>

namespace egogeo::vo {

bool is_pnm(const std::vector<uchar>& b) { return b.size() >= 2 && b[0] == 'P' && (b[1] == '5' || b[1] == '6'); }

std::string decode_pnm_grey(const std::vector<uchar>& b, cv::Mat& out) {
  size_t pos = 2;
  // Header: width, height, maxval as decimal numbers separated by whitespace and # comments.
  auto number = [&](long& v) {
    while (pos < b.size() && (std::isspace(b[pos]) || b[pos] == '#')) {
      if (b[pos] == '#')
        while (pos < b.size() && b[pos] != '\n') ++pos;
      else
        ++pos;
    }
    if (pos >= b.size() || !std::isdigit(b[pos])) return false;
    v = 0;
    while (pos < b.size() && std::isdigit(b[pos]) && v < 1000000) v = v * 10 + (b[pos++] - '0');
    return true;
  };
  long w = 0, h = 0, maxval = 0;
  if (!number(w) || !number(h) || !number(maxval)) return "bad Netpbm header";
  if (w <= 0 || h <= 0 || w > 65535 || h > 65535) return "image size out of range";
  if (maxval <= 0 || maxval > 65535) return "maxval out of range";
  if (pos >= b.size() || !std::isspace(b[pos])) return "bad Netpbm header";
  ++pos;  // exactly one whitespace byte before the samples
  const int channels = b[1] == '6' ? 3 : 1, bytes_per = maxval > 255 ? 2 : 1;
  const size_t need = static_cast<size_t>(w) * h * channels * bytes_per;
  if (b.size() - pos < need) return "file ends before its last pixel";
  out.create(static_cast<int>(h), static_cast<int>(w), CV_8UC1);
  const uchar* p = b.data() + pos;
  const double scale = 255.0 / maxval;
  auto sample = [&](size_t i) { return bytes_per == 1 ? p[i] : (p[2 * i] << 8 | p[2 * i + 1]); };
  for (int y = 0; y < h; ++y) {
    uchar* row = out.ptr<uchar>(y);
    for (int x = 0; x < w; ++x) {
      const size_t i = (static_cast<size_t>(y) * w + x) * channels;
      const double v = channels == 1 ? sample(i) : 0.299 * sample(i) + 0.587 * sample(i + 1) + 0.114 * sample(i + 2);
      row[x] = cv::saturate_cast<uchar>(maxval == 255 ? v : v * scale);
    }
  }
  return {};
}

}  // namespace egogeo::vo
