#include "road_scale.h"

#include "../pose/geometry.h"

#include <opencv2/calib3d.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace egogeo::vo {

// A point of normalised coordinates x lies road_margin * H rows below the horizon line of the
// prior plane exactly when n . x >= n_y * road_margin * H / fy (for n = (0, 1, 0): v >= cy + margin H).
namespace {

/// The highest row the road plane reaches at either edge of the frame (its horizon, prior . x = 0,
/// is a line), less a margin for the pitch and roll between two frames; 0 when the prior does not
/// point down the image.
int horizon_top(const cv::Vec3d& prior, const Intrinsics& intr, int width, int height) {
  if (!(prior[1] > 0.1)) return 0;
  double top = height;
  for (const double u : {0.0, static_cast<double>(width - 1)})
    top = std::min(top, intr.cy - intr.fy * (prior[0] * (u - intr.cx) / intr.fx + prior[2]) / prior[1]);
  constexpr double kMargin = 0.05;  // of the height: about 3 degrees at KITTI's field of view
  return std::clamp(static_cast<int>(std::floor(top - kMargin * height)), 0, height - 1);
}

}  // namespace

RoadScale::RoadScale(const Options& opt, const Intrinsics& intr, int width, int height)
    : opt_(opt), intr_(intr), prior_(opt.road_normal * (1.0 / cv::norm(opt.road_normal))), width_(width), height_(height),
      road_depression_(prior_[1] * opt.road_margin * height / intr.fy), horizon_top_(horizon_top(prior_, intr, width, height)) {}

void RoadScale::add_pair(const Matches& m, const std::vector<uchar>& inliers) {
  const cv::Matx33d K = intr_.K();
  std::vector<Corr> c;
  for (size_t i = 0; i < m.prev.size(); ++i) {
    if (!inliers[i]) continue;
    const cv::Vec3d x1 = normalize(m.prev[i], K), x2 = normalize(m.curr[i], K);
    if (prior_.dot(x1) < road_depression_ || prior_.dot(x2) < road_depression_) continue;
    c.push_back({x1, x2});
  }
  road_.push_back(std::move(c));
  direct_.emplace_back();
}

namespace {
constexpr size_t kMinRoadPoints = 15;  // fewer road correspondences: no tracked road fit for the pair
constexpr double kMaxSpeed = 50;       // m/s: the direct search's range is this times the pair's interval
constexpr double kDirectConsensus = 4;  // a tracked speed this many times off the clip's direct speeds is implausible
constexpr double kMinDirectScore = 0.5;  // correlation below this: the alignment found no road pattern
constexpr double kDirectLogSigma = 0.2;  // nominal sigma of a direct distance's log: wide, so tracked road and ratios lead where they exist

// Nominal standard deviation of a road distance's log: ~6% for a pair with 50+ road points, growing
// as they thin out (a turn, the clip's end).
double road_log_sigma(int road_points) { return 0.06 * std::sqrt(50.0 / std::clamp(road_points, 10, 50)); }
}  // namespace

cv::Vec3d RoadScale::pair_plane(const PairMotion& pm) const {
  cv::Vec3d n = prior_;
  const cv::Vec3d d = -pm.t_dir;
  if (d[2] > 0.5) {
    n = n - n.dot(d) * d;
    n *= 1.0 / cv::norm(n);
  }
  return n * (1.0 / opt_.camera_height);
}

void RoadScale::add_direct(const cv::Mat& prev, const cv::Mat& curr, const PairMotion& pm, double dt) {
  if (!opt_.direct_road || pm.quality != PairQuality::Ok) return;
  const bool lacking = road_.back().size() < kMinRoadPoints;
  // Where most pairs so far lacked tracked road (frames far apart at speed), or always with
  // Options::direct_check, a pair that kept some is measured directly too, to check its tracks
  // (tracked_contradicted).
  const bool check = !lacking && (opt_.direct_check || 2 * lacking_pairs_ > ok_pairs_);
  ++ok_pairs_;
  if (lacking) ++lacking_pairs_;
  if (!lacking && !check) return;
  // Pair k (road_.size() - 1) aligns frame k to frame k + 1: its previous frame was the last
  // aligned pair's current one when pair k - 1 was aligned too.
  const size_t frame = road_.size();
  if (last_image_frame_ == frame) std::swap(prev_image_, last_image_);
  else road_image(prev, horizon_top_, prev_image_, road_blur_);
  road_image(curr, horizon_top_, last_image_, road_blur_);
  last_image_frame_ = frame + 1;
  direct_.back() = direct_road_distance(prev_image_, last_image_, intr_, pm, pair_plane(pm), prior_, road_depression_, kMaxSpeed * dt, direct_scratch_);
}

// A tracked road distance that its pair's direct distance contradicts, beyond both their errors.
// Past KLT's reach the road tracks that survive can be aliased: a dashed lane line moved by about
// one dash period matches the next dash, a few metres from where it started, and the fit then reads
// a fraction of the true distance (rendered highway at 10 frames: 0.6 m for 10.8 m, on 33-39
// tracks, while the direct alignment read 8-9 m on the pairs around it). The direct alignment can
// be the wrong one as well (KITTI 06 at 10 frames: 8.7 m for 3.6 m, the tracked fit 3.2 m), so a
// contradicted pair keeps neither and the relative scales bridge it.
bool RoadScale::tracked_contradicted(size_t k, double tracked) const {
  const DirectRoad& d = direct_[k];
  if (!(d.distance > 0) || d.score < kMinDirectScore) return false;
  const double sigma = std::hypot(road_log_sigma(static_cast<int>(road_[k].size())), kDirectLogSigma);
  return std::abs(std::log(tracked / d.distance)) > 3 * sigma;
}

double RoadScale::last_distance(const PairMotion& pm) const {
  if (road_.empty() || pm.quality != PairQuality::Ok) return 0;
  const DirectRoad& d = direct_.back();
  if (road_.back().size() >= kMinRoadPoints) {
    const double s = fit_distance(pm, road_.back(), pair_plane(pm), 0.0, nullptr);
    if (!(s > 0 && std::isfinite(s))) return 0;
    return tracked_contradicted(road_.size() - 1, s) ? 0 : s;
  }
  return d.distance > 0 && d.score >= kMinDirectScore ? d.distance : 0;
}

std::vector<cv::Point2f> RoadScale::predict(const std::vector<cv::Point2f>& pts, const PairMotion& pm, double distance,
                                            double rotation_scale) const {
  cv::Vec3d rv;
  cv::Rodrigues(cv::Mat(pm.R), rv);
  cv::Mat Rm;
  cv::Rodrigues(rv * rotation_scale, Rm);
  const cv::Matx33d R(Rm), K = intr_.K();
  const cv::Vec3d t = pm.t_dir * distance, w = pair_plane(pm);
  std::vector<cv::Point2f> out(pts);
  for (size_t i = 0; i < pts.size(); ++i) {
    const cv::Vec3d x1 = normalize(pts[i], K);
    cv::Vec3d x2 = R * x1;
    if (prior_.dot(x1) >= road_depression_) x2 += t * w.dot(x1);
    if (x2[2] <= 1e-6) continue;
    const cv::Point2f q(static_cast<float>(intr_.fx * x2[0] / x2[2] + intr_.cx), static_cast<float>(intr_.fy * x2[1] / x2[2] + intr_.cy));
    if (q.x >= 0 && q.y >= 0 && q.x < width_ - 1 && q.y < height_ - 1) out[i] = q;
  }
  return out;
}

// Gauss-Newton on the image-space residual of the plane-induced transfer, Cauchy-reweighted.
// The reweighting is one-sided: tracking errors scatter both ways, but whatever stands on the road
// inside the road region (cars, kerbs, verges, posts) is nearer than the road along its ray and so
// only ever moves MORE than the plane predicts. Symmetric weights let those points pull the
// distance up (KITTI 00: +4.8% median); residuals along the parallax direction get a narrower
// Cauchy (Options::road_above_scale).
// Besides the distance s it fits a small rotation correction: the essential matrix trades pitch
// and yaw against the translation direction, and a pitch error of 0.1 degree shifts road points
// by more than a pixel, which the known plane would otherwise absorb into the scale.
double RoadScale::fit_distance(const PairMotion& pm, const std::vector<Corr>& c, const cv::Vec3d& w, double s0,
                               std::vector<double>* weights) const {
  const double f = intr_.fx;
  const size_t n = c.size();
  std::vector<cv::Vec3d> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = pm.R * c[i].x1;
    b[i] = pm.t_dir * w.dot(c[i].x1);
  }
  double s = s0;
  if (!(s > 0)) {
    // Initial guess: median of the per-point algebraic solutions of x2 x (a + s b) = 0.
    std::vector<double> si;
    for (size_t i = 0; i < n; ++i) {
      const cv::Vec3d xb = c[i].x2.cross(b[i]), xa = c[i].x2.cross(a[i]);
      const double d = xb.dot(xb);
      if (d > 1e-12) si.push_back(-xb.dot(xa) / d);
    }
    s = median(si);
  }
  cv::Vec3d om(0, 0, 0);
  std::vector<double> r(n), wt(n, 1.0), along(n, 0.0);
  const double prior = 1e4 * static_cast<double>(n);  // keeps the correction within ~0.01 rad
  for (int it = 0; it < 8; ++it) {
    cv::Matx44d H = cv::Matx44d::zeros();
    cv::Vec4d g(0, 0, 0, 0);
    for (size_t i = 0; i < n; ++i) {
      const cv::Vec3d ar = a[i] + om.cross(a[i]);
      const cv::Vec3d p = ar + s * b[i];
      if (p[2] <= 1e-6) {
        r[i] = 1e9;
        continue;
      }
      const double u = p[0] / p[2], v = p[1] / p[2];
      const double ru = c[i].x2[0] - u, rv = c[i].x2[1] - v;
      r[i] = f * std::sqrt(ru * ru + rv * rv);
      // dp/ds = b, dp/d(omega) = -[a]x ; then the projection's Jacobian.
      const cv::Vec3d dp[4] = {b[i], cv::Vec3d(0, -ar[2], ar[1]), cv::Vec3d(ar[2], 0, -ar[0]), cv::Vec3d(-ar[1], ar[0], 0)};
      cv::Vec4d ju, jv;
      for (int k = 0; k < 4; ++k) {
        ju[k] = (dp[k][0] - u * dp[k][2]) / p[2];
        jv[k] = (dp[k][1] - v * dp[k][2]) / p[2];
      }
      // Residual along the plane parallax (dp/ds): > 0 when the point moved more than the road would.
      along[i] = (ju[0] * ru + jv[0] * rv) / std::max(1e-12, std::sqrt(ju[0] * ju[0] + jv[0] * jv[0]));
      H += wt[i] * (ju * ju.t() + jv * jv.t());
      g += wt[i] * (ju * ru + jv * rv);
    }
    for (int k = 1; k < 4; ++k) {
      H(k, k) += prior / (f * f);
      g[k] -= prior / (f * f) * om[k - 1];
    }
    const cv::Vec4d step = H.solve(g, cv::DECOMP_CHOLESKY);
    s += step[0];
    om += cv::Vec3d(step[1], step[2], step[3]);
    const double scale = std::max(0.5, 1.5 * median(r));
    for (size_t i = 0; i < n; ++i) wt[i] = cauchy(r[i], along[i] > 0 ? scale * opt_.road_above_scale : scale);
  }
  if (weights) *weights = wt;
  return s;
}

void RoadScale::solve(std::vector<PairMotion>& pairs, const std::vector<double>& ts, const std::vector<ScaleRatio>& ratios,
                      const std::vector<cv::Vec3d>& headings, double normal_out[3]) {
  const size_t np = pairs.size();
  // On a locally flat road the direction of travel lies in the road plane, so the road normal is
  // the mount's prior normal (Options::road_normal; default the camera's down axis) made
  // perpendicular to the clip's median heading: the motion measures the pitch (including the
  // vehicle's own, which no mount calibration knows), the mount gives the roll, which forward
  // motion cannot observe (without forward motion the prior stands as it is). A per-pair rotation
  // correction in fit_distance absorbs the essential matrix's remaining pitch errors.
  // The headings come from the windowed bundle adjustment where it ran: per-pair essential
  // matrices scatter by ~4 mrad in pitch, and at highway speed the road points are 25-50 m away,
  // about 35 mrad below the horizon, so a 2 mrad median error is a 5% distance error
  // (bench/RESULTS.md, "The road normal from the bundle's headings").
  std::vector<double> dx, dy, dz;
  for (size_t k = 0; k < pairs.size(); ++k) {
    if (pairs[k].quality != PairQuality::Ok) continue;
    const cv::Vec3d& t = k < headings.size() && headings[k][2] != 0 ? headings[k] : pairs[k].t_dir;
    dx.push_back(-t[0]);
    dy.push_back(-t[1]);
    dz.push_back(-t[2]);
  }
  cv::Vec3d n = prior_;
  if (dz.size() >= 3) {
    cv::Vec3d d(median(dx), median(dy), median(dz));
    if (d[2] > 0.5) {  // moving forward: the heading is meaningful
      d *= 1.0 / cv::norm(d);
      n = n - n.dot(d) * d;
      n *= 1.0 / cv::norm(n);
    }
  }
  const cv::Vec3d w = n * (1.0 / opt_.camera_height);
  const size_t min_pts = kMinRoadPoints;
  std::vector<double> v(np, 0.0), conf(np, 0.0);
  // Direct distances stand in only where the tracked road is lost for most of the clip (frames far
  // apart at speed): where tracking keeps the road on most pairs, the fusion bridges the rest from
  // the relative scales better than a direct distance measures them (bench/highway.mjs, the KITTI
  // and published 10-frame runs).
  size_t moving = 0, tracked = 0;
  for (size_t k = 0; k < np; ++k) {
    if (pairs[k].quality != PairQuality::Ok) continue;
    ++moving;
    if (road_[k].size() >= min_pts) ++tracked;
  }
  const bool use_direct = 2 * tracked < moving;
  // Where the direct distances lead, they also say what speed the tracked road can plausibly
  // read: aliased tracks (texture moved by metres matching a repeat of itself) read a fraction of
  // the distance, 6-60x too short on rendered highway at 10 frames, on pairs whose own direct
  // alignment failed, and their tight errors outweighed the direct distances in the fusion. A
  // tracked speed more than kDirectConsensus times off the median direct speed of the clip (three
  // pairs or more) is not used; the relative scales bridge the pair.
  double direct_speed = 0;
  if (use_direct) {
    std::vector<double> speeds;
    for (size_t k = 0; k < np; ++k)
      if (pairs[k].quality == PairQuality::Ok && direct_[k].distance > 0 && direct_[k].score >= kMinDirectScore)
        speeds.push_back(direct_[k].distance / (ts[k + 1] - ts[k]));
    if (speeds.size() >= 3) direct_speed = median(speeds);
  }
  for (size_t k = 0; k < np; ++k) {
    pairs[k].road_points = static_cast<int>(road_[k].size());
    pairs[k].direct_distance = direct_[k].distance;
    pairs[k].direct_score = direct_[k].score;
    if (k < ratios.size() && ratios[k].valid) {
      pairs[k].log_ratio = ratios[k].log_ratio;
      pairs[k].ratio_sigma = ratios[k].sigma;
    }
    const double dt = ts[k + 1] - ts[k];
    if (pairs[k].quality == PairQuality::LowParallax) {
      conf[k] = 1.0;  // standing still is known exactly
    } else if (pairs[k].quality == PairQuality::Ok && road_[k].size() >= min_pts) {
      const double sk = fit_distance(pairs[k], road_[k], w, 0.0, nullptr);
      const bool implausible = direct_speed > 0 && std::abs(std::log(sk / dt / direct_speed)) > std::log(kDirectConsensus);
      if (sk > 0 && std::isfinite(sk) && (implausible || ((use_direct || opt_.direct_check) && tracked_contradicted(k, sk)))) {
        // Neither is trusted: the relative scales bridge the pair.
      } else if (sk > 0 && std::isfinite(sk)) {
        v[k] = sk / dt;
        conf[k] = 1.0;
        pairs[k].road_distance = sk;
        pairs[k].road_sigma = road_log_sigma(pairs[k].road_points);
      }
    } else if (pairs[k].quality == PairQuality::Ok && direct_[k].distance > 0 && direct_[k].score >= kMinDirectScore && use_direct) {
      v[k] = direct_[k].distance / dt;
      conf[k] = 1.0;
      pairs[k].road_distance = direct_[k].distance;
      pairs[k].road_sigma = kDirectLogSigma;
    }
  }
  std::vector<double> var(np, std::numeric_limits<double>::quiet_NaN()), covp(np, 0.0);
  fit_ = SpeedFit{};
  if (!ratios.empty() || opt_.speed_smoother) {
    // Without relative scales the road distances alone go through the same fusion and smoother.
    ScaleMeasurements m;
    m.timestamps = ts;
    m.ratios = ratios.empty() ? std::vector<ScaleRatio>(np) : ratios;
    m.moving.resize(np);
    m.road_distance.assign(np, 0.0);
    m.road_sigma.assign(np, 0.0);
    for (size_t k = 0; k < np; ++k) {
      m.moving[k] = pairs[k].quality != PairQuality::LowParallax;
      m.road_distance[k] = pairs[k].road_distance;
      m.road_sigma[k] = pairs[k].road_sigma;
    }
    const SpeedPrior prior{opt_.jerk_psd,       opt_.jerk_psd_min, opt_.jerk_psd_max,   opt_.ratio_drift,
                           opt_.road_bias,      opt_.road_corr_time, opt_.jerk_psd_prior, opt_.jerk_psd_prior_width};
    fuse_scales(m, prior, opt_.speed_smoother, v, conf, var, covp, fit_);
  }
  for (size_t k = 0; k < np; ++k) {
    const double dt = ts[k + 1] - ts[k];
    pairs[k].scale = pairs[k].quality == PairQuality::LowParallax ? 0.0 : std::max(0.0, v[k]) * dt;
    const double sp = pairs[k].scale / dt;
    pairs[k].speed_sigma = sp * std::sqrt(var[k]);
    pairs[k].speed_cov_prev = k >= 1 ? sp * (pairs[k - 1].scale / (ts[k] - ts[k - 1])) * covp[k] : 0.0;
    if (pairs[k].quality == PairQuality::LowParallax) pairs[k].speed_sigma = 0;
  }
  normal_out[0] = n[0];
  normal_out[1] = n[1];
  normal_out[2] = n[2];
}

}  // namespace egogeo::vo
