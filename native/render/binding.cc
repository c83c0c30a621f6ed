// renderClip / renderClipAsync: argument validation at the boundary (every field checked, unknown
// keys rejected so a typo never silently falls back to a default), conversion to and from JS.
// No global mutable state: each call owns its request and result.
#include "binding.h"

#include "types.h"

#include <opencv2/core.hpp>

#include <cmath>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace egogeo::render {
namespace {

[[noreturn]] void fail(Napi::Env env, const std::string& msg) { throw Napi::TypeError::New(env, "renderClip: " + msg); }

/// Rejects keys outside `allowed` (lists the allowed ones in the message).
void known_keys(Napi::Env env, const Napi::Object& o, const std::string& where, std::initializer_list<const char*> allowed) {
  Napi::Array keys = o.GetPropertyNames();
  for (uint32_t i = 0; i < keys.Length(); ++i) {
    const std::string k = keys.Get(i).ToString().Utf8Value();
    bool ok = false;
    for (const char* a : allowed) ok = ok || k == a;
    if (!ok) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(env, "unknown option " + where + "." + k + " (known: " + list + ")");
    }
  }
}

Napi::Object get_object(Napi::Env env, const Napi::Object& o, const char* key, const std::string& where) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return Napi::Object::New(env);
  if (!v.IsObject() || v.IsArray()) fail(env, where + "." + key + " must be an object");
  return v.As<Napi::Object>();
}

double get_number(Napi::Env env, const Napi::Object& o, const char* key, const std::string& where, double dflt, double lo, double hi) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return dflt;
  const std::string name = where + "." + key;
  if (!v.IsNumber()) fail(env, name + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d)) fail(env, name + " must be finite");
  if (d < lo || d > hi) fail(env, name + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(d));
  return d;
}

int get_int(Napi::Env env, const Napi::Object& o, const char* key, const std::string& where, int dflt, int lo, int hi) {
  const double d = get_number(env, o, key, where, dflt, lo, hi);
  if (d != std::floor(d)) fail(env, where + "." + key + " must be an integer");
  return static_cast<int>(d);
}

bool get_bool(Napi::Env env, const Napi::Object& o, const char* key, const std::string& where, bool dflt) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return dflt;
  if (!v.IsBoolean()) fail(env, where + "." + key + " must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

std::vector<double> get_numbers(Napi::Env env, Napi::Value v, const std::string& where) {
  std::vector<double> out;
  if (v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_float64_array) {
    auto a = v.As<Napi::Float64Array>();
    out.assign(a.Data(), a.Data() + a.ElementLength());
  } else if (v.IsArray()) {
    auto a = v.As<Napi::Array>();
    out.reserve(a.Length());
    for (uint32_t i = 0; i < a.Length(); ++i) {
      Napi::Value e = a.Get(i);
      if (!e.IsNumber()) fail(env, where + "[" + std::to_string(i) + "] must be a number");
      out.push_back(e.As<Napi::Number>().DoubleValue());
    }
  } else {
    fail(env, where + " must be an array of numbers or a Float64Array");
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (!std::isfinite(out[i])) fail(env, where + "[" + std::to_string(i) + "] must be finite");
  return out;
}

std::unique_ptr<Request> parse(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject() || info[0].IsArray()) {
    fail(env, "expected one request object {trajectory: {t, x, y, yaw}, camera?, world?, photometric?, markers?, output?}");
  }
  auto req = std::make_unique<Request>();
  Napi::Object r = info[0].As<Napi::Object>();
  known_keys(env, r, "request", {"trajectory", "camera", "world", "photometric", "markers", "output"});

  // Trajectory.
  Napi::Value tv = r.Get("trajectory");
  if (!tv.IsObject() || tv.IsArray()) fail(env, "request.trajectory must be an object {t, x, y, yaw} of equal-length number arrays");
  Napi::Object to = tv.As<Napi::Object>();
  known_keys(env, to, "trajectory", {"t", "x", "y", "yaw"});
  const auto t = get_numbers(env, to.Get("t"), "trajectory.t");
  const auto x = get_numbers(env, to.Get("x"), "trajectory.x");
  const auto y = get_numbers(env, to.Get("y"), "trajectory.y");
  const auto yaw = get_numbers(env, to.Get("yaw"), "trajectory.yaw");
  if (t.empty()) fail(env, "trajectory.t needs at least one timestamp");
  if (t.size() > 100000) fail(env, "trajectory has more than 100000 frames");
  if (x.size() != t.size() || y.size() != t.size() || yaw.size() != t.size()) {
    fail(env, "trajectory.t, x, y and yaw must have the same length (got " + std::to_string(t.size()) + ", " + std::to_string(x.size()) +
                  ", " + std::to_string(y.size()) + ", " + std::to_string(yaw.size()) + ")");
  }
  for (size_t i = 0; i < t.size(); ++i) {
    if (i > 0 && !(t[i] > t[i - 1])) fail(env, "trajectory.t must be strictly increasing (entry " + std::to_string(i) + ")");
    req->poses.push_back({t[i], x[i], y[i], yaw[i]});
  }

  // Camera.
  Napi::Object c = get_object(env, r, "camera", "request");
  known_keys(env, c, "camera", {"width", "height", "fx", "fy", "cx", "cy", "hfovDeg", "mountHeight", "pitchDeg"});
  Camera& cam = req->camera;
  cam.width = get_int(env, c, "width", "camera", cam.width, 16, 8192);
  cam.height = get_int(env, c, "height", "camera", cam.height, 16, 8192);
  if (!c.Get("fx").IsUndefined() && !c.Get("hfovDeg").IsUndefined()) fail(env, "give camera.fx or camera.hfovDeg, not both");
  cam.fx = get_number(env, c, "fx", "camera", 0, 1, 1e6);
  cam.fy = get_number(env, c, "fy", "camera", 0, 1, 1e6);
  const double hfov = get_number(env, c, "hfovDeg", "camera", 0, 1, 170);
  if (hfov > 0) cam.fx = (cam.width / 2.0) / std::tan(hfov * 3.14159265358979323846 / 360.0);
  cam.cx = get_number(env, c, "cx", "camera", -1, -1e5, 1e5);
  cam.cy = get_number(env, c, "cy", "camera", -1, -1e5, 1e5);
  cam.mount_height = get_number(env, c, "mountHeight", "camera", cam.mount_height, 0.2, 10);
  cam.pitch_deg = get_number(env, c, "pitchDeg", "camera", cam.pitch_deg, -20, 30);

  // World.
  Napi::Object w = get_object(env, r, "world", "request");
  known_keys(env, w, "world",
             {"seed", "environment", "lanesPerDirection", "laneWidth", "egoLane", "laneWander", "sidewalkWidth", "buildingDensity",
              "poleSpacing", "textureContrast", "sunAzimuthDeg", "sunElevationDeg"});
  WorldOptions& wo = req->world;
  const double seed = get_number(env, w, "seed", "world", 0, 0, 4294967295.0);
  if (seed != std::floor(seed)) fail(env, "world.seed must be an integer in [0, 2^32)");
  wo.seed = static_cast<uint32_t>(seed);
  Napi::Value envv = w.Get("environment");
  if (!envv.IsUndefined()) {
    const std::string e = envv.IsString() ? envv.As<Napi::String>().Utf8Value() : "";
    if (e == "urban") wo.environment = Environment::Urban;
    else if (e == "suburban") wo.environment = Environment::Suburban;
    else if (e == "highway") wo.environment = Environment::Highway;
    else if (e == "flat") wo.environment = Environment::Flat;
    else fail(env, "world.environment must be one of 'urban', 'suburban', 'highway', 'flat'");
  }
  wo.lanes_per_direction = get_int(env, w, "lanesPerDirection", "world", 0, 0, 4);
  wo.lane_width = get_number(env, w, "laneWidth", "world", wo.lane_width, 2.5, 5);
  wo.ego_lane = get_int(env, w, "egoLane", "world", 0, 0, 3);
  if (wo.lanes_per_direction > 0 && wo.ego_lane >= wo.lanes_per_direction) fail(env, "world.egoLane must be below world.lanesPerDirection");
  wo.lane_wander = get_number(env, w, "laneWander", "world", wo.lane_wander, 0, 2);
  wo.sidewalk_width = get_number(env, w, "sidewalkWidth", "world", wo.sidewalk_width, 0.5, 10);
  wo.building_density = get_number(env, w, "buildingDensity", "world", -1, 0, 1);
  wo.pole_spacing = get_number(env, w, "poleSpacing", "world", -1, 3, 500);
  wo.texture_contrast = get_number(env, w, "textureContrast", "world", 1, 0, 3);
  wo.sun_azimuth_deg = get_number(env, w, "sunAzimuthDeg", "world", -1, 0, 359.999999);
  wo.sun_elevation_deg = get_number(env, w, "sunElevationDeg", "world", -1, 5, 90);

  // Photometric.
  Napi::Object p = get_object(env, r, "photometric", "request");
  known_keys(env, p, "photometric", {"noise", "exposure", "blurSamples", "shutter"});
  Photometric& ph = req->photometric;
  ph.noise = get_number(env, p, "noise", "photometric", 0, 0, 50);
  ph.exposure = get_number(env, p, "exposure", "photometric", 0, 0, 1);
  ph.blur_samples = get_int(env, p, "blurSamples", "photometric", 1, 1, 16);
  ph.shutter = get_number(env, p, "shutter", "photometric", 0.5, 0, 2);

  // Markers.
  Napi::Value mv = r.Get("markers");
  if (!mv.IsUndefined()) {
    if (!mv.IsArray()) fail(env, "request.markers must be an array of {x, y, z, radius?, value?}");
    auto ma = mv.As<Napi::Array>();
    if (ma.Length() > 1000) fail(env, "request.markers: at most 1000 markers");
    for (uint32_t i = 0; i < ma.Length(); ++i) {
      const std::string where = "markers[" + std::to_string(i) + "]";
      Napi::Value e = ma.Get(i);
      if (!e.IsObject() || e.IsArray()) fail(env, where + " must be an object {x, y, z, radius?, value?}");
      Napi::Object mo = e.As<Napi::Object>();
      known_keys(env, mo, where, {"x", "y", "z", "radius", "value"});
      for (const char* k : {"x", "y", "z"})
        if (mo.Get(k).IsUndefined()) fail(env, where + "." + k + " is required");
      Marker m;
      m.x = get_number(env, mo, "x", where, 0, -1e6, 1e6);
      m.y = get_number(env, mo, "y", where, 0, -1e6, 1e6);
      m.z = get_number(env, mo, "z", where, 0, -1e4, 1e4);
      m.radius = get_number(env, mo, "radius", where, 0.1, 1e-4, 100);
      m.value = get_number(env, mo, "value", where, 255, 0, 255);
      req->markers.push_back(m);
    }
  }

  // Output.
  Napi::Object o = get_object(env, r, "output", "request");
  known_keys(env, o, "output", {"pixels", "jpeg", "jpegQuality", "videoPath", "videoFps"});
  OutputOptions& out = req->output;
  out.pixels = get_bool(env, o, "pixels", "output", true);
  out.jpeg = get_bool(env, o, "jpeg", "output", false);
  out.jpeg_quality = get_int(env, o, "jpegQuality", "output", 90, 1, 100);
  Napi::Value vp = o.Get("videoPath");
  if (!vp.IsUndefined()) {
    if (!vp.IsString() || vp.As<Napi::String>().Utf8Value().empty()) fail(env, "output.videoPath must be a non-empty string");
    out.video_path = vp.As<Napi::String>().Utf8Value();
  }
  out.video_fps = get_number(env, o, "videoFps", "output", 10, 0.1, 240);
  return req;
}

Napi::Object to_js(Napi::Env env, Result& r) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("width", r.width);
  out.Set("height", r.height);
  Napi::Object k = Napi::Object::New(env);
  k.Set("fx", r.fx);
  k.Set("fy", r.fy);
  k.Set("cx", r.cx);
  k.Set("cy", r.cy);
  out.Set("intrinsics", k);
  auto buffers = [&](std::vector<std::vector<uint8_t>>& v) {
    Napi::Array a = Napi::Array::New(env, v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      a.Set(static_cast<uint32_t>(i), Napi::Buffer<uint8_t>::Copy(env, v[i].data(), v[i].size()));
      std::vector<uint8_t>().swap(v[i]);  // free as we go
    }
    return a;
  };
  out.Set("frames", buffers(r.pixels));
  out.Set("jpegs", buffers(r.jpegs));
  Napi::Array g = Napi::Array::New(env, r.gains.size());
  for (size_t i = 0; i < r.gains.size(); ++i) g.Set(static_cast<uint32_t>(i), r.gains[i]);
  out.Set("gains", g);
  Napi::Object ms = Napi::Object::New(env);
  ms.Set("world", r.ms.world);
  ms.Set("render", r.ms.render);
  ms.Set("encode", r.ms.encode);
  ms.Set("video", r.ms.video);
  ms.Set("total", r.ms.world + r.ms.render + r.ms.encode + r.ms.video);
  out.Set("timing", ms);
  return out;
}

/// Runs the renderer, mapping every C++ failure to a message (never lets an exception escape).
bool run(const Request& req, Result& out, std::string& error) {
  try {
    out = render_clip(req);
    return true;
  } catch (const InputError& e) {
    error = std::string("renderClip: ") + e.what();
  } catch (const cv::Exception& e) {
    error = std::string("renderClip: OpenCV error: ") + e.err;
  } catch (const std::bad_alloc&) {
    error = "renderClip: out of memory";
  } catch (const std::exception& e) {
    error = std::string("renderClip: ") + e.what();
  }
  return false;
}

Napi::Value RenderClip(const Napi::CallbackInfo& info) {
  auto req = parse(info);
  Result res;
  std::string err;
  if (!run(*req, res, err)) throw Napi::Error::New(info.Env(), err);
  return to_js(info.Env(), res);
}

class RenderWorker : public Napi::AsyncWorker {
 public:
  RenderWorker(Napi::Env env, std::unique_ptr<Request> req)
      : Napi::AsyncWorker(env, "egogeo.renderClip"), req_(std::move(req)), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    std::string err;
    if (!run(*req_, res_, err)) SetError(err);
  }
  void OnOK() override { deferred_.Resolve(to_js(Env(), res_)); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  std::unique_ptr<Request> req_;
  Result res_;
  Napi::Promise::Deferred deferred_;
};

Napi::Value RenderClipAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::unique_ptr<Request> req;
  try {
    req = parse(info);
  } catch (const Napi::Error& e) {
    // Argument errors reject the promise like every other failure.
    auto d = Napi::Promise::Deferred::New(env);
    d.Reject(e.Value());
    return d.Promise();
  }
  auto* w = new RenderWorker(env, std::move(req));
  Napi::Promise p = w->promise();
  w->Queue();
  return p;
}

}  // namespace

void register_exports(Napi::Env env, Napi::Object exports) {
  exports.Set("renderClip", Napi::Function::New(env, RenderClip, "renderClip"));
  exports.Set("renderClipAsync", Napi::Function::New(env, RenderClipAsync, "renderClipAsync"));
}

}  // namespace egogeo::render
