// World construction: centreline from the poses, Frenet grid, buildings, poles, textures.
#include "world.h"

#include <algorithm>
#include <cmath>

namespace egogeo::render {

void FrenetGrid::lookup(double x, double y, float& so, float& dout) const {
  const double gx = (x - x0) * inv_cell - 0.5, gy = (y - y0) * inv_cell - 0.5;
  if (!(gx >= 0 && gy >= 0 && gx < nx - 1 && gy < ny - 1)) {
    so = 0;
    dout = FAR;
    return;
  }
  const int ix = static_cast<int>(gx), iy = static_cast<int>(gy);
  const float fx = static_cast<float>(gx - ix), fy = static_cast<float>(gy - iy);
  const size_t i00 = static_cast<size_t>(iy) * nx + ix;
  const size_t i10 = i00 + 1, i01 = i00 + nx, i11 = i01 + 1;
  const float dt = d[i00] + (d[i10] - d[i00]) * fx, db = d[i01] + (d[i11] - d[i01]) * fx;
  const float st = s[i00] + (s[i10] - s[i00]) * fx, sb = s[i01] + (s[i11] - s[i01]) * fx;
  dout = dt + (db - dt) * fy;
  so = st + (sb - st) * fy;
}

namespace {

constexpr double kPi = 3.14159265358979323846;

/// Dense ego path (local coordinates) with the straight run-ins before and after the clip.
std::vector<Vec2> ego_path(const std::vector<Pose>& poses, Vec2 origin) {
  std::vector<Vec2> pts;
  const Pose& first = poses.front();
  const Pose& last = poses.back();
  const Vec2 d0{std::cos(first.yaw), std::sin(first.yaw)};
  const Vec2 p0{first.x - origin.x, first.y - origin.y};
  for (int k = 60; k >= 1; --k) pts.push_back(p0 - d0 * k);
  pts.push_back(p0);
  for (size_t i = 0; i + 1 < poses.size(); ++i) {
    const Vec2 a{poses[i].x - origin.x, poses[i].y - origin.y}, b{poses[i + 1].x - origin.x, poses[i + 1].y - origin.y};
    const double L = std::hypot(b.x - a.x, b.y - a.y);
    if (L < 1e-3) continue;
    // Cubic Hermite with the headings as tangents: a smooth curve through the poses.
    const Vec2 ma = Vec2{std::cos(poses[i].yaw), std::sin(poses[i].yaw)} * L;
    const Vec2 mb = Vec2{std::cos(poses[i + 1].yaw), std::sin(poses[i + 1].yaw)} * L;
    const int steps = std::max(1, static_cast<int>(std::ceil(L / 0.25)));
    for (int k = 1; k <= steps; ++k) {
      const double t = static_cast<double>(k) / steps, t2 = t * t, t3 = t2 * t;
      const double h00 = 2 * t3 - 3 * t2 + 1, h10 = t3 - 2 * t2 + t, h01 = -2 * t3 + 3 * t2, h11 = t3 - t2;
      pts.push_back(a * h00 + ma * h10 + b * h01 + mb * h11);
    }
  }
  const Vec2 d1{std::cos(last.yaw), std::sin(last.yaw)};
  const Vec2 p1 = pts.back();
  for (int k = 1; k <= 320; ++k) pts.push_back(p1 + d1 * k);
  return pts;
}

/// Resamples a polyline at `step` metres of arc length.
std::vector<Vec2> resample(const std::vector<Vec2>& in, double step) {
  std::vector<Vec2> out{in.front()};
  double carry = 0;  // arc length since the last output point
  for (size_t i = 0; i + 1 < in.size(); ++i) {
    const Vec2 a = in[i], b = in[i + 1];
    const double L = std::hypot(b.x - a.x, b.y - a.y);
    if (L <= 0) continue;
    double pos = step - carry;
    while (pos <= L) {
      out.push_back(a + (b - a) * (pos / L));
      pos += step;
    }
    carry = L - (pos - step);
  }
  if (out.size() < 2) out.push_back(in.back());
  return out;
}

std::vector<Vec2> tangents(const std::vector<Vec2>& c) {
  std::vector<Vec2> t(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    const Vec2 a = c[i == 0 ? 0 : i - 1], b = c[std::min(i + 1, c.size() - 1)];
    Vec2 d = b - a;
    const double n = std::hypot(d.x, d.y);
    t[i] = n > 0 ? d * (1 / n) : Vec2{1, 0};
  }
  return t;
}

void build_grid(World& w, double radius) {
  FrenetGrid& g = w.grid;
  double xmin = 1e300, xmax = -1e300, ymin = 1e300, ymax = -1e300;
  for (const Vec2& p : w.centre) {
    xmin = std::min(xmin, p.x);
    xmax = std::max(xmax, p.x);
    ymin = std::min(ymin, p.y);
    ymax = std::max(ymax, p.y);
  }
  xmin -= radius + 2;
  ymin -= radius + 2;
  xmax += radius + 2;
  ymax += radius + 2;
  // Half-metre cells, coarser only for very long paths (keeps the grid under ~4M cells).
  const double area = (xmax - xmin) * (ymax - ymin);
  g.cell = std::max(0.5, std::sqrt(area / 4.0e6));
  g.inv_cell = 1 / g.cell;
  g.x0 = xmin;
  g.y0 = ymin;
  g.nx = static_cast<int>(std::ceil((xmax - xmin) / g.cell)) + 1;
  g.ny = static_cast<int>(std::ceil((ymax - ymin) / g.cell)) + 1;
  const size_t n = static_cast<size_t>(g.nx) * g.ny;
  g.s.assign(n, 0.0f);
  g.d.assign(n, FrenetGrid::FAR);
  std::vector<float> best(n, static_cast<float>(radius));
  std::vector<uint8_t> stamped(n, 0);
  double s0 = 0;
  for (size_t j = 0; j + 1 < w.centre.size(); ++j) {
    const Vec2 a = w.centre[j], b = w.centre[j + 1], D = b - a;
    const double len2 = dot(D, D), len = std::sqrt(len2);
    if (len2 <= 0) continue;
    const int ix0 = std::max(0, static_cast<int>((std::min(a.x, b.x) - radius - g.x0) * g.inv_cell));
    const int ix1 = std::min(g.nx - 1, static_cast<int>((std::max(a.x, b.x) + radius - g.x0) * g.inv_cell) + 1);
    const int iy0 = std::max(0, static_cast<int>((std::min(a.y, b.y) - radius - g.y0) * g.inv_cell));
    const int iy1 = std::min(g.ny - 1, static_cast<int>((std::max(a.y, b.y) + radius - g.y0) * g.inv_cell) + 1);
    for (int iy = iy0; iy <= iy1; ++iy) {
      const double py = g.y0 + (iy + 0.5) * g.cell;
      for (int ix = ix0; ix <= ix1; ++ix) {
        const double px = g.x0 + (ix + 0.5) * g.cell;
        const Vec2 ap{px - a.x, py - a.y};
        const double t = std::clamp(dot(ap, D) / len2, 0.0, 1.0);
        const double ex = ap.x - D.x * t, ey = ap.y - D.y * t;
        const double dist = std::sqrt(ex * ex + ey * ey);
        const size_t i = static_cast<size_t>(iy) * g.nx + ix;
        if (dist < best[i]) {
          best[i] = static_cast<float>(dist);
          g.d[i] = static_cast<float>(cross(D, ap) >= 0 ? dist : -dist);
          g.s[i] = static_cast<float>(s0 + t * len);
          stamped[i] = 1;
        }
      }
    }
    s0 += len;
  }
  // Far cells next to stamped ones take the sign of their neighbour, so bilinear lookups at the
  // edge of the stamped band never cross d = 0.
  for (int iy = 0; iy < g.ny; ++iy) {
    for (int ix = 0; ix < g.nx; ++ix) {
      const size_t i = static_cast<size_t>(iy) * g.nx + ix;
      if (stamped[i]) continue;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          const int jx = ix + dx, jy = iy + dy;
          if (jx < 0 || jy < 0 || jx >= g.nx || jy >= g.ny) continue;
          const size_t j = static_cast<size_t>(jy) * g.nx + jx;
          if (stamped[j]) {
            g.d[i] = g.d[j] < 0 ? -FrenetGrid::FAR : FrenetGrid::FAR;
            g.s[i] = g.s[j];
          }
        }
      }
    }
  }
}

/// Centreline point, tangent and left normal at arc length s (clamped).
void frame_at(const World& w, const std::vector<double>& arc, double s, Vec2& p, Vec2& t, Vec2& n) {
  s = std::clamp(s, 0.0, arc.back());
  size_t j = static_cast<size_t>(std::upper_bound(arc.begin(), arc.end(), s) - arc.begin());
  j = std::clamp<size_t>(j, 1, arc.size() - 1);
  const double seg = arc[j] - arc[j - 1];
  const double f = seg > 0 ? (s - arc[j - 1]) / seg : 0;
  p = w.centre[j - 1] + (w.centre[j] - w.centre[j - 1]) * f;
  t = w.tangent[j - 1] + (w.tangent[j] - w.tangent[j - 1]) * f;
  const double nn = std::hypot(t.x, t.y);
  t = nn > 0 ? t * (1 / nn) : Vec2{1, 0};
  n = Vec2{-t.y, t.x};
}

/// True when every point of the outline keeps `clear` metres from the centreline.
bool keeps_clear(const World& w, const std::vector<Vec2>& outline, double clear) {
  for (size_t i = 0; i < outline.size(); ++i) {
    const Vec2 a = outline[i], b = outline[(i + 1) % outline.size()];
    const double L = std::hypot(b.x - a.x, b.y - a.y);
    const int steps = std::max(1, static_cast<int>(std::ceil(L / 0.75)));
    for (int k = 0; k <= steps; ++k) {
      const Vec2 p = a + (b - a) * (static_cast<double>(k) / steps);
      float s, d;
      w.grid.lookup(p.x, p.y, s, d);
      if (std::fabs(d) < clear) return false;
    }
  }
  return true;
}

float wall_shade(const World& w, Vec2 p0, Vec2 p1) {
  Vec2 e = p1 - p0;
  const double L = std::hypot(e.x, e.y);
  if (L <= 0) return 1;
  const Vec2 n{e.y / L, -e.x / L};  // outward
  const double lambert = std::max(0.0, dot(n, w.sun)) * std::cos(w.sun_elevation);
  return static_cast<float>(0.62 + 0.55 * lambert);
}

/// Adds a closed outline (counter-clockwise) as walls of one building.
void add_building(World& w, const std::vector<Vec2>& ccw, double top, const Building& b, double u0) {
  const int id = static_cast<int>(w.buildings.size());
  w.buildings.push_back(b);
  double u = u0;
  for (size_t i = 0; i < ccw.size(); ++i) {
    Wall wall;
    wall.p0 = ccw[i];
    wall.p1 = ccw[(i + 1) % ccw.size()];
    wall.u0 = u;
    wall.top = top;
    wall.building = id;
    wall.shade = wall_shade(w, wall.p0, wall.p1);
    w.walls.push_back(wall);
    u += std::hypot(wall.p1.x - wall.p0.x, wall.p1.y - wall.p0.y);
  }
}

struct Layout {
  double frontage_lo, frontage_hi, gap_lo, gap_hi, setback_lo, setback_hi, depth_lo, depth_hi, height_lo, height_hi;
  bool foliage;
};

void place_buildings(World& w, const std::vector<double>& arc, const Layout& L, double density, double clear, Rng& rng) {
  const double s_end = arc.back();
  for (int side : {+1, -1}) {
    double pos = rng.uniform(0, L.gap_hi);
    while (pos < s_end) {
      const double frontage = rng.uniform(L.frontage_lo, L.frontage_hi);
      const bool place = rng.unit() < density;
      const double setback = w.road_half + w.curb + w.sidewalk + rng.uniform(L.setback_lo, L.setback_hi);
      const double depth = rng.uniform(L.depth_lo, L.depth_hi);
      const double height = rng.uniform(L.height_lo, L.height_hi);
      Building b;
      b.style = L.foliage ? -1 : rng.below(4);
      b.gain = static_cast<float>(rng.uniform(0.75, 1.2));
      b.bias = static_cast<float>(rng.uniform(-15, 15));
      b.v_offset = static_cast<float>(rng.uniform(0, 9.6));
      const double u0 = rng.uniform(0, 10.24);
      if (place) {
        Vec2 c, t, n;
        frame_at(w, arc, pos + frontage / 2, c, t, n);
        const Vec2 f = c + n * (side * setback);
        const Vec2 A = f - t * (frontage / 2), B = f + t * (frontage / 2);
        const Vec2 Ab = A + n * (side * depth), Bb = B + n * (side * depth);
        std::vector<Vec2> ccw = side > 0 ? std::vector<Vec2>{A, B, Bb, Ab} : std::vector<Vec2>{A, Ab, Bb, B};
        if (keeps_clear(w, ccw, clear)) add_building(w, ccw, height, b, u0);
      }
      pos += frontage + rng.uniform(L.gap_lo, L.gap_hi);
    }
  }
}

/// A low continuous wall (guard rail) at lateral offset `d`, facing the road.
void place_rail(World& w, double d, double height) {
  Building b;
  b.style = 2;
  b.gain = 0.95f;
  b.bias = 10;
  const int id = static_cast<int>(w.buildings.size());
  w.buildings.push_back(b);
  double u = 0;
  for (size_t j = 0; j + 2 < w.centre.size(); j += 2) {
    const Vec2 nj{-w.tangent[j].y, w.tangent[j].x}, nk{-w.tangent[j + 2].y, w.tangent[j + 2].x};
    const Vec2 a = w.centre[j] + nj * d, c = w.centre[j + 2] + nk * d;
    Wall wall;
    // Outward normal (segment direction turned clockwise) must face the road.
    wall.p0 = d > 0 ? a : c;
    wall.p1 = d > 0 ? c : a;
    wall.u0 = u;
    wall.top = height;
    wall.building = id;
    wall.shade = wall_shade(w, wall.p0, wall.p1);
    w.walls.push_back(wall);
    u += std::hypot(c.x - a.x, c.y - a.y);
  }
}

void place_poles(World& w, const std::vector<double>& arc, double spacing, double offset, double r_lo, double r_hi, double h_lo,
                 double h_hi, double clear, Rng& rng) {
  const double s_end = arc.back();
  for (int side : {+1, -1}) {
    double pos = rng.uniform(0, spacing);
    while (pos < s_end) {
      Pole p;
      Vec2 c, t, n;
      frame_at(w, arc, pos, c, t, n);
      p.c = c + n * (side * offset);
      p.radius = rng.uniform(r_lo, r_hi);
      p.top = rng.uniform(h_lo, h_hi);
      p.style = rng.unit() < 0.45 ? 1 : 0;
      p.base = static_cast<float>(rng.uniform(80, 200));
      float s, d;
      w.grid.lookup(p.c.x, p.c.y, s, d);
      if (std::fabs(d) >= clear) w.poles.push_back(p);
      pos += spacing * rng.uniform(0.5, 1.5);
    }
  }
}

}  // namespace

World build_world(const std::vector<Pose>& poses, const WorldOptions& opt) {
  World w;
  w.opt = opt;
  w.origin = {poses.front().x, poses.front().y};
  Rng rng(opt.seed, 1);
  const Environment env = opt.environment;
  int lanes = opt.lanes_per_direction;
  if (lanes <= 0) lanes = env == Environment::Highway ? 2 : 1;
  const int ego_lane = std::clamp(opt.ego_lane, 0, lanes - 1);
  w.road_half = lanes * opt.lane_width;
  w.sidewalk = env == Environment::Highway ? 0.0 : opt.sidewalk_width;
  w.curb = env == Environment::Highway ? 0.0 : 0.25;

  // Markings: lane lines between lanes (dashed), the centre line (dashed on two-lane roads, solid
  // double otherwise) and solid edge lines.
  for (int k = -(lanes - 1); k <= lanes - 1; ++k) {
    if (k == 0) continue;
    w.marking_d.push_back(k * opt.lane_width);
    w.marking_dashed.push_back(true);
  }
  if (lanes == 1) {
    w.marking_d.push_back(0);
    w.marking_dashed.push_back(true);
  } else {
    w.marking_d.push_back(0.12);
    w.marking_dashed.push_back(false);
    w.marking_d.push_back(-0.12);
    w.marking_dashed.push_back(false);
  }
  w.marking_d.push_back(w.road_half - 0.3);
  w.marking_dashed.push_back(false);
  w.marking_d.push_back(-(w.road_half - 0.3));
  w.marking_dashed.push_back(false);
  if (env == Environment::Highway) {
    w.dash_on = 6;
    w.dash_period = 18;
  }

  // Centreline: the ego path shifted left to the road's centre, plus a slow wander.
  const double lane_offset = lanes * opt.lane_width - (ego_lane + 0.5) * opt.lane_width;
  std::vector<Vec2> path = resample(ego_path(poses, w.origin), 1.0);
  std::vector<Vec2> tp = tangents(path);
  const double w1 = rng.uniform(110, 220), w2 = rng.uniform(45, 90), ph1 = rng.uniform(0, 2 * kPi), ph2 = rng.uniform(0, 2 * kPi);
  w.centre.resize(path.size());
  for (size_t j = 0; j < path.size(); ++j) {
    const double s = static_cast<double>(j);
    const double wander = opt.lane_wander * (0.6 * std::sin(2 * kPi * s / w1 + ph1) + 0.4 * std::sin(2 * kPi * s / w2 + ph2));
    w.centre[j] = path[j] + Vec2{-tp[j].y, tp[j].x} * (lane_offset + wander);
  }
  w.tangent = tangents(w.centre);
  std::vector<double> arc(w.centre.size(), 0.0);
  for (size_t j = 1; j < w.centre.size(); ++j) arc[j] = arc[j - 1] + std::hypot(w.centre[j].x - w.centre[j - 1].x, w.centre[j].y - w.centre[j - 1].y);

  // Sun and sky.
  const double az = opt.sun_azimuth_deg >= 0 ? opt.sun_azimuth_deg * kPi / 180 : rng.uniform(0, 2 * kPi);
  w.sun_elevation = opt.sun_elevation_deg >= 0 ? opt.sun_elevation_deg * kPi / 180 : rng.uniform(25, 65) * kPi / 180;
  w.sun = {std::cos(az), std::sin(az)};
  w.sky_horizon = static_cast<float>(rng.uniform(195, 225));
  w.sky_zenith = static_cast<float>(rng.uniform(135, 170));
  w.haze = w.sky_horizon - 10;
  w.haze_distance = rng.uniform(500, 900);
  w.haze_lut.resize(4096);
  w.haze_lut_scale = 4095.0 / (8 * w.haze_distance);
  for (size_t i = 0; i < w.haze_lut.size(); ++i) w.haze_lut[i] = static_cast<float>(1 - std::exp(-(i / w.haze_lut_scale) / w.haze_distance));

  if (env == Environment::Flat) return w;

  const double grid_radius = std::max(16.0, w.road_half + w.curb + w.sidewalk + 12.0);
  build_grid(w, grid_radius);
  w.tex = make_textures(opt.seed, opt.texture_contrast);

  const double clear_build = w.road_half + w.curb + std::min(w.sidewalk, 1.5);
  switch (env) {
    case Environment::Urban: {
      const double density = opt.building_density >= 0 ? opt.building_density : 0.85;
      place_buildings(w, arc, {8, 25, 0, 4, 0, 1.5, 8, 20, 8, 28, false}, density, clear_build, rng);
      const double spacing = opt.pole_spacing > 0 ? opt.pole_spacing : 18;
      place_poles(w, arc, spacing, w.road_half + w.curb + 0.5, 0.07, 0.16, 3, 9, w.road_half + w.curb + 0.2, rng);
      break;
    }
    case Environment::Suburban: {
      const double density = opt.building_density >= 0 ? opt.building_density : 0.6;
      place_buildings(w, arc, {8, 16, 4, 15, 3, 9, 8, 14, 5, 10, false}, density, clear_build, rng);
      place_buildings(w, arc, {20, 60, 5, 30, 25, 45, 15, 25, 8, 16, true}, 0.7, clear_build + 10, rng);
      const double spacing = opt.pole_spacing > 0 ? opt.pole_spacing : 22;
      place_poles(w, arc, spacing, w.road_half + w.curb + 0.5, 0.07, 0.14, 3, 8, w.road_half + w.curb + 0.2, rng);
      break;
    }
    case Environment::Highway: {
      const double density = opt.building_density >= 0 ? opt.building_density : 0.8;
      place_rail(w, w.road_half + 1.0, 0.8);
      place_rail(w, -(w.road_half + 1.0), 0.8);
      place_buildings(w, arc, {30, 120, 5, 40, 12, 35, 20, 30, 8, 18, true}, density, w.road_half + 8, rng);
      const double spacing = opt.pole_spacing > 0 ? opt.pole_spacing : 30;
      place_poles(w, arc, spacing, w.road_half + 0.6, 0.05, 0.08, 0.9, 1.3, w.road_half + 0.3, rng);
      place_poles(w, arc, spacing * 3, w.road_half + 2.5, 0.12, 0.2, 6, 10, w.road_half + 1.5, rng);
      break;
    }
    case Environment::Flat:
      break;
  }
  return w;
}

}  // namespace egogeo::render
