// Per-pixel ray casting of the street world, one image row at a time.
//
// The camera has no roll, so every pixel's ray is (a, b) per metre of horizontal forward travel:
// a = rightward and b = downward offset per forward metre. Along an image row b is constant (the
// ground distance h / b is too) and a is linear in u, so the ground hit point is linear along a
// row and all vertical geometry (walls, poles) is a function of a alone. Each view therefore
// rasterises walls and poles once into a 1-D "azimuth buffer" over a (4 entries per pixel, a
// depth test per entry), and the per-pixel work is a buffer lookup, a comparison with the ground
// distance and one texture sample. Rows are rendered left to right into a float buffer, so the
// image is written once, sequentially.
#pragma once

#include "world.h"

#include <vector>

namespace egogeo::render {

/// Intrinsics, mount and per-row ray constants (shared by every view of a clip).
struct CameraModel {
  int width = 0, height = 0;
  double fx = 0, fy = 0, cx = 0, cy = 0;
  double h = 1.5, pitch = 0, cp = 1, sp = 0;
  std::vector<double> zl, b;  // per row: forward component of the ray (y_c, 1) and b = down / forward
  explicit CameraModel(const Camera& c);
};

/// One rendering of the world from one pose: the camera pose plus its azimuth buffer.
struct View {
  double x = 0, y = 0, yaw = 0;  // local world
  double fxw = 1, fyw = 0;       // forward unit vector
  double rxw = 0, ryw = -1;      // right unit vector
  double a_min = 0, inv_step = 1;
  int n = 0;
  // Two wall layers (nearest and second-nearest wall per entry, so a wall shows above a lower one
  // in front of it) and one pole layer (nearest pole per entry).
  struct WallLayer {
    std::vector<float> lam, u, du;  // distance (forward metres), texture u (m), |du| per entry
    std::vector<int32_t> id;        // wall index, -1 = none
  };
  WallLayer wl[2];
  std::vector<float> lam_p, shade_p;
  std::vector<int32_t> id_p;
};

/// Fills `v` for a pose (local coordinates), reusing its buffers.
void build_view(const World& w, const CameraModel& cam, double x, double y, double yaw, View& v);

/// Scratch memory for one row (anchors of the sparse Frenet lookup).
struct RowScratch {
  std::vector<float> s, d;                        // Frenet coordinates at the row's anchors
  std::vector<float> s_top, d_top, s_bot, d_bot;  // ... at the far and near ends of their footprints
};

/// Renders image row `row` of view `v` into `out` (width floats, linear grey levels before exposure).
void render_row(const World& w, const CameraModel& cam, const View& v, int row, float* out, RowScratch& scratch);

/// Draws `markers` over row `row` of view `v` (anti-aliased 4x4 coverage).
void draw_markers(const World& w, const CameraModel& cam, const View& v, const std::vector<Marker>& markers, int row, float* out);

}  // namespace egogeo::render
