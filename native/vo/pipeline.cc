#include "pipeline.h"

#include "bundle_scale.h"
#include "jpeg.h"
#include "motion.h"
#include "png.h"
#include "pnm.h"
#include "relative_scale.h"
#include "road_scale.h"
#include "timer.h"
#include "tracker.h"

#include <opencv2/calib3d.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

namespace egogeo::vo {
namespace {

/// A decoded frame at the working resolution (Options::downsample) and its size as stored.
struct Decoded {
  cv::Mat img;
  int width = 0, height = 0;  // input pixels
};

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

Decoded decode(const FrameSource& src, size_t index, int ds) {
  if (src.pixels) {
    if (src.width <= 0 || src.height <= 0) throw InputError("frame " + std::to_string(index) + ": width and height must be positive");
    Decoded d = shrink(cv::Mat(src.height, src.width, CV_8UC1, const_cast<uint8_t*>(src.pixels)), ds);
    if (ds == 1) d.img = d.img.clone();
    return d;
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(src.path, ec)) {
    const bool exists = std::filesystem::exists(src.path, ec);
    throw InputError("frame " + std::to_string(index) + ": '" + src.path + "' " + (exists ? "is not a regular file" : "does not exist"));
  }
  std::ifstream f(src.path, std::ios::binary | std::ios::ate);
  if (!f) throw InputError("frame " + std::to_string(index) + ": cannot open '" + src.path + "'");
  // One read of the whole file (istreambuf_iterator reads it a character at a time).
  std::vector<uchar> bytes(static_cast<size_t>(std::max<std::streamoff>(0, f.tellg())));
  f.seekg(0);
  if (!f.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()))) {
    throw InputError("frame " + std::to_string(index) + ": cannot read '" + src.path + "'");
  }
  if (bytes.empty()) throw InputError("frame " + std::to_string(index) + ": '" + src.path + "' is empty");
  check_complete(bytes, src.path, index);
  cv::Mat img;
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

/// Pixel centres at integer coordinates: working pixel j averages input pixels ds*j .. ds*j+ds-1,
/// whose centre is ds*j + (ds-1)/2.
Intrinsics to_working(Intrinsics k, int ds) {
  if (ds == 1) return k;
  const double off = 0.5 * (ds - 1);
  return {k.fx / ds, k.fy / ds, (k.cx - off) / ds, (k.cy - off) / ds};
}

std::vector<cv::Point2f> to_input(std::vector<cv::Point2f> pts, int ds) {
  const float off = 0.5f * static_cast<float>(ds - 1);
  for (auto& p : pts) p = p * static_cast<float>(ds) + cv::Point2f(off, off);
  return pts;
}

/// A pair without enough tracks to estimate anything takes the rotation rate of its nearest
/// estimated neighbours, so one lost pair in a turn does not read as "no rotation" (a degenerate
/// pair keeps its rotation-only fit). The translation direction follows the same way; its length
/// comes from the scale stage, which bridges such pairs too.
void fill_failed_pairs(std::vector<PairMotion>& pairs, const std::vector<double>& ts) {
  const int n = static_cast<int>(pairs.size());
  auto good = [&](int k) { return pairs[k].quality == PairQuality::Ok || pairs[k].quality == PairQuality::LowParallax; };
  for (int k = 0; k < n; ++k) {
    // A degenerate pair still has its rotation-only fit; only a pair without tracks borrows.
    if (pairs[k].quality != PairQuality::TooFewTracks) continue;
    int lo = k - 1, hi = k + 1;
    while (lo >= 0 && !good(lo)) --lo;
    while (hi < n && !good(hi)) ++hi;
    cv::Vec3d rate(0, 0, 0);
    int m = 0;
    cv::Vec3d dir(0, 0, 0);
    for (int j : {lo, hi}) {
      if (j < 0 || j >= n) continue;
      cv::Vec3d rv;
      cv::Rodrigues(cv::Mat(pairs[j].R), rv);
      rate += rv * (1.0 / (ts[j + 1] - ts[j]));
      dir += pairs[j].t_dir;
      ++m;
    }
    if (m == 0) continue;
    rate *= (ts[k + 1] - ts[k]) / m;
    cv::Mat R;
    cv::Rodrigues(rate, R);
    pairs[k].R = cv::Matx33d(R);
    if (cv::norm(dir) > 0) pairs[k].t_dir = dir * (1.0 / cv::norm(dir));
  }
}

/// Per-frame speed and acceleration (with standard deviations) from the pairs' mean speeds and
/// their posterior covariances: a frame's speed interpolates its two pairs linearly in time (their
/// midpoints), its acceleration is their difference over the midpoints' distance; the first and
/// last frame take their one pair's speed and their neighbour's acceleration.
void speed_profile(ClipResult& res, const std::vector<double>& ts) {
  const size_t np = res.pairs.size(), n = np + 1;
  res.speed.assign(n, 0.0);
  res.speed_sigma.assign(n, 0.0);
  res.accel.assign(n, 0.0);
  res.accel_sigma.assign(n, 0.0);
  auto v = [&](size_t k) { return res.pairs[k].scale / (ts[k + 1] - ts[k]); };
  auto var = [&](size_t k) { return res.pairs[k].speed_sigma * res.pairs[k].speed_sigma; };
  for (size_t i = 0; i < n; ++i) {
    if (i == 0 || i == np) {
      const size_t k = i == 0 ? 0 : np - 1;
      res.speed[i] = v(k);
      res.speed_sigma[i] = res.pairs[k].speed_sigma;
      continue;
    }
    const double h0 = 0.5 * (ts[i] - ts[i - 1]), h1 = 0.5 * (ts[i + 1] - ts[i]), h = h0 + h1;
    const double w0 = h1 / h, w1 = h0 / h;  // weight of pair i-1 and pair i
    const double c = res.pairs[i].speed_cov_prev;
    res.speed[i] = w0 * v(i - 1) + w1 * v(i);
    res.speed_sigma[i] = std::sqrt(std::max(0.0, w0 * w0 * var(i - 1) + w1 * w1 * var(i) + 2 * w0 * w1 * c));
    res.accel[i] = (v(i) - v(i - 1)) / h;
    res.accel_sigma[i] = std::sqrt(std::max(0.0, var(i - 1) + var(i) - 2 * c)) / h;
  }
  if (n >= 3) {
    res.accel[0] = res.accel[1];
    res.accel_sigma[0] = res.accel_sigma[1];
    res.accel[n - 1] = res.accel[n - 2];
    res.accel_sigma[n - 1] = res.accel_sigma[n - 2];
  } else {
    res.accel_sigma[0] = res.accel_sigma[1] = std::isfinite(res.speed_sigma[0]) ? 0.0 : res.speed_sigma[0];
  }
}

}  // namespace

ClipResult process_clip(const ClipInput& in, const Options& opt) {
  const size_t n = in.frames.size();
  if (n < 2) throw InputError("a clip needs at least 2 frames, got " + std::to_string(n));
  if (in.timestamps.size() != n) {
    throw InputError("timestamps has " + std::to_string(in.timestamps.size()) + " entries for " + std::to_string(n) + " frames");
  }
  for (size_t i = 1; i < n; ++i) {
    if (!(in.timestamps[i] > in.timestamps[i - 1])) throw InputError("timestamps must be strictly increasing (entry " + std::to_string(i) + ")");
  }
  if (opt.scale == ScaleMode::GroundTruth && opt.gt_speeds.size() != n - 1) {
    throw InputError("scale 'gt' needs gtSpeeds with one entry per frame pair (" + std::to_string(n - 1) + ")");
  }

  ClipResult res;
  Tracker tracker(opt);
  std::vector<Matches> all;                 // per pair, for the three-frame relative scale
  std::vector<std::vector<uchar>> inliers;
  const int ds = opt.downsample;
  Decoded frame;
  {
    Timer t(res.ms.decode);
    frame = decode(in.frames[0], 0, ds);
  }
  res.width = frame.width;
  res.height = frame.height;
  if (res.width < 32 || res.height < 32) throw InputError("frame 0: image is too small (" + std::to_string(res.width) + "x" + std::to_string(res.height) + ")");
  Intrinsics intr = in.intrinsics;
  if (!in.intrinsics_given) {
    intr.fx = intr.fy = in.hfov_deg > 0 ? 0.5 * res.width / std::tan(in.hfov_deg * CV_PI / 360.0) : 0.9 * res.width;
    intr.cx = res.width / 2.0;
    intr.cy = res.height / 2.0;
  }
  // Absurd intrinsics give NaN poses without a word: the focal lengths must put the field of view
  // between about 0.6 and 170 degrees and the principal point inside the image.
  {
    const double W = res.width, H = res.height;
    auto bad = [](double v, double lo, double hi) { return !std::isfinite(v) || v < lo || v > hi; };
    if (bad(intr.fx, 0.04 * W, 100 * W) || bad(intr.fy, 0.04 * W, 100 * W)) {
      throw InputError("intrinsics fx = " + std::to_string(intr.fx) + ", fy = " + std::to_string(intr.fy) + " are not plausible for a " +
                       std::to_string(res.width) + "-pixel-wide image (expected " + std::to_string(0.04 * W) + " .. " + std::to_string(100 * W) + ")");
    }
    if (bad(intr.cx, 0, W) || bad(intr.cy, 0, H)) {
      throw InputError("intrinsics cx = " + std::to_string(intr.cx) + ", cy = " + std::to_string(intr.cy) + " are outside the " +
                       std::to_string(res.width) + "x" + std::to_string(res.height) + " image");
    }
  }
  res.intrinsics = intr;  // the caller's pixels; the stages below see the working resolution
  intr = to_working(intr, ds);
  cv::Mat img = frame.img;
  RoadScale road(opt, intr, img.cols, img.rows);

  tracker.start(img, res.ms);
  for (size_t k = 1; k < n; ++k) {
    {
      Timer t(res.ms.decode);
      frame = decode(in.frames[k], k, ds);
    }
    if (frame.width != res.width || frame.height != res.height) {
      throw InputError("frame " + std::to_string(k) + ": size " + std::to_string(frame.width) + "x" + std::to_string(frame.height) +
                       " differs from frame 0 (" + std::to_string(res.width) + "x" + std::to_string(res.height) + ")");
    }
    img = frame.img;
    all.push_back(tracker.step(img, res.ms, k + 1 == n));
    const Matches& m = all.back();
    std::vector<uchar> inl;
    PairMotion pm;
    {
      Timer t(res.ms.pose);
      pm = estimate_motion(m, intr, opt, inl);
    }
    {
      Timer t(res.ms.scale);
      road.add_pair(m, inl);
    }
    inliers.push_back(std::move(inl));
    res.pairs.push_back(pm);
  }

  fill_failed_pairs(res.pairs, in.timestamps);
  {
    Timer t(res.ms.scale);
    if (opt.scale == ScaleMode::Road) {
      auto ratios = opt.relative_scale ? relative_scales(all, inliers, res.pairs, intr) : std::vector<ScaleRatio>{};
      if (opt.relative_scale && opt.bundle_scale) ratios = bundle_relative_scales(all, inliers, res.pairs, intr, ratios);
      road.solve(res.pairs, in.timestamps, ratios, res.road_normal);
      res.jerk_psd = road.speed_fit().ok ? road.speed_fit().jerk_psd : 0.0;
      res.noise_scale = road.speed_fit().ok ? std::sqrt(road.speed_fit().road_scale * road.speed_fit().ratio_scale) : 0.0;
      res.road_corr_time = road.speed_fit().ok ? road.speed_fit().road_corr_time : 0.0;
    } else {
      for (size_t k = 0; k + 1 < n; ++k) {
        auto& p = res.pairs[k];
        const bool still = p.quality == PairQuality::LowParallax;
        p.scale = opt.scale == ScaleMode::GroundTruth ? opt.gt_speeds[k] * (in.timestamps[k + 1] - in.timestamps[k])
                                                      : (still ? 0.0 : 1.0);
        p.speed_sigma = opt.scale == ScaleMode::GroundTruth ? 0.0 : std::numeric_limits<double>::quiet_NaN();
        p.speed_cov_prev = 0.0;
      }
    }
  }

  // Chain relative motions into camera-to-world poses (world = first camera).
  res.R.push_back(cv::Matx33d::eye());
  res.t.push_back(cv::Vec3d(0, 0, 0));
  for (const auto& p : res.pairs) {
    const cv::Matx33d& Rw = res.R.back();
    const cv::Vec3d& cw = res.t.back();
    // X_{k+1} = R X_k + t  ⇒  camera k+1 centre in frame k is -R^T t, orientation R^T.
    const cv::Vec3d t = p.t_dir * p.scale;
    res.t.push_back(cw + Rw * (-(p.R.t() * t)));
    res.R.push_back(Rw * p.R.t());
  }
  speed_profile(res, in.timestamps);
  if (opt.keep_matches) {
    res.matches.resize(all.size());
    for (size_t k = 0; k < all.size(); ++k) {
      PairMatches& pm = res.matches[k];
      pm.prev = to_input(std::move(all[k].prev), ds);
      pm.curr = to_input(std::move(all[k].curr), ds);
      pm.ids = std::move(all[k].ids);
      pm.inliers = std::move(inliers[k]);
      pm.inliers.resize(pm.prev.size(), 0);
    }
  }
  res.mean_track_length = tracker.mean_track_length();
  res.tracks_created = tracker.tracks_created();
  return res;
}

}  // namespace egogeo::vo
