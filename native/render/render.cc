// One clip: validate, build the world once, then per frame render every sub-frame view row by row,
// apply exposure and noise, and encode.
//
// JPEG encoding uses libjpeg(-turbo) directly (encode.cc), inside this call on the rendered buffer.
// Measured at 1280x720 greyscale, quality 90, one core of the 2-core dev box (bench/render.mjs):
// ~1.9 ms a frame (as cv::imencode, which it replaced), sharp (libvips + mozjpeg, prebuilt) ~9 ms a
// frame plus a copy of each raw frame into JS — so libjpeg is the default and sharp the
// alternative (`egogeo synth --encoder sharp`).
#include "encode.h"
#include "raster.h"
#include "types.h"
#include "world.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>

namespace egogeo::render {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

constexpr double kPi = 3.14159265358979323846;

void check(bool ok, const std::string& msg) {
  if (!ok) throw InputError(msg);
}

void validate(const Request& r) {
  check(!r.poses.empty(), "poses: at least one pose is required");
  for (size_t i = 0; i < r.poses.size(); ++i) {
    const Pose& p = r.poses[i];
    check(std::isfinite(p.t) && std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.yaw),
          "poses[" + std::to_string(i) + "]: t, x, y and yaw must be finite");
    check(std::fabs(p.x) < 1e6 && std::fabs(p.y) < 1e6, "poses[" + std::to_string(i) + "]: x and y must be within 1e6 m");
    if (i > 0) check(p.t > r.poses[i - 1].t, "poses: timestamps must be strictly increasing (entry " + std::to_string(i) + ")");
  }
  const Camera& c = r.camera;
  check(c.width >= 16 && c.width <= 8192 && c.height >= 16 && c.height <= 8192, "camera: width and height must be in [16, 8192]");
  check(c.fx >= 0 && c.fy >= 0 && c.fx < 1e6 && c.fy < 1e6, "camera: fx and fy must be positive (or 0 for 0.9 W)");
  check(c.mount_height >= 0.2 && c.mount_height <= 10, "camera: height must be in [0.2, 10] m");
  check(c.pitch_deg >= -20 && c.pitch_deg <= 30, "camera: pitchDeg must be in [-20, 30]");
  const CameraModel cam(c);
  for (int v : {0, c.height}) {
    check(cam.zl[v] > 0.05, "camera: the field of view plus pitch reaches past 87 degrees from the horizon");
  }
  const WorldOptions& w = r.world;
  check(w.lanes_per_direction >= 0 && w.lanes_per_direction <= 4, "world: lanesPerDirection must be in [0, 4]");
  check(w.lane_width >= 2.5 && w.lane_width <= 5, "world: laneWidth must be in [2.5, 5] m");
  check(w.ego_lane >= 0 && w.ego_lane < std::max(1, w.lanes_per_direction == 0 ? 2 : w.lanes_per_direction),
        "world: egoLane must be a lane of the ego's direction");
  check(w.lane_wander >= 0 && w.lane_wander <= 2, "world: laneWander must be in [0, 2] m");
  check(w.sidewalk_width >= 0.5 && w.sidewalk_width <= 10, "world: sidewalkWidth must be in [0.5, 10] m");
  check(w.building_density <= 1, "world: buildingDensity must be in [0, 1]");
  check(w.pole_spacing < 0 || (w.pole_spacing >= 3 && w.pole_spacing <= 500), "world: poleSpacing must be in [3, 500] m");
  check(w.texture_contrast >= 0 && w.texture_contrast <= 3, "world: textureContrast must be in [0, 3]");
  check(w.sun_azimuth_deg < 360, "world: sunAzimuthDeg must be in [0, 360)");
  check(w.sun_elevation_deg < 0 || (w.sun_elevation_deg >= 5 && w.sun_elevation_deg <= 90), "world: sunElevationDeg must be in [5, 90]");
  const Photometric& p = r.photometric;
  check(p.noise >= 0 && p.noise <= 50, "photometric: noise must be in [0, 50]");
  check(p.exposure >= 0 && p.exposure <= 1, "photometric: exposure must be in [0, 1]");
  check(p.blur_samples >= 1 && p.blur_samples <= 16, "photometric: blurSamples must be an integer in [1, 16]");
  check(p.shutter >= 0 && p.shutter <= 2, "photometric: shutter must be in [0, 2]");
  for (size_t i = 0; i < r.markers.size(); ++i) {
    const Marker& m = r.markers[i];
    check(std::isfinite(m.x) && std::isfinite(m.y) && std::isfinite(m.z) && m.radius > 0 && std::isfinite(m.radius),
          "markers[" + std::to_string(i) + "]: x, y, z must be finite and radius positive");
    check(m.value >= 0 && m.value <= 255, "markers[" + std::to_string(i) + "]: value must be in [0, 255]");
  }
  check(r.output.jpeg_quality >= 1 && r.output.jpeg_quality <= 100, "output: jpegQuality must be in [1, 100]");
  check(r.output.video_fps > 0 && r.output.video_fps <= 240, "output: videoFps must be in (0, 240]");
}

/// Pose at time t: linear in x, y and (unwrapped) yaw between the given poses, extrapolated at the ends.
Pose pose_at(const std::vector<Pose>& ps, double t) {
  if (ps.size() == 1) return ps[0];
  size_t i = 0;
  while (i + 2 < ps.size() && ps[i + 1].t < t) ++i;
  const Pose &a = ps[i], &b = ps[i + 1];
  const double f = (t - a.t) / (b.t - a.t);
  double dy = std::remainder(b.yaw - a.yaw, 2 * kPi);
  return {t, a.x + (b.x - a.x) * f, a.y + (b.y - a.y) * f, a.yaw + dy * f};
}

std::vector<double> exposure_gains(const Request& r) {
  std::vector<double> g(r.poses.size(), 1.0);
  if (r.photometric.exposure <= 0) return g;
  Rng rng(r.world.seed, 77);
  const double rho = 0.85, k = std::sqrt(1 - rho * rho);
  double z = rng.normal();
  for (size_t i = 0; i < g.size(); ++i) {
    if (i > 0) z = rho * z + k * rng.normal();
    g[i] = std::exp(r.photometric.exposure * z);
  }
  return g;
}

}  // namespace

Result render_clip(const Request& req) {
  validate(req);
  Result res;
  const CameraModel cam(req.camera);
  res.width = cam.width;
  res.height = cam.height;
  res.fx = cam.fx;
  res.fy = cam.fy;
  res.cx = cam.cx;
  res.cy = cam.cy;

  auto t0 = Clock::now();
  const World world = build_world(req.poses, req.world);
  res.ms.world = ms_since(t0);
  res.gains = exposure_gains(req);

  const int W = cam.width, H = cam.height;
  const int S = req.photometric.blur_samples;
  const size_t n = req.poses.size();
  std::vector<View> views(S);
  RowScratch scratch;
  std::vector<float> row(W), acc(W);
  std::vector<uint8_t> img(static_cast<size_t>(W) * H);
  const float noise_scale = static_cast<float>(req.photometric.noise / 0.4082482904638631);  // triangular noise has std 1/sqrt(6)
  const uint32_t noise_seed = hash2(req.world.seed, 0x5eed);

  std::unique_ptr<Mp4Writer> video;
  if (!req.output.video_path.empty()) video = std::make_unique<Mp4Writer>(req.output.video_path, W, H, req.output.video_fps);

  for (size_t k = 0; k < n; ++k) {
    t0 = Clock::now();
    const double tk = req.poses[k].t;
    const double dt = n == 1 ? 0.1 : (k + 1 < n ? req.poses[k + 1].t - tk : tk - req.poses[k - 1].t);
    for (int j = 0; j < S; ++j) {
      const double off = S == 1 ? 0.0 : (static_cast<double>(j) / (S - 1) - 0.5) * req.photometric.shutter * dt;
      const Pose p = S == 1 ? req.poses[k] : pose_at(req.poses, tk + off);
      build_view(world, cam, p.x - world.origin.x, p.y - world.origin.y, p.yaw, views[j]);
    }
    const float gain = static_cast<float>(res.gains[k]) / static_cast<float>(S);
    const uint32_t frame_seed = hash2(noise_seed, static_cast<uint32_t>(k));
    for (int v = 0; v < H; ++v) {
      float* out = S == 1 ? acc.data() : row.data();
      if (S > 1) std::fill(acc.begin(), acc.end(), 0.0f);
      for (int j = 0; j < S; ++j) {
        render_row(world, cam, views[j], v, out, scratch);
        if (!req.markers.empty()) draw_markers(world, cam, views[j], req.markers, v, out);
        if (S > 1)
          for (int u = 0; u < W; ++u) acc[u] += row[u];
      }
      uint8_t* dst = img.data() + static_cast<size_t>(v) * W;
      if (noise_scale > 0) {
        const uint32_t row_seed = hash2(frame_seed, static_cast<uint32_t>(v));
        for (int u = 0; u < W; ++u) {
          const uint32_t hsh = hash32(row_seed + static_cast<uint32_t>(u) * 0x9e3779b9U);
          const float nz = (static_cast<float>(hsh & 0xffff) + static_cast<float>(hsh >> 16)) * (1.0f / 65536.0f) - 1.0f;
          const float x = acc[u] * gain + nz * noise_scale + 0.5f;
          dst[u] = static_cast<uint8_t>(x <= 0 ? 0 : (x >= 255 ? 255 : x));
        }
      } else {
        for (int u = 0; u < W; ++u) {
          const float x = acc[u] * gain + 0.5f;
          dst[u] = static_cast<uint8_t>(x <= 0 ? 0 : (x >= 255 ? 255 : x));
        }
      }
    }
    res.ms.render += ms_since(t0);

    if (req.output.jpeg) {
      t0 = Clock::now();
      res.jpegs.push_back(encode_jpeg_grey(img.data(), W, H, req.output.jpeg_quality));
      res.ms.encode += ms_since(t0);
    }
    if (video) {
      t0 = Clock::now();
      video->write(img.data());
      res.ms.video += ms_since(t0);
    }
    if (req.output.pixels) res.pixels.push_back(img);
  }
  if (video) {
    t0 = Clock::now();
    video->finish();
    res.ms.video += ms_since(t0);
  }
  return res;
}

}  // namespace egogeo::render
