// baselineSignals({method, frames} | {method, video, frameIndices}) → the method's per-pair signals
// ({yawDeg, dispMag} for 'vo-proxy', {turnScore, expScore, motionMag} for 'flow-heuristic') as
// Float64Arrays. Frames are image paths, grey as the reference sees them (JPEGs decoded to BGR and
// converted by cvtColor, as cv2.imread + cvtColor does); a video's frames are its decoder's grey.
// Every call owns its request; no state is shared between calls or threads.
#include "binding.h"

#include "proxy.h"

#include "../instance.h"
#include "../napi_util.h"
#include "../render/encode.h"
#include "../vo/decode/frame_decode.h"
#include "../vo/types.h"
#include "../vo/decode/video.h"

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace egogeo::baselines {
namespace {

struct Request {
  bool vo_proxy = true;
  std::vector<std::string> frames;
  std::string video;
  std::vector<int> frame_indices;
};

struct Output {
  VoProxySignals vo;
  FlowSignals flow;
  bool vo_proxy = true;
  int frames = 0;
};

std::unique_ptr<Request> parse(const Napi::CallbackInfo& info) {
  const napi::Args a(info.Env(), "baselineSignals");
  if (info.Length() < 1 || !info[0].IsObject()) a.fail("expected ({method, frames} or {method, video, frameIndices})");
  const Napi::Object o = info[0].As<Napi::Object>();
  a.known_keys(o, "request", {"method", "frames", "video", "frameIndices"});
  auto req = std::make_unique<Request>();
  req->vo_proxy = a.choice(o, "method", "request", "", {"vo-proxy", "flow-heuristic"}) == "vo-proxy";
  const Napi::Value f = o.Get("frames"), v = o.Get("video");
  if (f.IsUndefined() == v.IsUndefined()) a.fail("request needs exactly one of frames (image paths) and video (a path)");
  if (!f.IsUndefined()) {
    if (!f.IsArray()) a.fail("request.frames must be an array of image paths");
    const auto arr = f.As<Napi::Array>();
    if (arr.Length() < 2) a.fail("request.frames needs at least 2 frames, got " + std::to_string(arr.Length()));
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      const Napi::Value e = arr.Get(i);
      if (!e.IsString()) a.fail("request.frames[" + std::to_string(i) + "] must be a path (string)");
      req->frames.push_back(e.As<Napi::String>().Utf8Value());
    }
  } else {
    if (!v.IsString()) a.fail("request.video must be a path (string)");
    req->video = v.As<Napi::String>().Utf8Value();
    const Napi::Value idx = o.Get("frameIndices");
    if (!idx.IsUndefined()) {
      for (double d : a.numbers(idx, "request.frameIndices")) {
        if (d < 0 || d != static_cast<int>(d)) a.fail("request.frameIndices must be non-negative integers");
        req->frame_indices.push_back(static_cast<int>(d));
      }
    }
  }
  return req;
}

bool run(const Request& req, Output& out, napi::Failure& error) {
  return napi::guarded<vo::InputError>("baselineSignals", [&] {
    std::vector<cv::Mat> grey;
    if (req.video.empty()) {
      for (size_t i = 0; i < req.frames.size(); ++i) {
        vo::FrameSource src;
        src.path = req.frames[i];
        grey.push_back(vo::decode_frame(src, i, 1, vo::GreyPath::OpenCvBgr).img);
        if (grey.back().size() != grey.front().size()) throw vo::InputError("frame " + std::to_string(i) + ": '" + src.path + "' differs in size from frame 0");
      }
    } else {
      vo::DecodedVideo d = vo::decode_video(req.video, vo::GreyPath::OpenCvBgr);
      if (req.frame_indices.empty()) {
        grey = std::move(d.frames);
      } else {
        for (int k : req.frame_indices) {
          if (k >= static_cast<int>(d.frames.size())) throw vo::InputError("'" + req.video + "' has " + std::to_string(d.frames.size()) + " frames, frame " + std::to_string(k) + " was asked for");
          grey.push_back(d.frames[static_cast<size_t>(k)]);
        }
      }
      if (grey.size() < 2) throw vo::InputError("'" + req.video + "': fewer than 2 frames");
    }
    out.frames = static_cast<int>(grey.size());
    out.vo_proxy = req.vo_proxy;
    if (req.vo_proxy) out.vo = vo_proxy_signals(grey);
    else out.flow = flow_signals(grey);
  }, error);
}

Napi::Float64Array array(Napi::Env env, const std::vector<double>& v) {
  auto a = Napi::Float64Array::New(env, v.size());
  std::copy(v.begin(), v.end(), a.Data());
  return a;
}

Napi::Object to_js(Napi::Env env, Output& out) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("frames", out.frames);
  if (out.vo_proxy) {
    o.Set("yawDeg", array(env, out.vo.yaw_deg));
    o.Set("dispMag", array(env, out.vo.disp_mag));
  } else {
    o.Set("turnScore", array(env, out.flow.turn_score));
    o.Set("expScore", array(env, out.flow.exp_score));
    o.Set("motionMag", array(env, out.flow.motion_mag));
  }
  return o;
}

Napi::Value BaselineSignals(const Napi::CallbackInfo& info) { return napi::call_sync<Request, Output>(info, parse, run, to_js); }

Napi::Value BaselineSignalsAsync(const Napi::CallbackInfo& info) {
  return napi::queue_call<Request, Output>(info, instance(info.Env()).pool, "egogeo.baselineSignals", parse, run, to_js);
}

/// referenceFrames({video, frameIndices, paths}): the frames of a video as the reference extracts them
/// for a VLM (`extract_video_frames`: VideoCapture's BGR, cv2.imencode(".jpg"), quality 95), written
/// to `paths` (one per index). Returns the number written.
struct FramesRequest {
  std::string video;
  std::vector<int> indices;
  std::vector<std::string> paths;
};
struct FramesOutput {
  int written = 0;
};

std::unique_ptr<FramesRequest> parse_frames(const Napi::CallbackInfo& info) {
  const napi::Args a(info.Env(), "referenceFrames");
  if (info.Length() < 1 || !info[0].IsObject()) a.fail("expected ({video, frameIndices, paths})");
  const Napi::Object o = info[0].As<Napi::Object>();
  a.known_keys(o, "request", {"video", "frameIndices", "paths"});
  auto req = std::make_unique<FramesRequest>();
  if (!o.Get("video").IsString()) a.fail("request.video must be a path (string)");
  req->video = o.Get("video").As<Napi::String>().Utf8Value();
  for (double d : a.numbers(o.Get("frameIndices"), "request.frameIndices")) {
    if (d < 0 || d != static_cast<int>(d)) a.fail("request.frameIndices must be non-negative integers");
    req->indices.push_back(static_cast<int>(d));
  }
  const Napi::Value p = o.Get("paths");
  if (!p.IsArray() || p.As<Napi::Array>().Length() != req->indices.size()) a.fail("request.paths must be an array of paths, one per frame index");
  for (uint32_t i = 0; i < p.As<Napi::Array>().Length(); ++i) {
    const Napi::Value e = p.As<Napi::Array>().Get(i);
    if (!e.IsString()) a.fail("request.paths[" + std::to_string(i) + "] must be a string");
    req->paths.push_back(e.As<Napi::String>().Utf8Value());
  }
  return req;
}

bool run_frames(const FramesRequest& req, FramesOutput& out, napi::Failure& error) {
  return napi::guarded<vo::InputError>("referenceFrames", [&] {
    const vo::DecodedVideo d = vo::decode_video(req.video, vo::GreyPath::OpenCvBgr, true);
    for (size_t i = 0; i < req.indices.size(); ++i) {
      const int k = req.indices[i];
      if (k >= static_cast<int>(d.frames.size())) throw vo::InputError("'" + req.video + "' has " + std::to_string(d.frames.size()) + " frames, frame " + std::to_string(k) + " was asked for");
      const cv::Mat& f = d.frames[static_cast<size_t>(k)];
      const std::vector<uint8_t> jpg = render::encode_jpeg_bgr(f.data, f.cols, f.rows, 95);
      std::ofstream os(req.paths[i], std::ios::binary);
      if (!os || !os.write(reinterpret_cast<const char*>(jpg.data()), static_cast<std::streamsize>(jpg.size()))) throw vo::InputError("cannot write '" + req.paths[i] + "'");
      ++out.written;
    }
  }, error);
}

Napi::Object frames_to_js(Napi::Env env, FramesOutput& out) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("written", out.written);
  return o;
}

Napi::Value ReferenceFrames(const Napi::CallbackInfo& info) { return napi::call_sync<FramesRequest, FramesOutput>(info, parse_frames, run_frames, frames_to_js); }

}  // namespace

void register_exports(Napi::Env env, Napi::Object exports) {
  exports.Set("referenceFrames", Napi::Function::New(env, ReferenceFrames, "referenceFrames"));
  exports.Set("baselineSignals", Napi::Function::New(env, BaselineSignals, "baselineSignals"));
  exports.Set("baselineSignalsAsync", Napi::Function::New(env, BaselineSignalsAsync, "baselineSignalsAsync"));
}

}  // namespace egogeo::baselines
