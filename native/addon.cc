// N-API surface of the engine: argument validation at the boundary, conversion to and from JS,
// a synchronous call for worker threads and a Promise-returning one (AsyncWorker) for the main
// thread. No global mutable state: every call owns its data, so the addon loads in many workers.
#include "render/binding.h"
#include "vo/pipeline.h"

#include <napi.h>
#include <opencv2/core.hpp>

#include <memory>
#include <string>
#include <vector>

namespace {

using egogeo::vo::ClipInput;
using egogeo::vo::ClipResult;
using egogeo::vo::Options;

/// A validated request; owns any pixel buffers so the async path never touches JS memory.
struct Request {
  ClipInput input;
  Options options;
  std::vector<std::vector<uint8_t>> pixels;
};

[[noreturn]] void type_error(Napi::Env env, const std::string& msg) {
  throw Napi::TypeError::New(env, "processClip: " + msg);
}

double get_number(Napi::Env env, const Napi::Object& o, const char* key, const std::string& where, double dflt, bool required = false) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) {
    if (required) type_error(env, where + "." + key + " is required");
    return dflt;
  }
  if (!v.IsNumber()) type_error(env, where + "." + key + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d)) type_error(env, where + "." + key + " must be finite");
  return d;
}

int get_int(Napi::Env env, const Napi::Object& o, const char* key, int dflt, int lo, int hi) {
  const double d = get_number(env, o, key, "options", dflt);
  if (d != std::floor(d) || d < lo || d > hi) {
    type_error(env, std::string("options.") + key + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return static_cast<int>(d);
}

double get_range(Napi::Env env, const Napi::Object& o, const char* key, double dflt, double lo, double hi) {
  const double d = get_number(env, o, key, "options", dflt);
  if (d < lo || d > hi) type_error(env, std::string("options.") + key + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return d;
}

std::string get_enum(Napi::Env env, const Napi::Object& o, const char* key, const std::string& dflt, std::initializer_list<const char*> allowed) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return dflt;
  std::string list;
  for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string("'") + a + "'";
  if (!v.IsString()) type_error(env, std::string("options.") + key + " must be one of " + list);
  std::string s = v.As<Napi::String>().Utf8Value();
  for (const char* a : allowed)
    if (s == a) return s;
  type_error(env, std::string("options.") + key + " must be one of " + list + ", got '" + s + "'");
}

std::vector<double> get_numbers(Napi::Env env, Napi::Value v, const std::string& where) {
  std::vector<double> out;
  if (v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_float64_array) {
    auto a = v.As<Napi::Float64Array>();
    out.assign(a.Data(), a.Data() + a.ElementLength());
  } else if (v.IsArray()) {
    auto a = v.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); ++i) {
      Napi::Value e = a.Get(i);
      if (!e.IsNumber()) type_error(env, where + "[" + std::to_string(i) + "] must be a number");
      out.push_back(e.As<Napi::Number>().DoubleValue());
    }
  } else {
    type_error(env, where + " must be an array of numbers");
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (!std::isfinite(out[i])) type_error(env, where + "[" + std::to_string(i) + "] must be finite");
  return out;
}

std::unique_ptr<Request> parse_request(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) type_error(env, "expected (clip, options?) with clip an object");
  auto req = std::make_unique<Request>();
  Napi::Object clip = info[0].As<Napi::Object>();

  Napi::Value frames = clip.Get("frames");
  if (!frames.IsArray()) type_error(env, "clip.frames must be an array of file paths or {data, width, height} greyscale buffers");
  auto fa = frames.As<Napi::Array>();
  req->pixels.reserve(fa.Length());
  for (uint32_t i = 0; i < fa.Length(); ++i) {
    Napi::Value f = fa.Get(i);
    egogeo::vo::FrameSource src;
    const std::string where = "clip.frames[" + std::to_string(i) + "]";
    if (f.IsString()) {
      src.path = f.As<Napi::String>().Utf8Value();
      if (src.path.empty()) type_error(env, where + " is an empty path");
    } else if (f.IsObject()) {
      Napi::Object fo = f.As<Napi::Object>();
      Napi::Value data = fo.Get("data");
      if (!data.IsTypedArray() || data.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
        type_error(env, where + ".data must be a Uint8Array/Buffer of 8-bit greyscale pixels");
      }
      auto d = data.As<Napi::Uint8Array>();
      const double w = get_number(env, fo, "width", where, 0, true), h = get_number(env, fo, "height", where, 0, true);
      if (w < 1 || h < 1 || w != std::floor(w) || h != std::floor(h) || w > 1 << 15 || h > 1 << 15) {
        type_error(env, where + ": width and height must be positive integers");
      }
      if (d.ByteLength() != static_cast<size_t>(w) * static_cast<size_t>(h)) {
        type_error(env, where + ".data has " + std::to_string(d.ByteLength()) + " bytes, expected width*height = " +
                            std::to_string(static_cast<size_t>(w) * static_cast<size_t>(h)));
      }
      req->pixels.emplace_back(d.Data(), d.Data() + d.ByteLength());
      src.pixels = req->pixels.back().data();
      src.width = static_cast<int>(w);
      src.height = static_cast<int>(h);
    } else {
      type_error(env, where + " must be a file path or a {data, width, height} object");
    }
    req->input.frames.push_back(src);
  }
  if (req->input.frames.size() < 2) type_error(env, "clip.frames needs at least 2 frames, got " + std::to_string(req->input.frames.size()));
  req->input.timestamps = get_numbers(env, clip.Get("timestamps"), "clip.timestamps");
  if (req->input.timestamps.size() != req->input.frames.size()) {
    type_error(env, "clip.timestamps has " + std::to_string(req->input.timestamps.size()) + " entries for " +
                        std::to_string(req->input.frames.size()) + " frames");
  }
  Napi::Value intr = clip.Get("intrinsics");
  if (!intr.IsUndefined() && !intr.IsNull()) {
    if (!intr.IsObject()) type_error(env, "clip.intrinsics must be {fx, fy, cx, cy}");
    Napi::Object io = intr.As<Napi::Object>();
    auto& k = req->input.intrinsics;
    k.fx = get_number(env, io, "fx", "clip.intrinsics", 0, true);
    k.fy = get_number(env, io, "fy", "clip.intrinsics", 0, true);
    k.cx = get_number(env, io, "cx", "clip.intrinsics", 0, true);
    k.cy = get_number(env, io, "cy", "clip.intrinsics", 0, true);
    if (k.fx <= 0 || k.fy <= 0) type_error(env, "clip.intrinsics.fx and fy must be positive");
    if (k.cx < 0 || k.cy < 0) type_error(env, "clip.intrinsics.cx and cy must not be negative");
    req->input.intrinsics_given = true;
  }

  Options& o = req->options;
  if (info.Length() >= 2 && !info[1].IsUndefined()) {
    if (!info[1].IsObject()) type_error(env, "options must be an object");
    Napi::Object op = info[1].As<Napi::Object>();
    o.detector = get_enum(env, op, "detector", "fast", {"fast", "orb"}) == "orb" ? egogeo::vo::Detector::Orb : egogeo::vo::Detector::Fast;
    o.max_features = get_int(env, op, "maxFeatures", o.max_features, 16, 20000);
    o.grid_cols = get_int(env, op, "gridCols", o.grid_cols, 1, 64);
    o.grid_rows = get_int(env, op, "gridRows", o.grid_rows, 1, 64);
    o.fast_threshold = get_int(env, op, "fastThreshold", o.fast_threshold, 1, 255);
    o.min_distance = get_int(env, op, "minDistance", o.min_distance, 1, 100);
    o.klt_window = get_int(env, op, "kltWindow", o.klt_window, 5, 101);
    o.klt_levels = get_int(env, op, "kltLevels", o.klt_levels, 0, 8);
    o.klt_iterations = get_int(env, op, "kltIterations", o.klt_iterations, 1, 100);
    o.fb_threshold = get_range(env, op, "fbThreshold", o.fb_threshold, 0.01, 100);
    o.redetect_ratio = get_range(env, op, "redetectRatio", o.redetect_ratio, 0, 1);
    o.pose_method = get_enum(env, op, "poseMethod", "usac", {"ransac", "usac"}) == "usac" ? egogeo::vo::PoseMethod::Usac
                                                                                          : egogeo::vo::PoseMethod::Ransac;
    o.ransac_threshold = get_range(env, op, "ransacThreshold", o.ransac_threshold, 0.01, 50);
    o.ransac_confidence = get_range(env, op, "ransacConfidence", o.ransac_confidence, 0.5, 0.999999);
    o.min_parallax = get_range(env, op, "minParallax", o.min_parallax, 0, 100);
    o.min_tracks = get_int(env, op, "minTracks", o.min_tracks, 8, 100000);
    const std::string scale = get_enum(env, op, "scale", "road", {"road", "gt", "none"});
    o.scale = scale == "gt" ? egogeo::vo::ScaleMode::GroundTruth : scale == "none" ? egogeo::vo::ScaleMode::None : egogeo::vo::ScaleMode::Road;
    o.camera_height = get_range(env, op, "cameraHeight", o.camera_height, 0.05, 100);
    o.road_margin = get_range(env, op, "roadMargin", o.road_margin, 0, 0.9);
    o.scale_smoothing = get_range(env, op, "scaleSmoothing", o.scale_smoothing, 0, 1e9);
    Napi::Value rel = op.Get("relativeScale");
    if (!rel.IsUndefined()) {
      if (!rel.IsBoolean()) type_error(env, "options.relativeScale must be a boolean");
      o.relative_scale = rel.As<Napi::Boolean>().Value();
    }
    Napi::Value gt = op.Get("gtSpeeds");
    if (!gt.IsUndefined()) o.gt_speeds = get_numbers(env, gt, "options.gtSpeeds");
    if (o.scale == egogeo::vo::ScaleMode::GroundTruth && o.gt_speeds.size() != req->input.frames.size() - 1) {
      type_error(env, "options.gtSpeeds must have one speed per frame pair (" + std::to_string(req->input.frames.size() - 1) + ") when scale is 'gt'");
    }
  }
  return req;
}

Napi::Object to_js(Napi::Env env, const ClipResult& r) {
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
    po.Set("quality", egogeo::vo::to_string(p.quality));
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

/// Runs the pipeline, mapping every C++ failure to a message (never lets an exception escape).
bool run(const Request& req, ClipResult& out, std::string& error) {
  try {
    out = egogeo::vo::process_clip(req.input, req.options);
    return true;
  } catch (const egogeo::vo::InputError& e) {
    error = e.what();
  } catch (const cv::Exception& e) {
    error = std::string("OpenCV error: ") + e.err;
  } catch (const std::exception& e) {
    error = std::string("internal error: ") + e.what();
  }
  return false;
}

Napi::Value ProcessClip(const Napi::CallbackInfo& info) {
  auto req = parse_request(info);
  ClipResult res;
  std::string err;
  if (!run(*req, res, err)) throw Napi::Error::New(info.Env(), err);
  return to_js(info.Env(), res);
}

class ClipWorker : public Napi::AsyncWorker {
 public:
  ClipWorker(Napi::Env env, std::unique_ptr<Request> req)
      : Napi::AsyncWorker(env, "egogeo.processClip"), req_(std::move(req)), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    std::string err;
    if (!run(*req_, res_, err)) SetError(err);
  }
  void OnOK() override { deferred_.Resolve(to_js(Env(), res_)); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  std::unique_ptr<Request> req_;
  ClipResult res_;
  Napi::Promise::Deferred deferred_;
};

Napi::Value ProcessClipAsync(const Napi::CallbackInfo& info) {
  std::unique_ptr<Request> req;
  try {
    req = parse_request(info);
  } catch (const Napi::Error& e) {
    // A Promise-returning call reports bad arguments as a rejection, not a throw.
    auto d = Napi::Promise::Deferred::New(info.Env());
    d.Reject(e.Value());
    return d.Promise();
  }
  auto* w = new ClipWorker(info.Env(), std::move(req));
  Napi::Promise p = w->promise();
  w->Queue();
  return p;
}

Napi::Value SetThreads(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(info.Env(), "setThreads: expected a number");
  // OpenCV's thread pool is per process; workers call this once with 1 so they don't oversubscribe.
  cv::setNumThreads(info[0].As<Napi::Number>().Int32Value());
  return info.Env().Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("processClip", Napi::Function::New(env, ProcessClip, "processClip"));
  exports.Set("processClipAsync", Napi::Function::New(env, ProcessClipAsync, "processClipAsync"));
  exports.Set("setThreads", Napi::Function::New(env, SetThreads, "setThreads"));
  exports.Set("opencvVersion", Napi::String::New(env, CV_VERSION));
  egogeo::render::register_exports(env, exports);  // renderClip, renderClipAsync
  return exports;
}

}  // namespace

NODE_API_MODULE(egogeo_native, Init)
