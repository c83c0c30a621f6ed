// renderClip / renderClipAsync: argument validation at the boundary (every field checked, unknown
// keys rejected so a typo never silently falls back to a default), conversion to and from JS.
// No global mutable state: each call owns its request and result.
#include "binding.h"

#include "../instance.h"
#include "../napi_util.h"
#include "encode.h"
#include "types.h"

#include <opencv2/core.hpp>

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace egogeo::render {
namespace {

std::unique_ptr<Request> parse(const Napi::CallbackInfo& info) {
  const napi::Args a(info.Env(), "renderClip");
  if (info.Length() < 1 || !info[0].IsObject() || info[0].IsArray()) {
    a.fail("expected one request object {trajectory: {t, x, y, yaw}, camera?, world?, photometric?, markers?, output?}");
  }
  auto req = std::make_unique<Request>();
  Napi::Object r = info[0].As<Napi::Object>();
  a.known_keys(r, "request", {"trajectory", "camera", "world", "photometric", "markers", "output"});

  // Trajectory.
  Napi::Value tv = r.Get("trajectory");
  if (!tv.IsObject() || tv.IsArray()) a.fail("request.trajectory must be an object {t, x, y, yaw} of equal-length number arrays");
  Napi::Object to = tv.As<Napi::Object>();
  a.known_keys(to, "trajectory", {"t", "x", "y", "yaw"});
  const auto t = a.numbers(to.Get("t"), "trajectory.t");
  const auto x = a.numbers(to.Get("x"), "trajectory.x");
  const auto y = a.numbers(to.Get("y"), "trajectory.y");
  const auto yaw = a.numbers(to.Get("yaw"), "trajectory.yaw");
  if (t.empty()) a.fail("trajectory.t needs at least one timestamp");
  if (t.size() > 100000) a.fail("trajectory has more than 100000 frames");
  if (x.size() != t.size() || y.size() != t.size() || yaw.size() != t.size()) {
    a.fail("trajectory.t, x, y and yaw must have the same length (got " + std::to_string(t.size()) + ", " + std::to_string(x.size()) +
                  ", " + std::to_string(y.size()) + ", " + std::to_string(yaw.size()) + ")");
  }
  for (size_t i = 0; i < t.size(); ++i) {
    if (i > 0 && !(t[i] > t[i - 1])) a.fail("trajectory.t must be strictly increasing (entry " + std::to_string(i) + ")");
    req->poses.push_back({t[i], x[i], y[i], yaw[i]});
  }

  // Camera.
  Napi::Object c = a.object(r, "camera", "request");
  a.known_keys(c, "camera", {"width", "height", "fx", "fy", "cx", "cy", "hfovDeg", "mountHeight", "pitchDeg"});
  Camera& cam = req->camera;
  cam.width = a.integer(c, "width", "camera", cam.width, 16, 8192);
  cam.height = a.integer(c, "height", "camera", cam.height, 16, 8192);
  if (!c.Get("fx").IsUndefined() && !c.Get("hfovDeg").IsUndefined()) a.fail("give camera.fx or camera.hfovDeg, not both");
  cam.fx = a.number(c, "fx", "camera", 0, 1, 1e6);
  cam.fy = a.number(c, "fy", "camera", 0, 1, 1e6);
  const double hfov = a.number(c, "hfovDeg", "camera", 0, 1, 170);
  if (hfov > 0) cam.fx = (cam.width / 2.0) / std::tan(hfov * 3.14159265358979323846 / 360.0);
  cam.cx = a.number(c, "cx", "camera", -1, -1e5, 1e5);
  cam.cy = a.number(c, "cy", "camera", -1, -1e5, 1e5);
  cam.mount_height = a.number(c, "mountHeight", "camera", cam.mount_height, 0.2, 10);
  cam.pitch_deg = a.number(c, "pitchDeg", "camera", cam.pitch_deg, -20, 30);

  // World.
  Napi::Object w = a.object(r, "world", "request");
  a.known_keys(w, "world",
             {"seed", "environment", "lanesPerDirection", "laneWidth", "egoLane", "laneWander", "sidewalkWidth", "buildingDensity",
              "poleSpacing", "textureContrast", "sunAzimuthDeg", "sunElevationDeg"});
  WorldOptions& wo = req->world;
  const double seed = a.number(w, "seed", "world", 0, 0, 4294967295.0);
  if (seed != std::floor(seed)) a.fail("world.seed must be an integer in [0, 2^32)");
  wo.seed = static_cast<uint32_t>(seed);
  Napi::Value envv = w.Get("environment");
  if (!envv.IsUndefined()) {
    const std::string e = envv.IsString() ? envv.As<Napi::String>().Utf8Value() : "";
    if (e == "urban") wo.environment = Environment::Urban;
    else if (e == "suburban") wo.environment = Environment::Suburban;
    else if (e == "highway") wo.environment = Environment::Highway;
    else if (e == "flat") wo.environment = Environment::Flat;
    else a.fail("world.environment must be one of 'urban', 'suburban', 'highway', 'flat'");
  }
  wo.lanes_per_direction = a.integer(w, "lanesPerDirection", "world", 0, 0, 4);
  wo.lane_width = a.number(w, "laneWidth", "world", wo.lane_width, 2.5, 5);
  wo.ego_lane = a.integer(w, "egoLane", "world", 0, 0, 3);
  if (wo.lanes_per_direction > 0 && wo.ego_lane >= wo.lanes_per_direction) a.fail("world.egoLane must be below world.lanesPerDirection");
  wo.lane_wander = a.number(w, "laneWander", "world", wo.lane_wander, 0, 2);
  wo.sidewalk_width = a.number(w, "sidewalkWidth", "world", wo.sidewalk_width, 0.5, 10);
  wo.building_density = a.number(w, "buildingDensity", "world", -1, 0, 1);
  wo.pole_spacing = a.number(w, "poleSpacing", "world", -1, 3, 500);
  wo.texture_contrast = a.number(w, "textureContrast", "world", 1, 0, 3);
  wo.sun_azimuth_deg = a.number(w, "sunAzimuthDeg", "world", -1, 0, 359.999999);
  wo.sun_elevation_deg = a.number(w, "sunElevationDeg", "world", -1, 5, 90);

  // Photometric.
  Napi::Object p = a.object(r, "photometric", "request");
  a.known_keys(p, "photometric", {"noise", "exposure", "blurSamples", "shutter"});
  Photometric& ph = req->photometric;
  ph.noise = a.number(p, "noise", "photometric", 0, 0, 50);
  ph.exposure = a.number(p, "exposure", "photometric", 0, 0, 1);
  ph.blur_samples = a.integer(p, "blurSamples", "photometric", 1, 1, 16);
  ph.shutter = a.number(p, "shutter", "photometric", 0.5, 0, 2);

  // Markers.
  Napi::Value mv = r.Get("markers");
  if (!mv.IsUndefined()) {
    if (!mv.IsArray()) a.fail("request.markers must be an array of {x, y, z, radius?, value?}");
    auto ma = mv.As<Napi::Array>();
    if (ma.Length() > 1000) a.fail("request.markers: at most 1000 markers");
    for (uint32_t i = 0; i < ma.Length(); ++i) {
      const std::string where = "markers[" + std::to_string(i) + "]";
      Napi::Value e = ma.Get(i);
      if (!e.IsObject() || e.IsArray()) a.fail(where + " must be an object {x, y, z, radius?, value?}");
      Napi::Object mo = e.As<Napi::Object>();
      a.known_keys(mo, where, {"x", "y", "z", "radius", "value"});
      for (const char* k : {"x", "y", "z"})
        if (mo.Get(k).IsUndefined()) a.fail(where + "." + k + " is required");
      Marker m;
      m.x = a.number(mo, "x", where, 0, -1e6, 1e6);
      m.y = a.number(mo, "y", where, 0, -1e6, 1e6);
      m.z = a.number(mo, "z", where, 0, -1e4, 1e4);
      m.radius = a.number(mo, "radius", where, 0.1, 1e-4, 100);
      m.value = a.number(mo, "value", where, 255, 0, 255);
      req->markers.push_back(m);
    }
  }

  // Output.
  Napi::Object o = a.object(r, "output", "request");
  a.known_keys(o, "output", {"pixels", "jpeg", "jpegQuality", "videoPath", "videoFps"});
  OutputOptions& out = req->output;
  out.pixels = a.boolean(o, "pixels", "output", true);
  out.jpeg = a.boolean(o, "jpeg", "output", false);
  out.jpeg_quality = a.integer(o, "jpegQuality", "output", 90, 1, 100);
  Napi::Value vp = o.Get("videoPath");
  if (!vp.IsUndefined()) {
    if (!vp.IsString() || vp.As<Napi::String>().Utf8Value().empty()) a.fail("output.videoPath must be a non-empty string");
    out.video_path = vp.As<Napi::String>().Utf8Value();
  }
  out.video_fps = a.number(o, "videoFps", "output", 10, 0.1, 240);
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

bool run(const Request& req, Result& out, napi::Failure& error) {
  return napi::guarded<InputError>("renderClip", [&] { out = render_clip(req); }, error);
}

Napi::Value RenderClip(const Napi::CallbackInfo& info) {
  return napi::call_sync<Request, Result>(info, parse, run, to_js);
}

Napi::Value RenderClipAsync(const Napi::CallbackInfo& info) {
  return napi::queue_call<Request, Result>(info, instance(info.Env()).pool, "egogeo.renderClip", parse, run, to_js);
}

/// writeMp4(path, frames, fps): 8-bit grey frames {data, width, height} (all one size) → an mp4
/// (MPEG-4 part 2, 'mp4v', as the renderer's `videoPath` writes), written under a temporary name and
/// renamed when complete. Synchronous: a test fixture's or a tool's few frames.
Napi::Value WriteMp4(const Napi::CallbackInfo& info) {
  const napi::Args a(info.Env(), "writeMp4");
  if (info.Length() < 3 || !info[0].IsString() || !info[1].IsArray() || !info[2].IsNumber()) a.fail("expected (path, frames, fps) with frames an array of {data, width, height} 8-bit grey buffers");
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  if (path.empty()) a.fail("path is empty");
  const double fps = info[2].As<Napi::Number>().DoubleValue();
  if (!(fps >= 0.1 && fps <= 240)) a.fail("fps must be in [0.1, 240], got " + std::to_string(fps));
  auto fa = info[1].As<Napi::Array>();
  if (fa.Length() == 0) a.fail("frames is empty");
  struct Frame {
    const uint8_t* data;
  };
  std::vector<Frame> frames;
  int width = 0, height = 0;
  for (uint32_t i = 0; i < fa.Length(); ++i) {
    const std::string where = "frames[" + std::to_string(i) + "]";
    Napi::Value f = fa.Get(i);
    if (!f.IsObject() || f.IsArray()) a.fail(where + " must be an object {data, width, height}");
    Napi::Object fo = f.As<Napi::Object>();
    Napi::Value data = fo.Get("data");
    if (!data.IsTypedArray() || data.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) a.fail(where + ".data must be a Uint8Array/Buffer of 8-bit greyscale pixels");
    const double wd = a.number(fo, "width", where, 0, 16, 8192, true), hd = a.number(fo, "height", where, 0, 16, 8192, true);
    if (wd != std::floor(wd) || hd != std::floor(hd)) a.fail(where + ": width and height must be integers");
    const int w = static_cast<int>(wd), h = static_cast<int>(hd);
    if (w % 2 || h % 2) a.fail(where + ": width and height must be even (the encoder's 4:2:0 chroma), got " + std::to_string(w) + "x" + std::to_string(h));
    if (i == 0) width = w, height = h;
    else if (w != width || h != height) a.fail(where + " is " + std::to_string(w) + "x" + std::to_string(h) + ", frames[0] " + std::to_string(width) + "x" + std::to_string(height));
    auto d = data.As<Napi::Uint8Array>();
    if (d.ByteLength() != static_cast<size_t>(w) * static_cast<size_t>(h)) a.fail(where + ".data has " + std::to_string(d.ByteLength()) + " bytes, expected width*height = " + std::to_string(w * h));
    frames.push_back({d.Data()});
  }
  const std::string tmp = path + ".part";
  try {
    Mp4Writer out(tmp, width, height, fps);
    for (const Frame& f : frames) out.write(f.data);
    out.finish();
  } catch (const std::exception& e) {
    std::remove(tmp.c_str());
    a.fail(e.what());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    a.fail("cannot rename " + tmp + " to " + path);
  }
  return info.Env().Undefined();
}

}  // namespace

void register_exports(Napi::Env env, Napi::Object exports) {
  exports.Set("writeMp4", Napi::Function::New(env, WriteMp4, "writeMp4"));
  exports.Set("renderClip", Napi::Function::New(env, RenderClip, "renderClip"));
  exports.Set("renderClipAsync", Napi::Function::New(env, RenderClipAsync, "renderClipAsync"));
}

}  // namespace egogeo::render
