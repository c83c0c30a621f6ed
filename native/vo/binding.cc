// processClip / processClipAsync: argument validation at the boundary, conversion to and from JS.
// Every call owns its request (pixel buffers are copied), so the async path never touches JS
// memory and no state is shared between calls or worker threads.
#include "binding.h"

#include "../napi_util.h"
#include "pipeline.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace egogeo::vo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A validated request; owns any pixel buffers.
struct Request {
  ClipInput input;
  Options options;
  std::vector<std::vector<uint8_t>> pixels;
};

std::unique_ptr<Request> parse(const Napi::CallbackInfo& info) {
  const napi::Args a(info.Env(), "processClip");
  if (info.Length() < 1 || !info[0].IsObject()) a.fail("expected (clip, options?) with clip an object");
  auto req = std::make_unique<Request>();
  Napi::Object clip = info[0].As<Napi::Object>();

  Napi::Value frames = clip.Get("frames");
  if (!frames.IsArray()) a.fail("clip.frames must be an array of file paths or {data, width, height} greyscale buffers");
  auto fa = frames.As<Napi::Array>();
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
  if (req->input.frames.size() < 2) a.fail("clip.frames needs at least 2 frames, got " + std::to_string(req->input.frames.size()));
  req->input.timestamps = a.numbers(clip.Get("timestamps"), "clip.timestamps");
  if (req->input.timestamps.size() != req->input.frames.size()) {
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
    Napi::Object op = info[1].As<Napi::Object>();
    o.detector = a.choice(op, "detector", "options", "fast", {"fast", "orb"}) == "orb" ? Detector::Orb : Detector::Fast;
    o.max_features = a.integer(op, "maxFeatures", "options", o.max_features, 16, 20000);
    o.grid_cols = a.integer(op, "gridCols", "options", o.grid_cols, 1, 64);
    o.grid_rows = a.integer(op, "gridRows", "options", o.grid_rows, 1, 64);
    o.fast_threshold = a.integer(op, "fastThreshold", "options", o.fast_threshold, 1, 255);
    o.min_distance = a.integer(op, "minDistance", "options", o.min_distance, 1, 100);
    o.klt_window = a.integer(op, "kltWindow", "options", o.klt_window, 5, 101);
    o.klt_levels = a.integer(op, "kltLevels", "options", o.klt_levels, 0, 8);
    o.klt_iterations = a.integer(op, "kltIterations", "options", o.klt_iterations, 1, 100);
    o.fb_threshold = a.number(op, "fbThreshold", "options", o.fb_threshold, 0.01, 100);
    o.redetect_ratio = a.number(op, "redetectRatio", "options", o.redetect_ratio, 0, 1);
    o.pose_method = a.choice(op, "poseMethod", "options", "usac", {"ransac", "usac"}) == "usac" ? PoseMethod::Usac
                                                                                          : PoseMethod::Ransac;
    o.ransac_threshold = a.number(op, "ransacThreshold", "options", o.ransac_threshold, 0.01, 50);
    o.ransac_confidence = a.number(op, "ransacConfidence", "options", o.ransac_confidence, 0.5, 0.999999);
    o.min_parallax = a.number(op, "minParallax", "options", o.min_parallax, 0, 100);
    o.min_tracks = a.integer(op, "minTracks", "options", o.min_tracks, 8, 100000);
    const std::string scale = a.choice(op, "scale", "options", "road", {"road", "gt", "none"});
    o.scale = scale == "gt" ? ScaleMode::GroundTruth : scale == "none" ? ScaleMode::None : ScaleMode::Road;
    o.camera_height = a.number(op, "cameraHeight", "options", o.camera_height, 0.05, 100);
    o.road_margin = a.number(op, "roadMargin", "options", o.road_margin, 0, 0.9);
    o.scale_smoothing = a.number(op, "scaleSmoothing", "options", o.scale_smoothing, 0, 1e9);
    o.relative_scale = a.boolean(op, "relativeScale", "options", o.relative_scale);
    Napi::Value gt = op.Get("gtSpeeds");
    if (!gt.IsUndefined()) o.gt_speeds = a.numbers(gt, "options.gtSpeeds");
    if (o.scale == ScaleMode::GroundTruth && o.gt_speeds.size() != req->input.frames.size() - 1) {
      a.fail("options.gtSpeeds must have one speed per frame pair (" + std::to_string(req->input.frames.size() - 1) + ") when scale is 'gt'");
    }
  }
  return req;
}

Napi::Object to_js(Napi::Env env, ClipResult& r) {
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
    pairs.Set(static_cast<uint32_t>(i), po);
  }
  out.Set("pairs", pairs);
  Napi::Object tracks = Napi::Object::New(env);
  tracks.Set("meanLength", r.mean_track_length);
  tracks.Set("created", r.tracks_created);
  out.Set("tracks", tracks);
  Napi::Array normal = Napi::Array::New(env, 3);
  for (uint32_t j = 0; j < 3; ++j) normal.Set(j, r.road_normal[j]);
  out.Set("roadNormal", normal);
  Napi::Object ms = Napi::Object::New(env);
  ms.Set("decode", r.ms.decode);
  ms.Set("detect", r.ms.detect);
  ms.Set("track", r.ms.track);
  ms.Set("pose", r.ms.pose);
  ms.Set("scale", r.ms.scale);
  ms.Set("total", r.ms.decode + r.ms.detect + r.ms.track + r.ms.pose + r.ms.scale);
  out.Set("timing", ms);
  return out;
}

bool run(const Request& req, ClipResult& out, std::string& error) {
  return napi::guarded<InputError>("processClip", [&] { out = process_clip(req.input, req.options); }, error);
}

Napi::Value ProcessClip(const Napi::CallbackInfo& info) {
  return napi::call_sync<Request, ClipResult>(info, parse, run, to_js);
}

Napi::Value ProcessClipAsync(const Napi::CallbackInfo& info) {
  return napi::PromiseWorker<Request, ClipResult>::queue(info, "egogeo.processClip", parse, run, to_js);
}

}  // namespace

void register_exports(Napi::Env env, Napi::Object exports) {
  exports.Set("processClip", Napi::Function::New(env, ProcessClip, "processClip"));
  exports.Set("processClipAsync", Napi::Function::New(env, ProcessClipAsync, "processClipAsync"));
}

}  // namespace egogeo::vo
