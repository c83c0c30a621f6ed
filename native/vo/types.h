// Data passed between the stages of the VO pipeline (ORB-SLAM style: data separate from stages).
#pragma once

#include <opencv2/core.hpp>

#include "../klt_defaults.h"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace egogeo::vo {

/// Any failure caused by the caller's input (missing file, corrupt image, bad sizes). The addon
/// turns it into a JS Error with this message.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Pinhole intrinsics of the (already rectified) camera, in pixels.
struct Intrinsics {
  double fx = 0, fy = 0, cx = 0, cy = 0;
  cv::Matx33d K() const { return {fx, 0, cx, 0, fy, cy, 0, 0, 1}; }
};

enum class ScaleMode { Road, GroundTruth, None };
enum class Detector { Fast, Orb };
enum class PoseMethod { Ransac, Usac };
/// Per-frame photometric normalisation of the grey image before detection and KLT (tracker.cc).
///  None:     the decoded grey image as is.
///  Global:   per-frame mean/std normalisation (cancels a global gain and offset between frames).
///  Equalize: contrast-limited global histogram equalisation (cancels any global monotone tone
///            curve -- gain, offset, gamma -- up to the clip limit, which bounds noise amplification).
///  Clahe:    contrast-limited adaptive histogram equalisation over 8x8 tiles (VINS-Mono's choice).
///  Gain:     mean/std matched to the clip's first frame (a global gain and offset between frames
///            cancel; the identity on a video whose brightness does not change).
///  Match:    histogram matched to the clip's first frame (any global monotone tone curve -- gain,
///            offset, gamma -- cancels; the identity on a video whose brightness does not change).
///  Pair:     per frame pair, for KLT only: the new frame's mean/std matched to the previous frame's
///            (gain-compensated tracking). Nothing drifts from a distant reference frame and nothing
///            saturates over a clip; detection sees the decoded image; pairs whose brightness does
///            not change cost nothing extra.
enum class Photometric { None, Global, Equalize, Clahe, Gain, Match, Pair };

// Share of a relative scale's error variance that accumulates along a chain of ratios (the rest is
// each pair's own error, shared by its two ratios with opposite signs). Calibrated against ground
// truth: consecutive ratio errors correlate by rho = -0.22 .. -0.47 (KITTI 00/01/06, rendered
// clips), and drift = 1 + 2 rho; road_scale.cc. The bundle-adjusted ratios (bundle_scale.h) keep
// that structure: rho = -0.50 / -0.41 on KITTI 00 / 01+06 and -0.51 on CARLA-like clips at all
// frames, -0.18 / -0.35 on KITTI at 10 frames.
inline constexpr double kRatioDrift = 0.2;
// Standard deviation of the road distances' common level error (log; KITTI's level errors, distance
// travelled per window against ground truth, are 2-6.5% rms). Only the speed sigmas use it.
inline constexpr double kRoadBias = 0.05;
// The road distances' own errors as AR(1): consecutive pairs' errors correlate by exp(-dt / tau).
// Against ground truth, with each window's level removed, their lag-1 correlation at 10 Hz is
// +0.65 / +0.38 / +0.49 on KITTI 00 / 01 / 06 (the plane's errors -- pitch, the road's own shape --
// last a few tenths of a second) and +0.06 on rendered clips. By default the speed smoother takes
// this correlation time instead of white errors when a likelihood-ratio test rejects white errors
// (road_scale.cc; 0.1 s: 0.37 between 10 Hz frames, 0.04 at 3 Hz). Longer times fit KITTI's level
// of correlation but cost the rendered clips (bench/RESULTS.md "The speed profile").
inline constexpr double kRoadCorrTime = 0.1;
// Optional log-normal prior on the jerk PSD q (m^2/s^5), ln q ~ N(ln 1.6, 1.25^2): the benchmark's
// question file calibrates its smoothness thresholds on its data pool (mean |jerk| P33 1.25, P67
// 2.15 m/s^3), which white-noise jerk through the oracle matches at q = 1.57 with a spread of ln q
// of 1.24 between clips (bench/jerk-prior.mjs). Off by default (Options::jerk_psd_prior); this is
// the prior's width when it is on.
inline constexpr double kJerkPsdPriorWidth = 1.25;

/// Every tunable of the pipeline, with its documented default (the OpenCV `Params` idiom).
struct Options {
  Detector detector = Detector::Fast;
  // Working resolution: frames are processed `downsample` (1, 2 or 4) times smaller than stored
  // (JPEG: libjpeg's DCT scaling, so the decoder does less work; otherwise an area average). Every
  // option in pixels below is in working pixels; the result's size, intrinsics and match points
  // stay in the caller's pixels.
  int downsample = 1;
  int max_features = 500;         // tracked corners kept alive over the whole image
  int grid_cols = 10;             // detection buckets, so corners cover the whole image
  int grid_rows = 4;
  int fast_threshold = 12;        // FAST intensity threshold (also ORB's fastThreshold)
  // Photometric robustness (style-transferred video: gain, tone curve, blur and noise change from
  // frame to frame). Measured in bench/photometric.mjs; see docs/vo.md.
  Photometric photometric = Photometric::None;  // 'gain' for restyled video: docs/vo.md, bench/results/photometric.json
  double denoise_sigma = 0.0;     // Gaussian pre-blur (px) of every frame before detection and KLT (0 = off)
  double fast_noise_factor = 0.0; // FAST threshold = max(fast_threshold, factor * per-frame noise sigma) (0 = off)
  int min_distance = 8;           // px between a new corner and any live track
  int klt_window = EGOGEO_KLT_WINDOW;          // KLT window (px) and pyramid levels (native/klt_defaults.h)
  int klt_levels = EGOGEO_KLT_LEVELS;
  int klt_iterations = EGOGEO_KLT_ITERATIONS;  // KLT iterations per level (stops earlier below EGOGEO_KLT_EPSILON px)
  double fb_threshold = EGOGEO_KLT_FB_THRESHOLD;  // forward-backward check (px)
  bool guided_tracking = true;    // KLT starts where the previous pair's motion and the road plane predict (tracker.h)
  // Each track KLT keeps is refined at full working resolution with the patch's scale change as
  // a parameter (tracker.cc refine_scaled): frames far apart grow near patches by 10-30%, which a
  // translation-only window fits with an error common to the pair's points (bench/RESULTS.md).
  bool klt_scale = false;
  double redetect_ratio = 0.7;    // re-detect when live tracks < ratio * max_features
  PoseMethod pose_method = PoseMethod::Usac;  // USAC: local optimisation + final least squares
  double ransac_threshold = 1.0;  // essential-matrix inlier threshold (px)
  double ransac_confidence = 0.999;
  double min_parallax = 0.6;      // upper-quartile rotation-compensated flow (px) below which t = 0
  int min_tracks = 20;            // fewer tracks than this: the pair is 'too_few_tracks'
  ScaleMode scale = ScaleMode::Road;
  double camera_height = 1.65;    // metres above the road (KITTI: 1.65)
  double road_margin = 0.05;      // road region starts this fraction of H below the horizon row
  bool direct_road = true;         // pairs whose road region kept too few tracks: road distance by direct alignment (road_direct.h)
  // Every pair's tracked road is checked against its direct alignment (else only where most pairs
  // lack tracked road), and a tracked distance the alignment contradicts is not used. Frames far
  // apart (the wide-baseline preset) need it: road tracks there can alias on repeating texture
  // (rendered highway at 10 frames: 0.15-0.8 m read for 9-10 m on 60-90 tracks).
  bool direct_check = false;
  double road_above_scale = 0.5;  // road fit: Cauchy scale for points moving more than the plane predicts, relative to the other side (1 = symmetric)
  // The road's downward unit normal in camera coordinates (x right, y down, z forward) from the
  // camera's calibrated mount rotation. It places the horizon (the road region) and seeds the road
  // plane, whose component along the clip's median heading is then removed (the heading lies in a
  // flat road), so roll comes from the mount and pitch from the motion. Default: a level camera.
  cv::Vec3d road_normal{0, 1, 0};
  bool relative_scale = true;     // fuse three-frame relative scale with the road (else road only)
  bool bundle_scale = true;       // refine the relative scales by windowed bundle adjustment (bundle_scale.h)
  bool bundle_normal = true;      // the road's pitch from the bundle's headings (RoadScale::solve), else the pairs'
  // Speed profile under a jerk-driven motion model (speed_smoother.cc): the road distances and the
  // relative scales are fused with a white-noise-jerk prior whose power spectral density q (m^2/s^5)
  // and the measurements' noise scale are chosen per clip by maximum marginal likelihood, q within
  // [jerk_psd_min, jerk_psd_max] (vehicle physics). jerk_psd > 0 fixes q instead. Off: the older
  // fusion with a weak log-speed continuity prior.
  bool speed_smoother = true;
  double jerk_psd = 0.0;          // m^2/s^5; 0 = chosen per clip (maximum likelihood)
  double jerk_psd_min = 0.05;     // bounds of the per-clip choice
  double jerk_psd_max = 200.0;
  double ratio_drift = kRatioDrift;
  double road_bias = kRoadBias;
  double road_corr_time = -1;     // road errors' correlation time (s): < 0 chosen per clip (white or kRoadCorrTime), 0 white
  double jerk_psd_prior = 0;      // m^2/s^5: centre of a log-normal prior on the chosen q (0 = none, maximum likelihood)
  double jerk_psd_prior_width = kJerkPsdPriorWidth;  // its standard deviation in ln q
  std::vector<double> gt_speeds;  // m/s per pair, for ScaleMode::GroundTruth
  bool keep_matches = false;      // keep each pair's track points and inlier flags (ClipResult::matches; the clip viewer)
  enum class Device { Cpu, Gpu } device = Device::Cpu;  // Gpu: pyramids, FAST and KLT on CUDA (gpu_backend.h)
};

/// One input frame: where it comes from and when it was taken.
struct FrameSource {
  std::string path;                  // file path (JPEG/PNG), or empty when `pixels` is given
  const uint8_t* pixels = nullptr;   // 8-bit greyscale, row-major, width*height bytes
  int width = 0, height = 0;
};

struct ClipInput {
  std::vector<FrameSource> frames;
  std::vector<double> timestamps;
  Intrinsics intrinsics;
  bool intrinsics_given = false;     // otherwise fx = fy = 0.9 W, principal point at the centre
  double hfov_deg = 0;               // > 0 and no intrinsics: fx = fy = (W/2) / tan(hfov/2), centred
};

enum class PairQuality { Ok, LowParallax, Degenerate, TooFewTracks };

inline const char* to_string(PairQuality q) {
  switch (q) {
    case PairQuality::Ok: return "ok";
    case PairQuality::LowParallax: return "low_parallax";
    case PairQuality::Degenerate: return "degenerate";
    case PairQuality::TooFewTracks: return "too_few_tracks";
  }
  return "?";
}

/// Relative motion between consecutive frames: X_{k+1} = R X_k + t (camera coordinates).
struct PairMotion {
  cv::Matx33d R = cv::Matx33d::eye();
  cv::Vec3d t_dir{0, 0, -1};  // unit translation direction (forward motion is -z)
  double scale = 0;           // metres moved between the two frames
  int tracks = 0;             // correspondences available
  int inliers = 0;            // essential-matrix inliers
  int road_points = 0;        // road-region correspondences used for scale
  double speed_sigma = 0;     // posterior standard deviation of the pair's mean speed (m/s); NaN when unknown
  double speed_cov_prev = 0;  // posterior covariance of this pair's and the previous pair's speed (m^2/s^2)
  double parallax = 0;        // upper-quartile rotation-compensated flow (px)
  // The scale stage's own measurements, before any fusion (road_scale.cc): the road-plane distance
  // (m; 0 = none) with the nominal standard deviation of its log, and the three-frame relative scale
  // to the previous pair, log(|t_k| / |t_{k-1}|), with its standard error (0 = none).
  double road_distance = 0, road_sigma = 0;
  double log_ratio = 0, ratio_sigma = 0;
  // The pair's direct road alignment where it ran (road_direct.h; 0 = not run or no optimum),
  // whether or not the fusion used it, and its correlation there.
  double direct_distance = 0, direct_score = 0;
  PairQuality quality = PairQuality::Ok;
};

/// One frame pair's correspondences as the tracker gave them (track id, point in the previous and
/// the current frame) and whether the pose stage kept each as an inlier. Only with keep_matches.
struct PairMatches {
  std::vector<cv::Point2f> prev, curr;
  std::vector<int> ids;
  std::vector<uchar> inliers;  // same length as the points (1 = essential-matrix / rotation-model inlier)
};

struct StageTimes {
  double decode = 0, detect = 0, track = 0, pose = 0, scale = 0;
};

struct ClipResult {
  int width = 0, height = 0;
  Intrinsics intrinsics;
  std::vector<cv::Matx33d> R;        // camera-to-world rotation per frame (world = first camera)
  std::vector<cv::Vec3d> t;          // camera centre per frame in metres
  std::vector<PairMotion> pairs;
  double mean_track_length = 0;      // frames a track survives, on average
  int tracks_created = 0;
  double road_normal[3] = {0, 1, 0}; // estimated road normal in the first camera frame
  // Per frame: speed (m/s) and longitudinal acceleration (m/s^2) from the pair speeds (speed at a
  // frame interpolates its two pairs' mean speeds; acceleration is their difference over the time
  // between the pairs' midpoints), with their posterior standard deviations (NaN when unknown).
  std::vector<double> speed, speed_sigma, accel, accel_sigma;
  double jerk_psd = 0;               // the speed smoother's jerk PSD (m^2/s^5), 0 when it did not run
  double noise_scale = 0;            // its factor on the measurements' nominal variances
  double bundle_residual = 0;        // the windowed bundle adjustment's robust reprojection error (px), 0 when it did not run
  double road_corr_time = 0;         // and the road errors' correlation time it chose (s; 0 = white)
  std::vector<PairMatches> matches;  // per pair, with Options::keep_matches only (else empty)
  StageTimes ms;
};

}  // namespace egogeo::vo
