// Ray casting per row (see raster.h for the geometry).
#include "raster.h"

#include "../default_camera.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace egogeo::render {
namespace {

constexpr int kOversample = 4;      // azimuth-buffer entries per pixel (at the widest row)
constexpr int kAnchor = 8;          // pixels between exact Frenet lookups along a row
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kPaint = 228.0f;    // lane-marking grey level
constexpr float kMarkHalf = 0.075f; // half width of a lane marking (m)
constexpr int kMaxAniso = 8;        // ground texture samples along a pixel's depth footprint

inline float clamp01(float x) { return x < 0 ? 0 : (x > 1 ? 1 : x); }

/// Signed distance (along the pattern) to the edge of the 'on' part of a periodic pattern that is
/// on for x in [0, on) of every `period`: positive inside, negative outside.
inline float periodic_inside(float x, float on, float period) {
  x = std::fmod(x, period);
  if (x < 0) x += period;
  return x < on ? std::min(x, on - x) : -std::min(x - on, period - x);
}

/// Share of [x - w/2, x + w/2] covered by a periodic pattern that is on for [0, on) of every
/// `period`: its exact box filter (a pixel's footprint integrated, no aliasing).
inline float periodic_coverage(float x, float on, float period, float w) {
  auto cum = [&](float y) {  // measure of the on part in [0, y]
    const float k = std::floor(y / period);
    return k * on + std::min(y - k * period, on);
  };
  if (!(w > 1e-6f)) return periodic_inside(x, on, period) > 0 ? 1.0f : 0.0f;
  return clamp01((cum(x + 0.5f * w) - cum(x - 0.5f * w)) / w);
}

}  // namespace

CameraModel::CameraModel(const Camera& c) : width(c.width), height(c.height) {
  fx = c.fx > 0 ? c.fx : kDefaultFocalPerWidth * c.width;
  fy = c.fy > 0 ? c.fy : fx;
  cx = c.cx >= 0 ? c.cx : c.width / 2.0;
  cy = c.cy >= 0 ? c.cy : c.height / 2.0;
  h = c.mount_height;
  pitch = c.pitch_deg * 3.14159265358979323846 / 180.0;
  cp = std::cos(pitch);
  sp = std::sin(pitch);
  zl.resize(height + 1);
  b.resize(height + 1);
  for (int v = 0; v <= height; ++v) {
    const double yc = (v - cy) / fy;
    zl[v] = -sp * yc + cp;
    b[v] = (cp * yc + sp) / zl[v];
  }
}

void build_view(const World& w, const CameraModel& cam, double x, double y, double yaw, View& v) {
  v.x = x;
  v.y = y;
  v.yaw = yaw;
  v.fxw = std::cos(yaw);
  v.fyw = std::sin(yaw);
  v.rxw = std::sin(yaw);
  v.ryw = -std::cos(yaw);
  const double z_top = cam.zl[0], z_bot = cam.zl[cam.height - 1];
  const double xl = (0 - cam.cx) / cam.fx, xr = (cam.width - 1 - cam.cx) / cam.fx;
  const double a_lo = std::min({xl / z_top, xl / z_bot}), a_hi = std::max({xr / z_top, xr / z_bot});
  const double step = 1.0 / (cam.fx * std::max(z_top, z_bot) * kOversample);
  v.a_min = a_lo - 2 * step;
  v.inv_step = 1.0 / step;
  v.n = static_cast<int>(std::ceil((a_hi - a_lo) / step)) + 5;
  for (View::WallLayer& l : v.wl) {
    l.lam.assign(v.n, kInf);
    l.u.assign(v.n, 0.0f);
    l.du.assign(v.n, 0.0f);
    l.id.assign(v.n, -1);
  }
  View::WallLayer &l0 = v.wl[0], &l1 = v.wl[1];
  v.lam_p.assign(v.n, kInf);
  v.shade_p.assign(v.n, 1.0f);
  v.id_p.assign(v.n, -1);

  const double near = 0.1;
  for (size_t wi = 0; wi < w.walls.size(); ++wi) {
    const Wall& wall = w.walls[wi];
    const double e_x = wall.p1.x - wall.p0.x, e_y = wall.p1.y - wall.p0.y;
    // Back faces: the outward normal (e turned clockwise) must point towards the camera.
    if (e_y * (x - wall.p0.x) - e_x * (y - wall.p0.y) <= 0) continue;
    const double px0 = wall.p0.x - x, py0 = wall.p0.y - y, px1 = wall.p1.x - x, py1 = wall.p1.y - y;
    double F0 = px0 * v.fxw + py0 * v.fyw, R0 = px0 * v.rxw + py0 * v.ryw;
    double F1 = px1 * v.fxw + py1 * v.fyw, R1 = px1 * v.rxw + py1 * v.ryw;
    if (F0 < near && F1 < near) continue;
    const double len_full = std::hypot(e_x, e_y);
    double u0 = wall.u0, u1 = wall.u0 + len_full;
    if (F0 < near) {
      const double t = (near - F0) / (F1 - F0);
      R0 += (R1 - R0) * t;
      u0 += (u1 - u0) * t;
      F0 = near;
    } else if (F1 < near) {
      const double t = (near - F1) / (F0 - F1);
      R1 += (R0 - R1) * t;
      u1 += (u0 - u1) * t;
      F1 = near;
    }
    const double a0 = R0 / F0, a1 = R1 / F1;
    int k0 = static_cast<int>(std::ceil((std::min(a0, a1) - v.a_min) * v.inv_step));
    int k1 = static_cast<int>(std::floor((std::max(a0, a1) - v.a_min) * v.inv_step));
    k0 = std::max(k0, 0);
    k1 = std::min(k1, v.n - 1);
    if (k0 > k1) continue;
    const double dF = F1 - F0, dR = R1 - R0, len2 = dF * dF + dR * dR;
    if (len2 <= 0) continue;
    const double num = dF * R0 - dR * F0, du_dt = u1 - u0;
    auto u_at = [&](double a, double& lam) {
      lam = num / (dF * a - dR);
      const double t = ((lam - F0) * dF + (lam * a - R0) * dR) / len2;
      return u0 + t * du_dt;
    };
    for (int k = k0; k <= k1; ++k) {
      const double a = v.a_min + k / v.inv_step;
      double lam;
      const double u = u_at(a, lam);
      if (!(lam > 0) || lam >= l1.lam[k]) continue;
      double lam2;
      const double u2 = u_at(a + 1 / v.inv_step, lam2);
      View::WallLayer* dst = &l1;
      if (lam < l0.lam[k]) {  // the nearest wall so far moves back a layer
        l1.lam[k] = l0.lam[k];
        l1.u[k] = l0.u[k];
        l1.du[k] = l0.du[k];
        l1.id[k] = l0.id[k];
        dst = &l0;
      }
      dst->lam[k] = static_cast<float>(lam);
      dst->u[k] = static_cast<float>(u);
      dst->du[k] = static_cast<float>(std::fabs(u2 - u));
      dst->id[k] = static_cast<int32_t>(wi);
    }
  }

  const double sun_c = std::cos(w.sun_elevation);
  for (size_t pi = 0; pi < w.poles.size(); ++pi) {
    const Pole& p = w.poles[pi];
    const double px = p.c.x - x, py = p.c.y - y;
    const double F = px * v.fxw + py * v.fyw, R = px * v.rxw + py * v.ryw;
    if (F < p.radius + near) continue;
    const double dist = std::hypot(F, R);
    const double phi = std::atan2(R, F), delta = std::asin(std::min(1.0, p.radius / dist));
    if (std::fabs(phi) + delta > 1.5) continue;
    const double a0 = std::tan(phi - delta), a1 = std::tan(phi + delta);
    int k0 = std::max(0, static_cast<int>(std::ceil((a0 - v.a_min) * v.inv_step)));
    int k1 = std::min(v.n - 1, static_cast<int>(std::floor((a1 - v.a_min) * v.inv_step)));
    const double C = F * F + R * R - p.radius * p.radius;
    for (int k = k0; k <= k1; ++k) {
      const double a = v.a_min + k / v.inv_step;
      const double A = 1 + a * a, B = F + a * R;
      const double disc = B * B - A * C;
      if (disc < 0) continue;
      const double lam = (B - std::sqrt(disc)) / A;
      if (!(lam > 0) || lam >= v.lam_p[k]) continue;
      const double nF = (lam - F) / p.radius, nR = (lam * a - R) / p.radius;
      const double nx = nF * v.fxw + nR * v.rxw, ny = nF * v.fyw + nR * v.ryw;
      const double lambert = std::max(0.0, nx * w.sun.x + ny * w.sun.y) * sun_c;
      v.lam_p[k] = static_cast<float>(lam);
      v.shade_p[k] = static_cast<float>(0.55 + 0.65 * lambert);
      v.id_p[k] = static_cast<int32_t>(pi);
    }
  }
}

void render_row(const World& w, const CameraModel& cam, const View& v, int row, float* out, RowScratch& scratch) {
  const int W = cam.width;
  const double b = cam.b[row];
  const double inv_z = 1.0 / cam.zl[row];
  const double a0 = -cam.cx / cam.fx * inv_z, da = inv_z / cam.fx;
  const float f0 = static_cast<float>((a0 - v.a_min) * v.inv_step), df = static_cast<float>(da * v.inv_step);
  const float h = static_cast<float>(cam.h);
  const float bf = static_cast<float>(b);
  const float db = static_cast<float>(std::fabs(cam.b[row + 1] - b));

  // Sky: brighter towards the horizon.
  const double elev = std::atan(-b);
  const float sky = w.sky_horizon + (w.sky_zenith - w.sky_horizon) * static_cast<float>(std::clamp(elev / 0.8, 0.0, 1.0));

  if (w.opt.environment == Environment::Flat) {
    const float g = b > 0 ? 100.0f : sky;
    for (int u = 0; u < W; ++u) out[u] = g;
    return;
  }

  const bool ground_row = b > 1e-7;
  const float lam_g = ground_row ? static_cast<float>(cam.h / b) : kInf;

  // Ground row constants: hit point linear in u, footprints, mip levels, haze.
  float g0x = 0, g0y = 0, dgx = 0, dgy = 0, fl = 0, fd = 0, haze_g = 1;
  LodPair lp_asph, lp_pav, lp_ter;
  // A pixel's ground footprint is narrow across the row and long along it towards the horizon (at
  // 40 m, 3.5 cm by 90 cm on a 1.5 m mount): a camera integrates the whole of it. Texture is
  // sampled at `nd` points spread over the footprint's depth (each the pixel's ground point pushed
  // along its own ray by `ray_scale`), from the mip level of the per-sample spacing. One sample from
  // a level chosen for a shorter footprint aliases along the depth, and aliased texture slides over
  // the road as the car moves, so the road seems to move slower than it does.
  int nd = 1;
  float ray_scale[kMaxAniso];
  if (ground_row) {
    const double lg = cam.h / b;
    g0x = static_cast<float>(v.x + lg * (v.fxw + a0 * v.rxw));
    g0y = static_cast<float>(v.y + lg * (v.fyw + a0 * v.ryw));
    dgx = static_cast<float>(lg * da * v.rxw);
    dgy = static_cast<float>(lg * da * v.ryw);
    fl = static_cast<float>(lg * da);
    const double bn = cam.b[row + 1] > 1e-7 ? cam.b[row + 1] : cam.b[row - 1 >= 0 ? row - 1 : 0];
    fd = static_cast<float>(std::fabs(cam.h / bn - lg));
    if (!(fd > 0)) fd = fl;
    // Samples no closer than the finest ground texel: below it bilinear texture is smooth already.
    const float finest = static_cast<float>(std::min({w.tex.asphalt.texel_u, w.tex.pavers.texel_u, w.tex.terrain.texel_u}));
    nd = std::clamp(static_cast<int>(std::ceil(fd / std::max(fl, finest))), 1, kMaxAniso);
    const double db_row = cam.b[row + 1] - b;  // b is (nearly) linear in the row
    for (int j = 0; j < nd; ++j) {
      const double bj = b + ((j + 0.5) / nd - 0.5) * db_row;
      ray_scale[j] = static_cast<float>(b / std::max(bj, 0.25 * b));
    }
    const float foot = std::max(fl, fd / static_cast<float>(nd));
    lp_asph = lod_pair(w.tex.asphalt, fast_log2(foot / static_cast<float>(w.tex.asphalt.texel_u)));
    lp_pav = lod_pair(w.tex.pavers, fast_log2(foot / static_cast<float>(w.tex.pavers.texel_u)));
    lp_ter = lod_pair(w.tex.terrain, fast_log2(foot / static_cast<float>(w.tex.terrain.texel_u)));
    haze_g = w.haze_at(lam_g);
    // Exact Frenet coordinates every kAnchor pixels, interpolated in between.
    const int na = W / kAnchor + 2;
    scratch.s.resize(na);
    scratch.d.resize(na);
    for (int j = 0; j < na; ++j) {
      const float u = static_cast<float>(j * kAnchor);
      w.grid.lookup(g0x + u * dgx, g0y + u * dgy, scratch.s[j], scratch.d[j]);
    }
    if (nd > 1) {  // the footprint's far and near ends
      const double top = b / std::max(b - 0.5 * (cam.b[row + 1] - b), 0.25 * b), bot = b / (b + 0.5 * (cam.b[row + 1] - b));
      scratch.s_top.resize(na);
      scratch.d_top.resize(na);
      scratch.s_bot.resize(na);
      scratch.d_bot.resize(na);
      for (int j = 0; j < na; ++j) {
        const double gxa = g0x + j * kAnchor * dgx - v.x, gya = g0y + j * kAnchor * dgy - v.y;
        w.grid.lookup(v.x + top * gxa, v.y + top * gya, scratch.s_top[j], scratch.d_top[j]);
        w.grid.lookup(v.x + bot * gxa, v.y + bot * gya, scratch.s_bot[j], scratch.d_bot[j]);
      }
    }
  }
  const float inv_ta = static_cast<float>(1 / w.tex.asphalt.texel_u);
  const float inv_tp = static_cast<float>(1 / w.tex.pavers.texel_u);
  const float inv_tt = static_cast<float>(1 / w.tex.terrain.texel_u);
  const float road_half = static_cast<float>(w.road_half);
  const float curb_out = static_cast<float>(w.road_half + w.curb);
  const float walk_out = static_cast<float>(w.road_half + w.curb + w.sidewalk);
  const float dash_on = static_cast<float>(w.dash_on), dash_period = static_cast<float>(w.dash_period);
  const float aa = std::max(fl, 0.004f);
  const int nm = static_cast<int>(w.marking_d.size());
  float mark_d[16];
  bool mark_dash[16];
  for (int m = 0; m < nm && m < 16; ++m) {
    mark_d[m] = static_cast<float>(w.marking_d[m]);
    mark_dash[m] = w.marking_dashed[m];
  }
  // Haze lookups hoisted out of the pixel loop (World::haze_at, with locals).
  const float* haze_lut = w.haze_lut.data();
  const float haze_scale = static_cast<float>(w.haze_lut_scale);
  const int haze_last = static_cast<int>(w.haze_lut.size()) - 1;
  const float haze = w.haze;
  auto haze_at = [=](float lambda) {
    const float f = lambda * haze_scale;
    return haze_lut[f < static_cast<float>(haze_last) ? static_cast<int>(f) : haze_last];
  };
  const float vx = static_cast<float>(v.x), vy = static_cast<float>(v.y);
  // One ground sample: Frenet (d, s) for the material and markings, world (gx, gy) for texture;
  // `fdep` is the sample's depth footprint (dash ends and kerb joints are box-filtered over it).
  // 0 road, 1 kerb, 2 pavement, 3 terrain (by |d|, as shade_ground picks them).
  auto material = [&](float d) {
    const float ad = std::fabs(d);
    return ad < road_half ? 0 : (ad < curb_out ? 1 : (ad < walk_out ? 2 : 3));
  };
  auto shade_ground = [&](float d, float s, float gx, float gy, float fdep) {
    const float ad = std::fabs(d);
    float L;
    if (ad < road_half) {
      L = sample(lp_asph, gx * inv_ta, gy * inv_ta);
      for (int m = 0; m < nm; ++m) {
        const float dist = std::fabs(d - mark_d[m]);
        if (dist >= kMarkHalf + aa) continue;
        float c = clamp01((kMarkHalf - dist) / aa + 0.5f);
        if (mark_dash[m]) c *= periodic_coverage(s, dash_on, dash_period, fdep);
        L += (kPaint - L) * c * 0.92f;
      }
    } else if (ad < curb_out) {
      L = std::min(255.0f, sample(lp_asph, gx * inv_ta, gy * inv_ta) * 0.6f + 110.0f);
      L *= 1.0f - 0.4f * periodic_coverage(s, 0.03f, 1.0f, fdep);  // kerb joints every metre
    } else if (ad < walk_out) {
      L = sample(lp_pav, gx * inv_tp, gy * inv_tp);
    } else {
      L = sample(lp_ter, gx * inv_tt, gy * inv_tt);
    }
    return L;
  };
  const float* sa = scratch.s.data();
  const float *stop = scratch.s_top.data(), *dtop = scratch.d_top.data(), *sbot = scratch.s_bot.data(), *dbot = scratch.d_bot.data();
  const float* dsa = scratch.d.data();
  const int nlast = v.n - 1;

  for (int u = 0; u < W; ++u) {
    const float fi = f0 + static_cast<float>(u) * df;
    int kk = static_cast<int>(fi + 0.5f);
    kk = kk < 0 ? 0 : (kk > nlast ? nlast : kk);
    const float lw = v.wl[0].lam[kk], lp = v.lam_p[kk];

    // Poles (unless a wall stands in front of them at this height).
    if (lp < lam_g) {
      const Pole& P = w.poles[v.id_p[kk]];
      const float z = h - lp * bf;
      if (z < P.top) {
        bool wall_front = false;
        if (lw < lp) wall_front = h - lw * bf < w.walls[v.wl[0].id[kk]].top;
        if (!wall_front) {
          float L;
          if (P.style == 1) {  // painted bands, anti-aliased over the pixel's height
            const float fv = std::max(lp * db, 0.002f);
            const float c = clamp01(periodic_inside(z, 0.3f, 0.6f) / fv + 0.5f);
            L = 45.0f + (220.0f - 45.0f) * c;
          } else {
            L = z < 0.35f ? P.base * 0.45f : P.base;
          }
          L *= v.shade_p[kk];
          out[u] = L + (haze - L) * haze_at(lp);
          continue;
        }
      }
    }

    // Walls: the nearest, else (above its top) the one behind it.
    if (lw < lam_g) {
      bool hit = false;
      for (int layer = 0; layer < 2 && !hit; ++layer) {
        const View::WallLayer& l = v.wl[layer];
        const int32_t id = l.id[kk];
        if (id < 0 || !(l.lam[kk] < lam_g)) break;
        float lam = l.lam[kk], uu = l.u[kk];
        int k0 = static_cast<int>(fi);
        k0 = k0 < 0 ? 0 : (k0 > nlast - 1 ? nlast - 1 : k0);
        if (l.id[k0] == id && l.id[k0 + 1] == id) {
          const float t = fi - static_cast<float>(k0);
          lam = l.lam[k0] + (l.lam[k0 + 1] - l.lam[k0]) * t;
          uu = l.u[k0] + (l.u[k0 + 1] - l.u[k0]) * t;
        }
        const Wall& wall = w.walls[id];
        const float z = h - lam * bf;
        if (z >= wall.top) continue;
        const Building& B = w.buildings[wall.building];
        const Texture& T = B.style >= 0 ? w.tex.facade[B.style] : w.tex.foliage;
        const float itu = static_cast<float>(1 / T.texel_u), itv = static_cast<float>(1 / T.texel_v);
        const float fu = l.du[kk] * df * itu, fv = lam * db * itv;
        const float lod = fast_log2(std::max(std::max(fu, fv), 1e-6f)) - 0.5f;
        float L = sample_lod(T, lod, uu * itu, (z + B.v_offset) * itv);
        L = L * B.gain * wall.shade + B.bias;
        out[u] = L + (haze - L) * haze_at(lam);
        hit = true;
      }
      if (hit) continue;
    }

    if (!ground_row) {
      out[u] = sky;
      continue;
    }

    // Ground: material from the Frenet coordinates, texture from world coordinates; `nd` samples
    // spread over the pixel's depth footprint (see ray_scale above), each shaded alone.
    const float gx = g0x + static_cast<float>(u) * dgx, gy = g0y + static_cast<float>(u) * dgy;
    const int j = u / kAnchor;
    const float t = static_cast<float>(u - j * kAnchor) * (1.0f / kAnchor);
    float L = 0;
    if (nd == 1) {
      L = shade_ground(dsa[j] + (dsa[j + 1] - dsa[j]) * t, sa[j] + (sa[j + 1] - sa[j]) * t, gx, gy, fd);
    } else {
      const float d0 = dtop[j] + (dtop[j + 1] - dtop[j]) * t, d1 = dbot[j] + (dbot[j + 1] - dbot[j]) * t;
      const float s0 = stop[j] + (stop[j + 1] - stop[j]) * t, s1 = sbot[j] + (sbot[j + 1] - sbot[j]) * t;
      const float rx = gx - vx, ry = gy - vy;
      const int m0 = material(d0), m1 = material(d1);
      const float dlo = std::min(d0, d1) - kMarkHalf - aa, dhi = std::max(d0, d1) + kMarkHalf + aa;
      bool uniform = m0 == m1 && (m0 == 0 || d0 * d1 > 0);  // one material over the whole footprint
      for (int m = 0; m < nm && uniform && m0 == 0; ++m) uniform = !(mark_d[m] > dlo && mark_d[m] < dhi);
      if (uniform) {
        // The common case, shaded once: only the texture varies along the footprint.
        const LodPair& lp = m0 <= 1 ? lp_asph : (m0 == 2 ? lp_pav : lp_ter);
        const float it = m0 <= 1 ? inv_ta : (m0 == 2 ? inv_tp : inv_tt);
        for (int k = 0; k < nd; ++k) {
          const float x = sample(lp, (vx + ray_scale[k] * rx) * it, (vy + ray_scale[k] * ry) * it);
          L += m0 == 1 ? std::min(255.0f, x * 0.6f + 110.0f) : x;
        }
        L /= static_cast<float>(nd);
        if (m0 == 1) L *= 1.0f - 0.4f * periodic_coverage(0.5f * (s0 + s1), 0.03f, 1.0f, std::fabs(s1 - s0));
      } else {
        const float fdj = fd / static_cast<float>(nd);
        for (int k = 0; k < nd; ++k) {
          const float q = (static_cast<float>(k) + 0.5f) / static_cast<float>(nd);
          L += shade_ground(d0 + (d1 - d0) * q, s0 + (s1 - s0) * q, vx + ray_scale[k] * rx, vy + ray_scale[k] * ry, fdj);
        }
        L /= static_cast<float>(nd);
      }
    }
    out[u] = L + (haze - L) * haze_g;
  }
}

void draw_markers(const World& w, const CameraModel& cam, const View& v, const std::vector<Marker>& markers, int row, float* out) {
  for (const Marker& m : markers) {
    const double mx = m.x - w.origin.x, my = m.y - w.origin.y;
    const double px = mx - v.x, py = my - v.y, pz = m.z - cam.h;
    const double F = px * v.fxw + py * v.fyw, R = px * v.rxw + py * v.ryw, D = -pz;
    const double xc = R, yc = cam.cp * D - cam.sp * F, zc = cam.sp * D + cam.cp * F;
    if (zc <= m.radius * 1.01) continue;
    const double dist = std::sqrt(xc * xc + yc * yc + zc * zc);
    if (dist <= m.radius * 1.01) continue;
    const double ang = std::asin(m.radius / dist);
    const double r_px = std::max(cam.fx, cam.fy) * std::tan(ang) * (dist / zc) * (dist / zc) + 2;
    const double uc = cam.fx * xc / zc + cam.cx, vc = cam.fy * yc / zc + cam.cy;
    if (row < vc - r_px - 1 || row > vc + r_px + 1) continue;
    const int u_lo = std::max(0, static_cast<int>(std::floor(uc - r_px - 1)));
    const int u_hi = std::min(cam.width - 1, static_cast<int>(std::ceil(uc + r_px + 1)));
    // Ray-sphere tests in the level camera frame (x right, y down, z forward).
    const double ox = -xc, oy = -(cam.cp * yc + cam.sp * zc) , oz = -(-cam.sp * yc + cam.cp * zc);
    const double cc = ox * ox + oy * oy + oz * oz - m.radius * m.radius;
    for (int u = u_lo; u <= u_hi; ++u) {
      int hits = 0;
      for (int sy = 0; sy < 4; ++sy) {
        const double vv = row + (sy + 0.5) / 4 - 0.5;
        const double ycs = (vv - cam.cy) / cam.fy;
        const double dy = cam.cp * ycs + cam.sp, dz = -cam.sp * ycs + cam.cp;
        for (int sx = 0; sx < 4; ++sx) {
          const double uu = u + (sx + 0.5) / 4 - 0.5;
          const double dx = (uu - cam.cx) / cam.fx;
          const double A = dx * dx + dy * dy + dz * dz, B = ox * dx + oy * dy + oz * dz;
          const double disc = B * B - A * cc;
          if (disc >= 0 && -B - std::sqrt(disc) > 0) ++hits;
        }
      }
      if (hits) {
        const float c = hits / 16.0f;
        out[u] = out[u] * (1 - c) + static_cast<float>(m.value) * c;
      }
    }
  }
}

}  // namespace egogeo::render
