#include "pipeline.h"

#include "scale/bundle_scale.h"
#include "pose/camera.h"
#include "decode/frame_decode.h"
#include "pose/motion.h"
#include "scale/relative_scale.h"
#include "scale/road_scale.h"
#include "timer.h"
#include "track/tracker.h"

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

ClipResult process_clip(const ClipInput& in, const Options& opt, const FrameCaches& caches) {
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
  Tracker tracker(opt, caches.corners);
  std::vector<Matches> all;                 // per pair, for the three-frame relative scale
  std::vector<std::vector<uchar>> inliers;
  const int ds = opt.downsample;
  Decoded frame;
  {
    Timer t(res.ms.decode);
    frame = decode_frame(in.frames[0], 0, ds, GreyPath::Engine, caches.frames);
  }
  res.width = frame.width;
  res.height = frame.height;
  if (res.width < 32 || res.height < 32) throw InputError("frame 0: image is too small (" + std::to_string(res.width) + "x" + std::to_string(res.height) + ")");
  Intrinsics intr = clip_intrinsics(in, res.width, res.height);
  res.intrinsics = intr;  // the caller's pixels; the stages below see the working resolution
  intr = to_working(intr, ds);
  cv::Mat img = frame.img;
  RoadScale road(opt, intr, img.cols, img.rows);

  if (opt.guided_tracking && opt.scale == ScaleMode::Road) tracker.set_road_region([&road](const cv::Point2f& p) { return road.in_road(p); }, RoadScale::kStarvingRoadPoints);
  tracker.start(img, res.ms);
  for (size_t k = 1; k < n; ++k) {
    {
      Timer t(res.ms.decode);
      frame = decode_frame(in.frames[k], k, ds, GreyPath::Engine, caches.frames);
    }
    if (frame.width != res.width || frame.height != res.height) {
      throw InputError("frame " + std::to_string(k) + ": size " + std::to_string(frame.width) + "x" + std::to_string(frame.height) +
                       " differs from frame 0 (" + std::to_string(res.width) + "x" + std::to_string(res.height) + ")");
    }
    const cv::Mat prev = img;
    img = frame.img;
    // Guided tracking where the road is starving (frames far apart at speed): the previous pair's
    // motion, at its road distance, predicts this pair's. Elsewhere the plain search is left alone.
    std::vector<cv::Point2f> predicted;
    if (opt.guided_tracking && opt.scale == ScaleMode::Road && k >= 2 && road.last_road_points() < RoadScale::kStarvingRoadPoints) {
      const double dt0 = in.timestamps[k - 1] - in.timestamps[k - 2], dt1 = in.timestamps[k] - in.timestamps[k - 1];
      const double d = road.last_distance(res.pairs.back());
      if (d > 0) predicted = road.predict(tracker.points(), res.pairs.back(), d * dt1 / dt0, dt1 / dt0);
    }
    all.push_back(tracker.step(img, res.ms, k + 1 == n, predicted.empty() ? nullptr : &predicted));
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
      if (opt.scale == ScaleMode::Road) road.add_direct(prev, img, pm, in.timestamps[k] - in.timestamps[k - 1]);
    }
    inliers.push_back(std::move(inl));
    res.pairs.push_back(pm);
  }

  fill_failed_pairs(res.pairs, in.timestamps);
  {
    Timer t(res.ms.scale);
    if (opt.scale == ScaleMode::Road) {
      auto ratios = opt.relative_scale ? relative_scales(all, inliers, res.pairs, intr) : std::vector<ScaleRatio>{};
      std::vector<cv::Vec3d> headings;
      if (opt.relative_scale && opt.bundle_scale)
        ratios = bundle_relative_scales(all, inliers, res.pairs, intr, ratios, opt.bundle_normal ? &headings : nullptr, &res.bundle_residual);
      road.solve(res.pairs, in.timestamps, ratios, headings, res.road_normal);
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
