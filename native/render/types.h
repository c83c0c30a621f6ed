// The synthetic street renderer's public data: what one `render_clip` call takes and returns.
// Every option has its documented default here (the OpenCV `Params` idiom); the N-API layer
// (binding.cc) validates JS input against the ranges noted beside each field.
//
// Frames and signs (SPEC.md):
//  - world: planar ego frame, X forward, Y left, Z up, yaw counter-clockwise positive (metres,
//    seconds, radians); the road surface is the plane Z = 0;
//  - camera: x right, y down, z forward (OpenCV), mounted `height` metres above the road at the
//    pose's (X, Y), looking along the pose's yaw, tilted down by `pitch_deg` (no roll);
//  - pixels: OpenCV convention, pixel (i, j) has its centre at u = i, v = j.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace egogeo::render {

/// A failure caused by the caller's input; the addon turns it into a JS Error with this message.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Pinhole camera. fx = 0 means the reference baselines' assumption fx = fy = 0.9 W with the
/// principal point at (W/2, H/2) (the VO engine's default, so an un-told VO run is exact).
struct Camera {
  int width = 1280;           // [16, 8192]
  int height = 720;           // [16, 8192]
  double fx = 0, fy = 0;      // pixels; 0 = 0.9 W
  double cx = -1, cy = -1;    // pixels; < 0 = W/2, H/2
  double mount_height = 1.5;  // metres above the road, [0.2, 10]
  double pitch_deg = 0;       // downward tilt in degrees (positive looks down), [-20, 30]
};

enum class Environment { Urban, Suburban, Highway, Flat };

/// The procedural world. Everything random in it is a pure function of `seed`.
struct WorldOptions {
  uint32_t seed = 0;
  Environment environment = Environment::Urban;  // Flat: untextured ground and sky (tests)
  int lanes_per_direction = 1;   // [1, 4]; 0 = environment default (urban 1, suburban 1, highway 2)
  double lane_width = 3.5;       // metres, [2.5, 5]
  int ego_lane = 0;              // lane of the ego path counted from the right edge, [0, lanes-1]
  double lane_wander = 0.25;     // amplitude (m) of the road centreline's slow lateral drift off the path, [0, 2]
  double sidewalk_width = 3.0;   // metres, [0.5, 10]
  double building_density = -1;  // fraction of frontage with buildings, [0, 1]; < 0 = environment default
  double pole_spacing = -1;      // mean metres between poles on each side, [3, 500]; < 0 = default
  double texture_contrast = 1.0; // scales every texture's deviation from its mean, [0, 3]
  double sun_azimuth_deg = -1;   // [0, 360); < 0 = from the seed
  double sun_elevation_deg = -1; // [5, 90]; < 0 = from the seed
};

/// Optional photometric effects (all off by default).
struct Photometric {
  double noise = 0;        // std-dev of additive per-pixel noise in grey levels, [0, 50]
  double exposure = 0;     // std-dev per frame of a smooth log-gain random walk, [0, 1]
  int blur_samples = 1;    // sub-frame renders averaged per frame (motion blur), [1, 16]
  double shutter = 0.5;    // exposure time as a fraction of the frame interval, [0, 2]
};

/// A bright or dark sphere drawn over the scene (anti-aliased, 4x4 sub-samples per pixel) at a
/// known world point: lets tests check the projection to sub-pixel accuracy.
struct Marker {
  double x = 0, y = 0, z = 0;  // world metres (Z up)
  double radius = 0.1;         // metres, > 0
  double value = 255;          // grey level, [0, 255]
};

struct OutputOptions {
  bool pixels = true;          // return the raw 8-bit greyscale frames
  bool jpeg = false;           // return JPEG files (libjpeg-turbo, encode.cc)
  int jpeg_quality = 90;       // [1, 100]
  std::string video_path;      // non-empty: also write an mp4 (FFmpeg, MPEG-4 part 2 'mp4v') here
  double video_fps = 10;       // (0, 240]
};

/// One frame's pose: planar position and yaw at time t.
struct Pose {
  double t = 0, x = 0, y = 0, yaw = 0;
};

struct Request {
  std::vector<Pose> poses;     // one per frame, strictly increasing t, at least 1
  Camera camera;
  WorldOptions world;
  Photometric photometric;
  std::vector<Marker> markers;
  OutputOptions output;
};

struct Timing {
  double world = 0, render = 0, encode = 0, video = 0;
};

struct Result {
  int width = 0, height = 0;
  double fx = 0, fy = 0, cx = 0, cy = 0;
  std::vector<std::vector<uint8_t>> pixels;  // per frame, width*height bytes (output.pixels)
  std::vector<std::vector<uint8_t>> jpegs;   // per frame (output.jpeg)
  std::vector<double> gains;                 // exposure gain applied per frame
  Timing ms;
};

/// Renders every frame of a clip. Throws InputError for bad input (validated again here so the
/// C++ API is safe on its own), std::runtime_error for failures such as an unwritable video.
Result render_clip(const Request& req);

}  // namespace egogeo::render
