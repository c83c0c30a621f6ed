// The analytic street world of one clip, built once from the trajectory and the seed:
//  - a road centreline that follows the ego path (offset to the ego's lane, with a slow random
//    lateral wander) and runs on straight beyond both ends of the clip;
//  - a top-down grid of Frenet coordinates (s along the road, d left of the centre) around it,
//    from which the ground's material is decided per pixel (asphalt, markings, curb, sidewalk,
//    verge);
//  - buildings (rectangular footprints, vertical textured walls) and poles (vertical cylinders)
//    placed beside the road where they keep clear of it.
// Coordinates are local: world metres minus `origin` (the first pose), so floats stay precise.
#pragma once

#include "texture.h"
#include "types.h"

#include <vector>

namespace egogeo::render {

struct Vec2 {
  double x = 0, y = 0;
};
inline Vec2 operator+(Vec2 a, Vec2 b) { return {a.x + b.x, a.y + b.y}; }
inline Vec2 operator-(Vec2 a, Vec2 b) { return {a.x - b.x, a.y - b.y}; }
inline Vec2 operator*(Vec2 a, double k) { return {a.x * k, a.y * k}; }
inline double dot(Vec2 a, Vec2 b) { return a.x * b.x + a.y * b.y; }
inline double cross(Vec2 a, Vec2 b) { return a.x * b.y - a.y * b.x; }

/// One vertical wall: the segment p0 -> p1 seen from its outward side (outward normal = the
/// segment direction turned clockwise), `u0` its texture coordinate at p0 (metres).
struct Wall {
  Vec2 p0, p1;
  double u0 = 0;
  double top = 10;      // height (m)
  int building = 0;     // index into World::buildings
  float shade = 1;      // sun lighting factor
};

struct Building {
  int style = 0;        // index into TextureSet::facade, or -1 for foliage
  float gain = 1, bias = 0;
  float v_offset = 0;   // texture offset (m) so windows don't line up across buildings
};

struct Pole {
  Vec2 c;
  double radius = 0.1, top = 5;
  int style = 0;        // 0 plain, 1 banded
  float base = 150;     // grey level
};

/// Frenet coordinates on a regular top-down grid (bilinear lookup). Cells farther than the
/// stamping radius from the road hold d = +/-FAR (the sign of their nearest stamped neighbour).
struct FrenetGrid {
  static constexpr float FAR = 1000.0f;
  double x0 = 0, y0 = 0, cell = 0.5, inv_cell = 2;
  int nx = 0, ny = 0;
  std::vector<float> s, d;  // ny rows of nx
  /// Bilinear (s, d) at local world (x, y); outside the grid: d = FAR.
  void lookup(double x, double y, float& so, float& dout) const;
};

struct World {
  WorldOptions opt;
  Vec2 origin;                    // world coordinates of local (0, 0)
  std::vector<Vec2> centre;       // road centreline, 1 m steps (local)
  std::vector<Vec2> tangent;      // unit tangent per centreline point
  double road_half = 3.5;         // centre to road edge (m)
  double curb = 0.25;             // curb width (m)
  double sidewalk = 3.0;          // sidewalk width (m), beyond the curb
  std::vector<double> marking_d;  // lateral positions of lane markings (m)
  std::vector<bool> marking_dashed;
  double dash_on = 3, dash_period = 9;  // dashed lines: on/period along s (m)
  FrenetGrid grid;
  std::vector<Wall> walls;
  std::vector<Building> buildings;
  std::vector<Pole> poles;
  TextureSet tex;
  Vec2 sun;                       // horizontal unit vector towards the sun
  double sun_elevation = 0.7;     // radians
  float sky_horizon = 205, sky_zenith = 150, haze = 190;
  double haze_distance = 700;     // m: 63% haze at this distance
  std::vector<float> haze_lut;    // 1 - exp(-lambda / haze_distance) at lambda = i / haze_lut_scale
  double haze_lut_scale = 1;

  /// Haze fraction at distance `lambda` (m).
  float haze_at(float lambda) const {
    const float f = lambda * static_cast<float>(haze_lut_scale);
    const int i = f < static_cast<float>(haze_lut.size() - 1) ? static_cast<int>(f) : static_cast<int>(haze_lut.size() - 1);
    return haze_lut[i];
  }
};

/// Builds the world for a clip (validates nothing: render_clip does that first).
World build_world(const std::vector<Pose>& poses, const WorldOptions& opt);

}  // namespace egogeo::render
