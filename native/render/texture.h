// Hash-based procedural textures: periodic value-noise tiles with a mip pyramid, sampled
// bilinearly (and trilinearly between mip levels) with wrap-around addressing. All randomness is
// an integer hash of (seed, salt, lattice coordinates), so a texture is a pure function of the
// seed: the same seed gives the same bytes on every run.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#define EGOGEO_INLINE inline __attribute__((always_inline))

namespace egogeo::render {

// ---- hashing -----------------------------------------------------------------------------------

inline uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
inline uint32_t hash2(uint32_t a, uint32_t b) { return hash32(a ^ hash32(b + 0x9e3779b9U)); }
inline uint32_t hash3(uint32_t a, uint32_t b, uint32_t c) { return hash32(a ^ hash2(b, c)); }
/// Uniform in [0, 1).
inline double unit(uint32_t h) { return (h >> 8) * (1.0 / 16777216.0); }
/// Uniform in [lo, hi).
inline double uniform(uint32_t h, double lo, double hi) { return lo + (hi - lo) * unit(h); }

/// A small deterministic generator for world layout (not per pixel).
class Rng {
 public:
  explicit Rng(uint32_t seed, uint32_t stream) : state_(hash2(seed, stream)) {}
  uint32_t next() { return state_ = hash32(state_ + 0x6d2b79f5U); }
  double unit() { return egogeo::render::unit(next()); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
  /// Approximately normal (sum of four uniforms), mean 0, std-dev 1.
  double normal() { return (unit() + unit() + unit() + unit() - 2.0) * 1.7320508075688772; }
  int below(int n) { return static_cast<int>(unit() * n); }

 private:
  uint32_t state_;
};

// ---- textures ----------------------------------------------------------------------------------

/// A square power-of-two tile of 8-bit texels with its full mip pyramid (box-filtered).
/// `texel_u`, `texel_v`: metres per level-0 texel along u and v.
struct Texture {
  int log2size = 0;
  int levels = 0;
  double texel_u = 0.02, texel_v = 0.02;
  std::vector<uint8_t> data;       // levels concatenated, level k is (size >> k)^2 row-major
  std::vector<size_t> offset;      // per level, into data

  int size() const { return 1 << log2size; }
  /// Allocates level 0 (filled by the caller through `base()`), then `build_mips()`.
  void allocate(int log2, double tu, double tv);
  uint8_t* base() { return data.data(); }
  void build_mips();
};

/// One mip level ready for sampling: coordinates come in level-0 texels.
struct Level {
  const uint8_t* p = nullptr;
  int shift = 0;      // log2 of the level's size (row stride = 1 << shift)
  int mask = 0;
  float scale = 1;    // level-0 texels -> this level's texels
};

EGOGEO_INLINE Level level_of(const Texture& t, int k) {
  if (k < 0) k = 0;
  if (k > t.levels - 1) k = t.levels - 1;
  Level l;
  l.p = t.data.data() + t.offset[k];
  l.shift = t.log2size - k;
  l.mask = (1 << l.shift) - 1;
  l.scale = 1.0f / static_cast<float>(1 << k);
  return l;
}

/// Bilinear sample with wrap-around; (u, v) in level-0 texel units, texel centres at integers.
EGOGEO_INLINE float sample(const Level& l, float u, float v) {
  u *= l.scale;
  v *= l.scale;
  // Truncation towards zero, corrected for negatives (an exact negative integer gives frac 1,
  // which interpolates to the same value).
  int iu = static_cast<int>(u);
  int iv = static_cast<int>(v);
  iu -= (u < 0);
  iv -= (v < 0);
  const float fu = u - static_cast<float>(iu), fv = v - static_cast<float>(iv);
  const int x0 = iu & l.mask, x1 = (iu + 1) & l.mask;
  const int r0 = (iv & l.mask) << l.shift, r1 = ((iv + 1) & l.mask) << l.shift;
  const float a = l.p[r0 + x0], b = l.p[r0 + x1], c = l.p[r1 + x0], d = l.p[r1 + x1];
  const float top = a + (b - a) * fu, bot = c + (d - c) * fu;
  return top + (bot - top) * fv;
}

/// Fast log2 for positive finite floats (piecewise linear, error < 0.09).
EGOGEO_INLINE float fast_log2(float x) {
  uint32_t i;
  std::memcpy(&i, &x, 4);
  return static_cast<float>(i) * (1.0f / 8388608.0f) - 127.0f;
}

/// Trilinear sample at a fractional mip level (>= 0).
EGOGEO_INLINE float sample_lod(const Texture& t, float lod, float u, float v) {
  if (!(lod > 0)) return sample(level_of(t, 0), u, v);
  const float maxl = static_cast<float>(t.levels - 1);
  if (lod >= maxl) return sample(level_of(t, t.levels - 1), u, v);
  const int k = static_cast<int>(lod);
  const float w = lod - static_cast<float>(k);
  const float a = sample(level_of(t, k), u, v);
  const float b = sample(level_of(t, k + 1), u, v);
  return a + (b - a) * w;
}

/// Two adjacent mip levels and the blend between them, chosen once (e.g. per image row).
struct LodPair {
  Level a, b;
  float w = 0;        // weight of b
  bool two = false;   // blend needed
};

inline LodPair lod_pair(const Texture& t, float lod) {
  LodPair p;
  if (!(lod > 0)) {
    p.a = level_of(t, 0);
    return p;
  }
  const int k = static_cast<int>(lod);
  if (k >= t.levels - 1) {
    p.a = level_of(t, t.levels - 1);
    return p;
  }
  p.a = level_of(t, k);
  p.b = level_of(t, k + 1);
  p.w = lod - static_cast<float>(k);
  p.two = p.w > 1.0f / 64;
  return p;
}

EGOGEO_INLINE float sample(const LodPair& p, float u, float v) {
  const float x = sample(p.a, u, v);
  return p.two ? x + (sample(p.b, u, v) - x) * p.w : x;
}

/// Periodic value noise: a random lattice of `period` x `period` cells (cells of `cell` texels),
/// smoothstep-interpolated; values in [-1, 1]. The lattice is hashed once, then looked up.
class ValueNoise {
 public:
  ValueNoise(uint32_t seed, int cell, int period);
  double operator()(double x, double y) const;

 private:
  int cell_, period_;
  double inv_cell_;
  std::vector<double> lattice_;
};

/// The world's texture set for one seed.
struct TextureSet {
  Texture asphalt;            // road surface (world-anchored)
  Texture pavers;             // sidewalk
  Texture terrain;            // verges, fields
  std::vector<Texture> facade;  // building styles
  Texture foliage;            // tree lines (highway environment)
};

/// Builds every texture for `seed`; `contrast` scales each texel's deviation from the tile mean.
TextureSet make_textures(uint32_t seed, double contrast);

}  // namespace egogeo::render
