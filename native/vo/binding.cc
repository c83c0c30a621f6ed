// processClip / processClipAsync: argument validation at the boundary, conversion to and from JS.
// Every call owns its request (pixel buffers are copied), so the async path never touches JS
// memory. Calls share one thing, their module instance's decoded-frame cache (instance.h,
// decode/frame_cache.h: thread-safe, and the pixels come out the same); worker threads share nothing.
#include "binding.h"
#include "scale/road_scale.h"
#include "scale/scale_fusion.h"

#include "../instance.h"
#include "../napi_util.h"
#include "track/band_blur.h"
#include "track/fast.h"
#include "decode/clip_frames.h"
#include "decode/frame_decode.h"
#include "track/gpu_backend.h"
#include "track/klt.h"
#include "pipeline.h"
#include "decode/video.h"

#include <opencv2/video/tracking.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace egogeo::vo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Request options about how frames reach the engine and what comes back, beside the engine's own.
struct Delivery {
  /// options.keepFrames: return the decoded grey frames used (Output::frames): a video's, or image
  /// files' at their stored size (resolution 'auto' hands a video's to its second size's run, which
  /// then decodes nothing). Frames given as pixels are the caller's already: none come back.
  bool keep_frames = false;
  /// options.areaShrink (image files): decode each frame at its stored size and area-average it to
  /// the working size, as frames given as pixels and video frames are, instead of libjpeg's DCT
  /// scaling: resolution 'auto''s half-size run sees the pixels its full-size run saw.
  bool area_shrink = false;
  /// options.frameCache (default true): decode image files through the module instance's cache.
  bool frame_cache = true;
};

/// A validated request; owns any pixel buffers.
struct Request {
  ClipInput input;
  Options options;
  std::vector<std::vector<uint8_t>> pixels;
  /// clip.video: decoded in `run` (on the calling worker thread, or the load's pool thread for the async form).
  VideoRequest video;
  Delivery delivery;
  /// The instance's frame caches (decodes, corners), unless options.frameCache is false.
  std::shared_ptr<FrameCache> cache;
  std::shared_ptr<CornerCache> corners;
  FrameCaches caches() const { return {cache.get(), corners.get()}; }
};

/// The engine's result, plus what a video input decoded to.
struct Output {
  ClipResult clip;
  bool video = false;
  int video_frames = 0;
  double video_fps = 0;
  std::vector<int> frame_indices;
  std::vector<double> timestamps;
  std::vector<cv::Mat> frames;  // video clips with options.keepFrames: the grey frames used
};

/// Every engine option, read through `r` (which records the option table as it reads): defaults from
/// `Options{}` (types.h), ranges and choices here. Called with an empty object it reads the table.
void parse_options(napi::OptionReader& r, Options& o, Delivery& d) {
  const napi::Args& a = r.args();
  o.detector = r.choice("detector", "fast", {"fast", "orb"}) == "orb" ? Detector::Orb : Detector::Fast;
  o.max_features = r.integer("maxFeatures", o.max_features, 16, 20000);
  o.grid_cols = r.integer("gridCols", o.grid_cols, 1, 64);
  o.grid_rows = r.integer("gridRows", o.grid_rows, 1, 64);
  o.fast_threshold = r.integer("fastThreshold", o.fast_threshold, 1, 255);
  o.min_distance = r.integer("minDistance", o.min_distance, 1, 100);
  o.downsample = r.integer("downsample", o.downsample, 1, 4);
  if (o.downsample == 3) a.fail("options.downsample must be 1, 2 or 4");
  o.klt_window = r.integer("kltWindow", o.klt_window, 5, 101);
  o.klt_levels = r.integer("kltLevels", o.klt_levels, 0, 8);
  o.klt_iterations = r.integer("kltIterations", o.klt_iterations, 1, 100);
  o.fb_threshold = r.number("fbThreshold", o.fb_threshold, 0.01, 100);
  o.redetect_ratio = r.number("redetectRatio", o.redetect_ratio, 0, 1);
  o.pose_method = r.choice("poseMethod", "usac", {"ransac", "usac"}) == "usac" ? PoseMethod::Usac
                                                                                        : PoseMethod::Ransac;
  o.ransac_threshold = r.number("ransacThreshold", o.ransac_threshold, 0.01, 50);
  o.ransac_confidence = r.number("ransacConfidence", o.ransac_confidence, 0.5, 0.999999);
  o.min_parallax = r.number("minParallax", o.min_parallax, 0, 100);
  o.min_tracks = r.integer("minTracks", o.min_tracks, 8, 100000);
  const std::string scale = r.choice("scale", "road", {"road", "gt", "none"});
  o.scale = scale == "gt" ? ScaleMode::GroundTruth : scale == "none" ? ScaleMode::None : ScaleMode::Road;
  o.camera_height = r.number("cameraHeight", o.camera_height, 0.05, 100);
  o.road_margin = r.number("roadMargin", o.road_margin, 0, 0.9);
  o.road_above_scale = r.number("roadAboveScale", o.road_above_scale, 0.05, 1);
  o.direct_road = r.boolean("directRoad", o.direct_road);
  o.direct_check = r.boolean("directCheck", o.direct_check);
  o.guided_tracking = r.boolean("guidedTracking", o.guided_tracking);
  o.klt_scale = r.boolean("kltScale", o.klt_scale);
  o.relative_scale = r.boolean("relativeScale", o.relative_scale);
  o.bundle_scale = r.boolean("bundleScale", o.bundle_scale);
  o.bundle_normal = r.boolean("bundleNormal", o.bundle_normal);
  o.speed_smoother = r.boolean("speedSmoother", o.speed_smoother);
  o.jerk_psd = r.number("jerkPsd", o.jerk_psd, 0, 1e6);
  o.ratio_drift = r.number("ratioDrift", o.ratio_drift, 0.01, 0.99);
  o.road_bias = r.number("roadBias", o.road_bias, 0, 1);
  o.road_corr_time = r.number("roadCorrTime", o.road_corr_time, -1, 10);
  o.jerk_psd_prior = r.number("jerkPsdPrior", o.jerk_psd_prior, 0, 1000);
  o.jerk_psd_prior_width = r.number("jerkPsdPriorWidth", o.jerk_psd_prior_width, 0.05, 100);
  const std::string photometric = r.choice("photometric", "none", {"none", "global", "equalize", "clahe", "gain", "match", "pair"});
  o.photometric = photometric == "global"     ? Photometric::Global
                  : photometric == "equalize" ? Photometric::Equalize
                  : photometric == "clahe"    ? Photometric::Clahe
                  : photometric == "gain"     ? Photometric::Gain
                  : photometric == "match"    ? Photometric::Match
                  : photometric == "pair"     ? Photometric::Pair
                                              : Photometric::None;
  o.denoise_sigma = r.number("denoiseSigma", o.denoise_sigma, 0, 10);
  o.fast_noise_factor = r.number("fastNoiseFactor", o.fast_noise_factor, 0, 20);
  Napi::Value rn = r.raw("roadNormal", "vector3");
  if (!rn.IsUndefined()) {
    const std::vector<double> v = a.numbers(rn, "options.roadNormal");
    if (v.size() != 3) a.fail("options.roadNormal must be 3 numbers [x, y, z] (camera frame), got " + std::to_string(v.size()));
    const double len = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (!(len > 1e-9) || !std::isfinite(len)) a.fail("options.roadNormal must have a non-zero length");
    o.road_normal = cv::Vec3d(v[0] / len, v[1] / len, v[2] / len);
    if (o.road_normal[1] < 0.5) {
      a.fail("options.roadNormal must point down in the camera frame (x right, y down, z forward): its y component must be at least half its length");
    }
  }
  o.keep_matches = r.boolean("keepMatches", o.keep_matches);
  // 'auto' is resolved in JS (src/native/device.ts decideDevice); the addon takes a decision.
  o.device = r.choice("device", "cpu", {"cpu", "gpu"}) == "gpu" ? Options::Device::Gpu : Options::Device::Cpu;
  d.keep_frames = r.boolean("keepFrames", false);
  d.area_shrink = r.boolean("areaShrink", false);
  d.frame_cache = r.boolean("frameCache", true);
  Napi::Value gt = r.raw("gtSpeeds", "numbers");
  if (!gt.IsUndefined()) o.gt_speeds = a.numbers(gt, "options.gtSpeeds");
}

std::unique_ptr<Request> parse(const Napi::CallbackInfo& info) {
  const napi::Args a(info.Env(), "processClip");
  if (info.Length() < 1 || !info[0].IsObject()) a.fail("expected (clip, options?) with clip an object");
  auto req = std::make_unique<Request>();
  Napi::Object clip = info[0].As<Napi::Object>();

  Napi::Value video = clip.Get("video");
  if (!video.IsUndefined()) {
    if (!video.IsString() || video.As<Napi::String>().Utf8Value().empty()) a.fail("clip.video must be a video file path");
    if (!clip.Get("frames").IsUndefined()) a.fail("give clip.frames or clip.video, not both");
    req->video.path = video.As<Napi::String>().Utf8Value();
    Napi::Value fi = clip.Get("frameIndices");
    if (!fi.IsUndefined()) {
      const std::vector<double> idx = a.numbers(fi, "clip.frameIndices");
      for (size_t i = 0; i < idx.size(); ++i) {
        if (idx[i] < 0 || idx[i] != std::floor(idx[i]) || idx[i] > 1e9 || (i > 0 && idx[i] <= idx[i - 1])) {
          a.fail("clip.frameIndices must be increasing non-negative integers (entry " + std::to_string(i) + ")");
        }
        req->video.frame_indices.push_back(static_cast<int>(idx[i]));
      }
      if (req->video.frame_indices.size() < 2) a.fail("clip.frameIndices needs at least 2 frames, got " + std::to_string(req->video.frame_indices.size()));
      req->video.indices_given = true;
    }
    req->video.fps = a.number(clip, "fps", "clip", 0, 0, 1e6);
    Napi::Value ts = clip.Get("timestamps");
    if (!ts.IsUndefined()) {
      req->input.timestamps = a.numbers(ts, "clip.timestamps");
      req->video.timestamps_given = true;
      if (req->video.indices_given && req->input.timestamps.size() != req->video.frame_indices.size()) {
        a.fail("clip.timestamps has " + std::to_string(req->input.timestamps.size()) + " entries for " +
               std::to_string(req->video.frame_indices.size()) + " clip.frameIndices");
      }
    }
  }
  Napi::Value frames = clip.Get("frames");
  if (req->video.path.empty() && !frames.IsArray()) a.fail("clip.frames must be an array of file paths or {data, width, height} greyscale buffers, or clip.video a video path");
  auto fa = req->video.path.empty() ? frames.As<Napi::Array>() : Napi::Array::New(info.Env());
  req->pixels.reserve(fa.Length());
  for (uint32_t i = 0; i < fa.Length(); ++i) {
    Napi::Value f = fa.Get(i);
    FrameSource src;
    const std::string where = "clip.frames[" + std::to_string(i) + "]";
    if (f.IsString()) {
      src.path = f.As<Napi::String>().Utf8Value();
      if (src.path.empty()) a.fail(where + " is an empty path");
    } else if (f.IsObject()) {
      Napi::Object fo = f.As<Napi::Object>();
      Napi::Value data = fo.Get("data");
      if (!data.IsTypedArray() || data.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
        a.fail(where + ".data must be a Uint8Array/Buffer of 8-bit greyscale pixels");
      }
      auto d = data.As<Napi::Uint8Array>();
      const double w = a.number(fo, "width", where, 0, -kInf, kInf, true), h = a.number(fo, "height", where, 0, -kInf, kInf, true);
      if (w < 1 || h < 1 || w != std::floor(w) || h != std::floor(h) || w > 1 << 15 || h > 1 << 15) {
        a.fail(where + ": width and height must be positive integers");
      }
      if (d.ByteLength() != static_cast<size_t>(w) * static_cast<size_t>(h)) {
        a.fail(where + ".data has " + std::to_string(d.ByteLength()) + " bytes, expected width*height = " +
                            std::to_string(static_cast<size_t>(w) * static_cast<size_t>(h)));
      }
      req->pixels.emplace_back(d.Data(), d.Data() + d.ByteLength());
      src.pixels = req->pixels.back().data();
      src.width = static_cast<int>(w);
      src.height = static_cast<int>(h);
    } else {
      a.fail(where + " must be a file path or a {data, width, height} object");
    }
    req->input.frames.push_back(src);
  }
  if (req->video.path.empty() && req->input.frames.size() < 2) a.fail("clip.frames needs at least 2 frames, got " + std::to_string(req->input.frames.size()));
  if (req->video.path.empty()) req->input.timestamps = a.numbers(clip.Get("timestamps"), "clip.timestamps");
  if (req->video.path.empty() && req->input.timestamps.size() != req->input.frames.size()) {
    a.fail("clip.timestamps has " + std::to_string(req->input.timestamps.size()) + " entries for " +
                        std::to_string(req->input.frames.size()) + " frames");
  }
  Napi::Value intr = clip.Get("intrinsics");
  if (!intr.IsUndefined() && !intr.IsNull()) {
    if (!intr.IsObject()) a.fail("clip.intrinsics must be {fx, fy, cx, cy}");
    Napi::Object io = intr.As<Napi::Object>();
    auto& k = req->input.intrinsics;
    k.fx = a.number(io, "fx", "clip.intrinsics", 0, -kInf, kInf, true);
    k.fy = a.number(io, "fy", "clip.intrinsics", 0, -kInf, kInf, true);
    k.cx = a.number(io, "cx", "clip.intrinsics", 0, -kInf, kInf, true);
    k.cy = a.number(io, "cy", "clip.intrinsics", 0, -kInf, kInf, true);
    if (k.fx <= 0 || k.fy <= 0) a.fail("clip.intrinsics.fx and fy must be positive");
    if (k.cx < 0 || k.cy < 0) a.fail("clip.intrinsics.cx and cy must not be negative");
    req->input.intrinsics_given = true;
  }
  // Without intrinsics, a horizontal field of view (CARLA's cameras are specified this way) gives
  // fx = fy = (W/2) / tan(hfov/2) at the image centre once the frame size is known.
  Napi::Value hfov = clip.Get("hfovDeg");
  if (!hfov.IsUndefined() && !hfov.IsNull()) {
    if (req->input.intrinsics_given) a.fail("clip.hfovDeg and clip.intrinsics exclude each other");
    req->input.hfov_deg = a.number(clip, "hfovDeg", "clip", 0, 1, 179, true);
  }

  Options& o = req->options;
  if (info.Length() >= 2 && !info[1].IsUndefined()) {
    if (!info[1].IsObject()) a.fail("options must be an object");
    napi::OptionReader r(a, info[1].As<Napi::Object>(), "options");
    parse_options(r, o, req->delivery);
    r.reject_unknown();
  }
  if (req->delivery.frame_cache) {
    req->cache = instance(info.Env()).frames;
    req->corners = instance(info.Env()).corners;
  }
  if (req->video.path.empty() && o.scale == ScaleMode::GroundTruth && o.gt_speeds.size() != req->input.frames.size() - 1) {
    a.fail("options.gtSpeeds must have one speed per frame pair (" + std::to_string(req->input.frames.size() - 1) + ") when scale is 'gt'");
  }
  return req;
}

Napi::Object result_to_js(Napi::Env env, Output& o) {
  ClipResult& r = o.clip;
  Napi::Object out = Napi::Object::New(env);
  out.Set("width", r.width);
  out.Set("height", r.height);
  Napi::Object k = Napi::Object::New(env);
  k.Set("fx", r.intrinsics.fx);
  k.Set("fy", r.intrinsics.fy);
  k.Set("cx", r.intrinsics.cx);
  k.Set("cy", r.intrinsics.cy);
  out.Set("intrinsics", k);
  const size_t n = r.R.size();
  auto rot = Napi::Float64Array::New(env, n * 9);
  auto pos = Napi::Float64Array::New(env, n * 3);
  for (size_t i = 0; i < n; ++i) {
    for (int j = 0; j < 9; ++j) rot[i * 9 + j] = r.R[i].val[j];
    for (int j = 0; j < 3; ++j) pos[i * 3 + j] = r.t[i][j];
  }
  out.Set("rotations", rot);
  out.Set("positions", pos);
  Napi::Array pairs = Napi::Array::New(env, r.pairs.size());
  for (size_t i = 0; i < r.pairs.size(); ++i) {
    const auto& p = r.pairs[i];
    Napi::Object po = Napi::Object::New(env);
    po.Set("quality", to_string(p.quality));
    po.Set("tracks", p.tracks);
    po.Set("inliers", p.inliers);
    po.Set("roadPoints", p.road_points);
    po.Set("parallax", p.parallax);
    po.Set("distance", p.scale);
    po.Set("speedSigma", p.speed_sigma);
    po.Set("roadDistance", p.road_distance);
    po.Set("roadSigma", p.road_sigma);
    po.Set("logRatio", p.log_ratio);
    po.Set("ratioSigma", p.ratio_sigma);
    po.Set("directDistance", p.direct_distance);
    po.Set("directScore", p.direct_score);
    pairs.Set(static_cast<uint32_t>(i), po);
  }
  out.Set("pairs", pairs);
  {
    Napi::Object sp = Napi::Object::New(env);
    auto arr = [&](const std::vector<double>& x) {
      auto f = Napi::Float64Array::New(env, x.size());
      for (size_t i = 0; i < x.size(); ++i) f[i] = x[i];
      return f;
    };
    sp.Set("speed", arr(r.speed));
    sp.Set("speedSigma", arr(r.speed_sigma));
    sp.Set("accel", arr(r.accel));
    sp.Set("accelSigma", arr(r.accel_sigma));
    sp.Set("jerkPsd", r.jerk_psd);
    sp.Set("noiseScale", r.noise_scale);
    sp.Set("roadCorrTime", r.road_corr_time);
    out.Set("speedProfile", sp);
  }
  if (!r.matches.empty()) {
    Napi::Array ma = Napi::Array::New(env, r.matches.size());
    for (size_t i = 0; i < r.matches.size(); ++i) {
      const PairMatches& pm = r.matches[i];
      const size_t m = pm.prev.size();
      auto prev = Napi::Float32Array::New(env, 2 * m), curr = Napi::Float32Array::New(env, 2 * m);
      auto ids = Napi::Int32Array::New(env, m);
      auto inl = Napi::Uint8Array::New(env, m);
      for (size_t j = 0; j < m; ++j) {
        prev[2 * j] = pm.prev[j].x;
        prev[2 * j + 1] = pm.prev[j].y;
        curr[2 * j] = pm.curr[j].x;
        curr[2 * j + 1] = pm.curr[j].y;
        ids[j] = j < pm.ids.size() ? pm.ids[j] : -1;
        inl[j] = j < pm.inliers.size() ? pm.inliers[j] : 0;
      }
      Napi::Object mo = Napi::Object::New(env);
      mo.Set("prev", prev);
      mo.Set("curr", curr);
      mo.Set("ids", ids);
      mo.Set("inliers", inl);
      ma.Set(static_cast<uint32_t>(i), mo);
    }
    out.Set("matches", ma);
  }
  if (!o.frames.empty()) {
    Napi::Array fa = Napi::Array::New(env, o.frames.size());
    for (size_t i = 0; i < o.frames.size(); ++i) {
      const cv::Mat& m = o.frames[i];
      auto b = Napi::Buffer<uint8_t>::Copy(env, m.data, m.total());
      fa.Set(static_cast<uint32_t>(i), b);
    }
    out.Set("frames", fa);
  }
  Napi::Object tracks = Napi::Object::New(env);
  tracks.Set("meanLength", r.mean_track_length);
  tracks.Set("created", r.tracks_created);
  out.Set("tracks", tracks);
  Napi::Array normal = Napi::Array::New(env, 3);
  for (uint32_t j = 0; j < 3; ++j) normal.Set(j, r.road_normal[j]);
  out.Set("roadNormal", normal);
  out.Set("bundleResidual", r.bundle_residual);
  Napi::Object ms = Napi::Object::New(env);
  ms.Set("decode", r.ms.decode);
  ms.Set("detect", r.ms.detect);
  ms.Set("track", r.ms.track);
  ms.Set("pose", r.ms.pose);
  ms.Set("scale", r.ms.scale);
  ms.Set("total", r.ms.decode + r.ms.detect + r.ms.track + r.ms.pose + r.ms.scale);
  out.Set("timing", ms);
  if (o.video) {
    Napi::Object v = Napi::Object::New(env);
    v.Set("frames", o.video_frames);
    v.Set("fps", o.video_fps);
    out.Set("video", v);
    auto idx = Napi::Int32Array::New(env, o.frame_indices.size());
    for (size_t i = 0; i < o.frame_indices.size(); ++i) idx[i] = o.frame_indices[i];
    out.Set("frameIndices", idx);
    auto ts = Napi::Float64Array::New(env, o.timestamps.size());
    for (size_t i = 0; i < o.timestamps.size(); ++i) ts[i] = o.timestamps[i];
    out.Set("timestamps", ts);
  }
  return out;
}

bool run(const Request& req, Output& out, napi::Failure& error) {
  return napi::guarded<InputError>("processClip", [&] {
    const bool shrink = req.delivery.area_shrink && req.options.downsample > 1;
    const bool keep = req.delivery.keep_frames;
    if (req.video.path.empty() && !shrink && !keep) {
      out.clip = process_clip(req.input, req.options, req.caches());
      return;
    }
    // Decoded here at the frames' own size (decode/clip_frames.h): a video always, image files for
    // areaShrink (the engine area-averages pixels it is given) or to return them.
    ClipFrames f = req.video.path.empty() ? decoded_files(req.input, req.cache.get()) : video_frames(req.input, req.video);
    out.clip = process_clip(f.input, req.options, req.caches());
    out.clip.ms.decode += f.decode_ms;
    if (!req.video.path.empty()) {
      out.video = true;
      out.video_frames = f.video_frames;
      out.video_fps = f.video_fps;
      out.frame_indices = std::move(f.frame_indices);
      out.timestamps = f.input.timestamps;
    }
    if (keep && f.frames.size() == f.input.frames.size()) out.frames = std::move(f.frames);
  }, error);
}

Napi::Value ProcessClip(const Napi::CallbackInfo& info) {
  return napi::call_sync<Request, Output>(info, parse, run, result_to_js);
}

Napi::Value ProcessClipAsync(const Napi::CallbackInfo& info) {
  return napi::queue_call<Request, Output>(info, instance(info.Env()).pool, "egogeo.processClip", parse, run, result_to_js);
}

/// probeVideo(path) → {frames, fps, width, height} as the container declares them (nothing decoded).
Napi::Value ProbeVideo(const Napi::CallbackInfo& info) {
  const napi::Args a(info.Env(), "probeVideo");
  if (info.Length() < 1 || !info[0].IsString()) a.fail("expected (path) with path a string");
  VideoInfo v;
  napi::Failure err;
  if (!napi::guarded<InputError>("probeVideo", [&] { v = probe_video(info[0].As<Napi::String>().Utf8Value()); }, err)) throw err.to_js(info.Env());
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("frames", v.frames);
  out.Set("fps", v.fps);
  out.Set("width", v.width);
  out.Set("height", v.height);
  return out;
}

/// smoothSpeed({timestamps, distances, distanceSigma, logRatios, ratioSigma, jerkPsd?, ratioDrift?,
/// roadBias?, roadCorrTime?, jerkPsdPrior?, jerkPsdPriorWidth?}) → {speed, speedSigma, jerkPsd,
/// roadScale, ratioScale, roadCorrTime}: the engine's speed smoother (road_scale.h) on given
/// per-pair measurements, for tests and studies. Per pair: a road distance (m; not > 0 = none)
/// with the standard deviation of its log, and the log ratio of its distance to the previous
/// pair's with its standard deviation (not > 0 = none). Every pair is taken as moving.
Napi::Value SmoothSpeed(const Napi::CallbackInfo& info) {
  const napi::Args a(info.Env(), "smoothSpeed");
  if (info.Length() < 1 || !info[0].IsObject()) a.fail("expected ({timestamps, distances, distanceSigma, logRatios, ratioSigma})");
  const Napi::Object o = info[0].As<Napi::Object>();
  const std::vector<double> ts = a.numbers(o.Get("timestamps"), "timestamps");
  const std::vector<double> d = a.numbers(o.Get("distances"), "distances");
  const std::vector<double> ds = a.numbers(o.Get("distanceSigma"), "distanceSigma");
  const std::vector<double> lr = a.numbers(o.Get("logRatios"), "logRatios");
  const std::vector<double> rs = a.numbers(o.Get("ratioSigma"), "ratioSigma");
  const size_t n = d.size();
  if (ts.size() != n + 1 || ds.size() != n || lr.size() != n || rs.size() != n) a.fail("timestamps needs one entry more than the per-pair arrays, which need equal lengths");
  for (size_t i = 1; i < ts.size(); ++i)
    if (!(ts[i] > ts[i - 1])) a.fail("timestamps must be strictly increasing");
  SpeedPrior prior;
  const Napi::Value q = o.Get("jerkPsd");
  if (q.IsNumber()) prior.jerk_psd = q.As<Napi::Number>().DoubleValue();
  prior.ratio_drift = a.number(o, "ratioDrift", "ratioDrift", prior.ratio_drift, 0.01, 0.99);
  prior.road_bias = a.number(o, "roadBias", "roadBias", prior.road_bias, 0, 1);
  prior.road_corr_time = a.number(o, "roadCorrTime", "roadCorrTime", prior.road_corr_time, -1, 10);
  prior.q_prior = a.number(o, "jerkPsdPrior", "jerkPsdPrior", prior.q_prior, 0, 1000);
  prior.q_prior_width = a.number(o, "jerkPsdPriorWidth", "jerkPsdPriorWidth", prior.q_prior_width, 0.05, 100);
  std::vector<bool> moving(n, true);
  const Napi::Value mv = o.Get("moving");
  if (!mv.IsUndefined()) {
    if (!mv.IsArray() || mv.As<Napi::Array>().Length() != n) a.fail("moving must be an array of booleans, one per pair");
    for (uint32_t k = 0; k < n; ++k) {
      const Napi::Value e = mv.As<Napi::Array>().Get(k);
      if (!e.IsBoolean()) a.fail("moving[" + std::to_string(k) + "] must be a boolean");
      moving[k] = e.As<Napi::Boolean>().Value();
    }
  }
  const MeasuredSpeed r = speed_from_pairs(ts, d, ds, lr, rs, moving, prior);
  if (!r.fit.ok) a.fail("no road distance to anchor the speed");
  Napi::Env env = info.Env();
  auto sp = Napi::Float64Array::New(env, n), sg = Napi::Float64Array::New(env, n);
  for (size_t k = 0; k < n; ++k) {
    sp[k] = r.speed[k];
    sg[k] = r.sigma[k];
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("speed", sp);
  out.Set("speedSigma", sg);
  out.Set("jerkPsd", r.fit.jerk_psd);
  out.Set("roadScale", r.fit.road_scale);
  out.Set("ratioScale", r.fit.ratio_scale);
  out.Set("roadCorrTime", r.fit.road_corr_time);
  out.Set("neg2LogMl", r.fit.neg2_log_ml);
  return out;
}

}  // namespace

/// frameCacheStats() -> {hits, misses, frames, bytes, corners: {hits, misses, entries, bytes}}: this
/// module instance's frame caches (tests, benches).
static Napi::Value FrameCacheStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto counts = [&](const CacheStats& s, const char* entries) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("hits", static_cast<double>(s.hits));
    o.Set("misses", static_cast<double>(s.misses));
    o.Set(entries, static_cast<double>(s.entries));
    o.Set("bytes", static_cast<double>(s.bytes));
    return o;
  };
  Napi::Object out = counts(instance(env).frames->stats(), "frames");
  out.Set("corners", counts(instance(env).corners->stats(), "entries"));
  return out;
}

/// gpuInfo() -> {loaded, path, file, devices, device, reason, selftest, shared: {contexts, calls, jobs}}: the CUDA library beside the addon (gpu_backend.h).
static Napi::Value GpuInfoJs(const Napi::CallbackInfo& info) {
  const GpuInfo g = gpu_probe();
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("loaded", g.loaded);
  out.Set("path", g.path);
  out.Set("file", g.file);
  out.Set("devices", g.devices);
  out.Set("device", g.device);
  out.Set("reason", g.reason);
  out.Set("selftest", g.selftest);
  Napi::Object shared = Napi::Object::New(info.Env());
  shared.Set("contexts", static_cast<double>(g.shared_contexts));
  shared.Set("calls", static_cast<double>(g.shared_calls));
  shared.Set("jobs", static_cast<double>(g.shared_jobs));
  out.Set("shared", shared);
  return out;
}

/// optionTable(): every processClip option (name, kind, default, range or choices), as parse reads it.
static Napi::Value OptionTable(const Napi::CallbackInfo& info) {
  const napi::Args a(info.Env(), "optionTable");
  napi::OptionReader r(a, Napi::Object::New(info.Env()), "options");
  Options o;
  Delivery d;
  parse_options(r, o, d);
  return napi::OptionReader::to_js(info.Env(), r.table());
}

/// A {data, width, height} 8-bit grey frame as a Mat over the caller's bytes (valid during the call).
static cv::Mat grey_frame(const napi::Args& a, Napi::Value v, const std::string& where) {
  if (!v.IsObject()) a.fail(where + " must be a {data, width, height} object");
  Napi::Object o = v.As<Napi::Object>();
  Napi::Value data = o.Get("data");
  if (!data.IsTypedArray() || data.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) a.fail(where + ".data must be a Uint8Array/Buffer of 8-bit greyscale pixels");
  auto d = data.As<Napi::Uint8Array>();
  const int w = a.integer(o, "width", where, 0, 16, 1 << 15), h = a.integer(o, "height", where, 0, 16, 1 << 15);
  if (d.ByteLength() != static_cast<size_t>(w) * static_cast<size_t>(h)) a.fail(where + ".data has " + std::to_string(d.ByteLength()) + " bytes, expected width*height");
  return cv::Mat(h, w, CV_8UC1, d.Data());
}

/// (x, y) pairs of a Float32Array as points.
static std::vector<cv::Point2f> points_of(const napi::Args& a, Napi::Value v, const std::string& where) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) a.fail(where + " must be a Float32Array of x, y pairs");
  auto f = v.As<Napi::Float32Array>();
  if (f.ElementLength() % 2) a.fail(where + " must hold x, y pairs (an even length)");
  std::vector<cv::Point2f> p(f.ElementLength() / 2);
  for (size_t i = 0; i < p.size(); ++i) {
    p[i] = cv::Point2f(f[2 * i], f[2 * i + 1]);
    if (!std::isfinite(p[i].x) || !std::isfinite(p[i].y)) a.fail(where + ": point " + std::to_string(i) + " is not finite");
  }
  return p;
}

/// Argument i as an options object: {} when absent or undefined; anything else but a plain object fails.
static Napi::Object options_arg(const napi::Args& a, const Napi::CallbackInfo& info, size_t i) {
  if (info.Length() <= i || info[i].IsUndefined()) return Napi::Object::New(info.Env());
  if (!info[i].IsObject() || info[i].IsArray()) a.fail("options must be an object");
  return info[i].As<Napi::Object>();
}

/// kltTrack(prev, next, points, {window, levels, iterations, epsilon, initial, reference, instructions}) ->
/// {points, status}: the tracker's KLT (klt.cc) on two frames, or with reference: 'opencv'
/// cv::calcOpticalFlowPyrLK on the same pyramids (tests compare them; bench/stage-profile.mjs times them).
static Napi::Value KltTrack(const Napi::CallbackInfo& info) {
  const napi::Args a(info.Env(), "kltTrack");
  if (info.Length() < 3) a.fail("expected (prev, next, points[, options])");
  const cv::Mat prev = grey_frame(a, info[0], "prev"), next = grey_frame(a, info[1], "next");
  if (prev.size() != next.size()) a.fail("prev and next must have the same size");
  const std::vector<cv::Point2f> from = points_of(a, info[2], "points");
  const Napi::Object o = options_arg(a, info, 3);
  KltParams p;
  p.window = a.integer(o, "window", "options", EGOGEO_KLT_WINDOW, 5, 101);
  p.max_level = a.integer(o, "levels", "options", EGOGEO_KLT_LEVELS, 0, 8);
  p.max_count = a.integer(o, "iterations", "options", EGOGEO_KLT_ITERATIONS, 1, 100);
  p.epsilon = a.number(o, "epsilon", "options", EGOGEO_KLT_EPSILON, 0, 10);
  const bool opencv = a.choice(o, "reference", "options", "egogeo", {"egogeo", "opencv"}) == "opencv";
  const std::string isa = a.choice(o, "instructions", "options", "best", {"best", "avx512", "avx2", "sse2", "scalar"});
  p.isa = isa == "scalar" ? 0 : isa == "sse2" ? 1 : isa == "avx2" ? 2 : 3;
  std::vector<cv::Point2f> to;
  const bool initial = !o.Get("initial").IsUndefined();
  if (initial) {
    to = points_of(a, o.Get("initial"), "options.initial");
    if (to.size() != from.size()) a.fail("options.initial must have as many points as points");
  }
  std::vector<uchar> status;
  napi::Failure err;
  const bool ok = napi::guarded<InputError>("kltTrack", [&] {
    if (from.empty()) return;
    std::vector<cv::Mat> P, N;
    const cv::Size win(p.window, p.window);
    cv::buildOpticalFlowPyramid(prev, P, win, p.max_level, true);
    cv::buildOpticalFlowPyramid(next, N, win, p.max_level, true);
    if (opencv) {
      std::vector<float> e;
      if (!initial) to.clear();
      cv::calcOpticalFlowPyrLK(P, N, from, to, status, e, win, p.max_level, cv::TermCriteria(cv::TermCriteria::COUNT | cv::TermCriteria::EPS, p.max_count, p.epsilon),
                               initial ? cv::OPTFLOW_USE_INITIAL_FLOW : 0);
    } else {
      klt_track(P, N, from, to, status, p, initial);
    }
  }, err);
  if (!ok) throw err.to_js(info.Env());
  Napi::Float32Array pts = Napi::Float32Array::New(info.Env(), 2 * to.size());
  Napi::Uint8Array st = Napi::Uint8Array::New(info.Env(), status.size());
  for (size_t i = 0; i < to.size(); ++i) pts[2 * i] = to[i].x, pts[2 * i + 1] = to[i].y, st[i] = status[i];
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("points", pts);
  out.Set("status", st);
  return out;
}

/// bandBlur(frame, {top, sigma, reference}) -> {pixels, own}: the direct alignment's blur of the
/// rows top.. (band_blur.cc; Float32Array, width x (height - top)), or with reference: 'opencv'
/// cv::GaussianBlur's. `own`: whether band_blur computes it itself on this CPU (tests compare them).
static Napi::Value BandBlur(const Napi::CallbackInfo& info) {
  const napi::Args a(info.Env(), "bandBlur");
  if (info.Length() < 1) a.fail("expected (frame[, options])");
  const cv::Mat grey = grey_frame(a, info[0], "frame");
  const Napi::Object o = options_arg(a, info, 1);
  const int top = a.integer(o, "top", "options", 0, 0, grey.rows - 1);
  const double sigma = a.number(o, "sigma", "options", 3.0, 0.1, 10);
  const bool opencv = a.choice(o, "reference", "options", "egogeo", {"egogeo", "opencv"}) == "opencv";
  cv::Mat dst(grey.size(), CV_32F, cv::Scalar(0));
  BandBlurScratch scratch;
  napi::Failure err;
  if (!napi::guarded<InputError>("bandBlur", [&] { band_blur(grey, top, sigma, dst, scratch, opencv); }, err)) throw err.to_js(info.Env());
  Napi::Float32Array px = Napi::Float32Array::New(info.Env(), static_cast<size_t>(grey.cols) * (grey.rows - top));
  for (int y = top; y < grey.rows; ++y) std::copy(dst.ptr<float>(y), dst.ptr<float>(y) + grey.cols, px.Data() + static_cast<size_t>(y - top) * grey.cols);
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("pixels", px);
  out.Set("own", band_blur_own());
  return out;
}

/// fastCorners(frame, {threshold, reference}) -> {points, scores, own}: the tracker's FAST corners
/// (fast.cc; x, y pairs and their scores, in cv::FAST's order), or with reference: 'opencv'
/// cv::FAST's. `own`: whether fast.cc computes them itself on this CPU (tests compare them).
static Napi::Value FastCorners(const Napi::CallbackInfo& info) {
  const napi::Args a(info.Env(), "fastCorners");
  if (info.Length() < 1) a.fail("expected (frame[, options])");
  const cv::Mat grey = grey_frame(a, info[0], "frame");
  const Napi::Object o = options_arg(a, info, 1);
  const int threshold = a.integer(o, "threshold", "options", Options{}.fast_threshold, 0, 255);
  const bool opencv = a.choice(o, "reference", "options", "egogeo", {"egogeo", "opencv"}) == "opencv";
  std::vector<cv::KeyPoint> kps;
  FastScratch scratch;
  napi::Failure err;
  if (!napi::guarded<InputError>("fastCorners", [&] { fast_corners(grey, threshold, kps, scratch, opencv); }, err)) throw err.to_js(info.Env());
  Napi::Float32Array pts = Napi::Float32Array::New(info.Env(), 2 * kps.size());
  Napi::Float32Array scores = Napi::Float32Array::New(info.Env(), kps.size());
  for (size_t i = 0; i < kps.size(); ++i) pts[2 * i] = kps[i].pt.x, pts[2 * i + 1] = kps[i].pt.y, scores[i] = kps[i].response;
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("points", pts);
  out.Set("scores", scores);
  out.Set("own", fast_corners_own());
  return out;
}

void register_exports(Napi::Env env, Napi::Object exports) {
  exports.Set("bandBlur", Napi::Function::New(env, BandBlur, "bandBlur"));
  exports.Set("fastCorners", Napi::Function::New(env, FastCorners, "fastCorners"));
  exports.Set("kltTrack", Napi::Function::New(env, KltTrack, "kltTrack"));
  exports.Set("optionTable", Napi::Function::New(env, OptionTable, "optionTable"));
  exports.Set("probeVideo", Napi::Function::New(env, ProbeVideo, "probeVideo"));
  exports.Set("processClip", Napi::Function::New(env, ProcessClip, "processClip"));
  exports.Set("processClipAsync", Napi::Function::New(env, ProcessClipAsync, "processClipAsync"));
  exports.Set("smoothSpeed", Napi::Function::New(env, SmoothSpeed, "smoothSpeed"));
  exports.Set("gpuInfo", Napi::Function::New(env, GpuInfoJs, "gpuInfo"));
  exports.Set("frameCacheStats", Napi::Function::New(env, FrameCacheStats, "frameCacheStats"));
}

}  // namespace egogeo::vo
