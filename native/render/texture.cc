// Procedural texture tiles. Each is generated once per clip (a few milliseconds) from the seed.
// Values are grey levels before lighting; every pattern has sharp, high-contrast details at
// several scales so FAST finds corners and KLT can track them at the distances the camera sees.
#include "texture.h"

#include <algorithm>
#include <cmath>

namespace egogeo::render {

void Texture::allocate(int log2, double tu, double tv) {
  log2size = log2;
  texel_u = tu;
  texel_v = tv;
  levels = log2 + 1;
  offset.assign(levels, 0);
  size_t total = 0;
  for (int k = 0; k < levels; ++k) {
    offset[k] = total;
    const size_t s = static_cast<size_t>(1) << (log2 - k);
    total += s * s;
  }
  data.assign(total, 0);
}

void Texture::build_mips() {
  for (int k = 1; k < levels; ++k) {
    const int s = 1 << (log2size - k), ps = s * 2;
    const uint8_t* src = data.data() + offset[k - 1];
    uint8_t* dst = data.data() + offset[k];
    for (int y = 0; y < s; ++y) {
      for (int x = 0; x < s; ++x) {
        const int a = src[(2 * y) * ps + 2 * x], b = src[(2 * y) * ps + 2 * x + 1];
        const int c = src[(2 * y + 1) * ps + 2 * x], d = src[(2 * y + 1) * ps + 2 * x + 1];
        dst[y * s + x] = static_cast<uint8_t>((a + b + c + d + 2) >> 2);
      }
    }
  }
}

ValueNoise::ValueNoise(uint32_t seed, int cell, int period) : cell_(cell), period_(period), inv_cell_(1.0 / cell) {
  lattice_.resize(static_cast<size_t>(period) * period);
  for (int j = 0; j < period; ++j)
    for (int i = 0; i < period; ++i) lattice_[static_cast<size_t>(j) * period + i] = unit(hash3(seed, i, j)) * 2.0 - 1.0;
}

double ValueNoise::operator()(double x, double y) const {
  const double gx = x * inv_cell_, gy = y * inv_cell_;
  const double fx = std::floor(gx), fy = std::floor(gy);
  const int ix = static_cast<int>(fx), iy = static_cast<int>(fy);
  double tx = gx - fx, ty = gy - fy;
  tx = tx * tx * (3 - 2 * tx);
  ty = ty * ty * (3 - 2 * ty);
  const int x0 = ((ix % period_) + period_) % period_, y0 = ((iy % period_) + period_) % period_;
  const int x1 = x0 + 1 == period_ ? 0 : x0 + 1, y1 = y0 + 1 == period_ ? 0 : y0 + 1;
  const double* r0 = lattice_.data() + static_cast<size_t>(y0) * period_;
  const double* r1 = lattice_.data() + static_cast<size_t>(y1) * period_;
  const double top = r0[x0] + (r0[x1] - r0[x0]) * tx, bot = r1[x0] + (r1[x1] - r1[x0]) * tx;
  return top + (bot - top) * ty;
}

namespace {

uint8_t to_byte(double v) { return static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L)); }

/// Scales each texel's deviation from the tile's mean by `contrast`.
void apply_contrast(Texture& t, double contrast) {
  if (contrast == 1.0) return;
  const size_t n = static_cast<size_t>(t.size()) * t.size();
  double mean = 0;
  for (size_t i = 0; i < n; ++i) mean += t.data[i];
  mean /= static_cast<double>(n);
  for (size_t i = 0; i < n; ++i) t.data[i] = to_byte(mean + (t.data[i] - mean) * contrast);
}

/// Fills level 0 from f(i, j) (texel column i, row j), then contrast and mips.
template <class F>
void fill(Texture& t, double contrast, F f) {
  const int s = t.size();
  uint8_t* p = t.base();
  for (int j = 0; j < s; ++j)
    for (int i = 0; i < s; ++i) p[j * s + i] = to_byte(f(i, j));
  apply_contrast(t, contrast);
  t.build_mips();
}

Texture make_asphalt(uint32_t seed, double contrast) {
  Texture t;
  t.allocate(9, 0.02, 0.02);  // 512 texels of 2 cm: a 10.24 m tile
  const uint32_t s = hash2(seed, 101);
  const ValueNoise n1(s + 1, 2, 256), n2(s + 2, 8, 64), n3(s + 3, 32, 16), n4(s + 4, 128, 4);
  fill(t, contrast, [&](int i, int j) {
    const double n = 0.30 * n1(i, j) + 0.45 * n2(i, j) + 0.45 * n3(i, j) + 0.30 * n4(i, j);
    double v = 96 + 48 * std::tanh(1.8 * n);
    const uint32_t h = hash3(s + 5, i, j);
    if ((h & 1023) < 12) v += 70;        // bright aggregate
    else if ((h & 1023) < 20) v -= 45;   // dark pits
    return v;
  });
  return t;
}

Texture make_pavers(uint32_t seed, double contrast) {
  Texture t;
  t.allocate(8, 0.02, 0.02);  // 5.12 m tile, 32 cm stones in running bond
  const uint32_t s = hash2(seed, 202);
  const ValueNoise n1(s + 1, 4, 64);
  fill(t, contrast, [&](int i, int j) {
    const int row = j / 16;
    const int ii = i + ((row & 1) ? 8 : 0);
    const int col = (ii / 16) & 15;
    if (j % 16 == 0 || ii % 16 == 0) return 62.0;  // joints
    const double stone = unit(hash3(s, col, row & 15)) - 0.5;
    return 150 + 70 * stone + 14 * n1(i, j);
  });
  return t;
}

Texture make_terrain(uint32_t seed, double contrast) {
  Texture t;
  t.allocate(8, 0.05, 0.05);  // 12.8 m tile
  const uint32_t s = hash2(seed, 303);
  const ValueNoise n1(s + 1, 2, 128), n2(s + 2, 8, 32), n3(s + 3, 32, 8);
  fill(t, contrast, [&](int i, int j) {
    const double n = 0.45 * n1(i, j) + 0.5 * n2(i, j) + 0.45 * n3(i, j);
    return 92 + 50 * std::tanh(1.6 * n);
  });
  return t;
}

Texture make_foliage(uint32_t seed, double contrast) {
  Texture t;
  t.allocate(8, 0.08, 0.08);  // 20.5 m tile
  const uint32_t s = hash2(seed, 404);
  const ValueNoise n1(s + 1, 2, 128), n2(s + 2, 8, 32), n3(s + 3, 32, 8);
  fill(t, contrast, [&](int i, int j) {
    const double n = 0.5 * n1(i, j) + 0.6 * n2(i, j) + 0.4 * n3(i, j);
    return 80 + 55 * std::tanh(2.0 * n);
  });
  return t;
}

/// Facade styles: 0 plaster, 1 brick, 2 panels, 3 glass-and-frame office. Windows on a grid whose
/// pitch divides the tile, so the tile repeats seamlessly.
Texture make_facade(uint32_t seed, int style, double contrast) {
  Texture t;
  t.allocate(8, 0.04, 0.0375);  // 10.24 m wide, 9.6 m (three 3.2 m floors) high
  const uint32_t s = hash2(seed, 500 + style);
  Rng rng(seed, 600 + style);
  const int cols = 3 + rng.below(3);                  // windows per tile width
  const double pitch_u = 10.24 / cols, pitch_v = 3.2;
  const double win_w = pitch_u * rng.uniform(0.35, 0.6);
  const double win_h = rng.uniform(1.3, 1.8);
  const double sill = rng.uniform(0.8, 1.1);
  const double frame = 0.08;
  const double glass = rng.uniform(35, 70);
  const ValueNoise g1(s + 3, 4, 64), w1(s + 1, 2, 128), w2(s + 1, 4, 64), w3(s + 2, 8, 32), w4(s + 1, 4, 64), w5(s + 2, 16, 16);
  fill(t, contrast, [&](int i, int j) {
    const double u = (i + 0.5) * t.texel_u, v = (j + 0.5) * t.texel_v;
    // Windows.
    const double lu = std::fmod(u, pitch_u) - (pitch_u - win_w) / 2, lv = std::fmod(v, pitch_v) - sill;
    if (lu >= -frame && lu <= win_w + frame && lv >= -frame && lv <= win_h + frame) {
      const bool in_glass = lu > 0 && lu < win_w && lv > 0 && lv < win_h;
      if (!in_glass) return 215.0;
      if (std::fabs(lu - win_w / 2) < 0.04) return 205.0;  // mullion
      const int wi = static_cast<int>(u / pitch_u), wj = static_cast<int>(v / pitch_v);
      const double lit = unit(hash3(s + 9, wi, wj)) < 0.15 ? 80 : 0;  // a few bright rooms
      return glass + lit + 30 * (lv / win_h) + 10 * g1(i, j);
    }
    switch (style) {
      case 1: {  // brick: 24 x 7.5 cm bricks in running bond, light mortar
        const int row = j / 2;
        const int ii = i + ((row & 1) ? 3 : 0);
        if (j % 2 == 0 && (ii % 6 == 0)) return 190.0;
        if (ii % 6 == 0) return 185.0;
        const double b = unit(hash3(s, (ii / 6) & 63, row & 127)) - 0.5;
        return 110 + 60 * b + 8 * w1(i, j);
      }
      case 2: {  // panels: 1.28 x 1.2 m with dark joints
        if (i % 32 == 0 || j % 32 == 0) return 60.0;
        const double b = unit(hash3(s, (i / 32) & 7, (j / 32) & 7)) - 0.5;
        return 165 + 60 * b + 10 * w2(i, j);
      }
      case 3: {  // office: horizontal bands
        const double band = std::fmod(v, pitch_v);
        if (band < 0.5) return 95.0 + 20 * w2(i, j);
        return 150 + 25 * w3(i, j);
      }
      default:  // plaster with stains
        return 155 + 30 * std::tanh(1.5 * (0.6 * w4(i, j) + 0.6 * w5(i, j)));
    }
  });
  return t;
}

}  // namespace

TextureSet make_textures(uint32_t seed, double contrast) {
  TextureSet ts;
  ts.asphalt = make_asphalt(seed, contrast);
  ts.pavers = make_pavers(seed, contrast);
  ts.terrain = make_terrain(seed, contrast);
  ts.foliage = make_foliage(seed, contrast);
  for (int k = 0; k < 4; ++k) ts.facade.push_back(make_facade(seed, k, contrast));
  return ts;
}

}  // namespace egogeo::render
