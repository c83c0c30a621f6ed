/**
 * A tiny deterministic renderer for the VO tests: greyscale frames of a textured world seen by a
 * pinhole camera, ray cast per pixel.
 *
 * World frame = the first camera's frame (x right, y down, z forward; SPEC.md). The scene is
 * - the road: the plane y = +cameraHeight (a level camera at y = 0 looks along it; road normal =
 *   camera +y), and
 * - a far wall: the vertical plane z = wallDistance, textured, infinitely wide and high, so every
 *   ray above the horizon hits it and rotation is observable from distant points. Its foot
 *   projects a few pixels below the horizon, above the engine's road region (cy + 5% of H), for
 *   the distances the tests use.
 *
 * Both planes carry multi-octave value noise in world metres (one random lattice, each octave
 * rotated and offset so their grids don't align; road cells 3× longer along z, which the view
 * compresses), normalised to unit contrast and squashed through tanh for strong corners.
 * Anti-aliasing has two parts: octaves fade out as their lattice spacing at the hit point drops
 * from 3 to 1.5 pixels (an analytic level of detail from the pixel footprint, so the far road goes
 * smoothly grey), and each pixel averages 2×2 rays over its area like a sensor (octaves coarser
 * than 6 pixels are smooth across a pixel and evaluated once). Without the box filter KLT's
 * sub-pixel accuracy on the road visibly suffers (per-pair scale errors up to 2-6% instead of <1%).
 *
 * Everything is a pure function of the seed and the pose: identical inputs give identical bytes.
 * A 640×360 frame takes ~60 ms (2×2 rays) or ~30 ms (1 ray) on one core.
 */
import { mulberry32 as prng } from '../../src/core/random.js';

export interface Camera {
  width: number;
  height: number;
  fx: number;
  fy: number;
  cx: number;
  cy: number;
}

/** Camera pose in the world: R camera-to-world (row-major 3×3), C the camera centre (metres). */
export interface Pose {
  R: number[];
  C: [number, number, number];
}

export interface SceneOptions {
  seed?: number;
  /** Camera height above the road at y = 0 (metres). Default 1.65. */
  cameraHeight?: number;
  /** Distance of the far wall from the world origin along z (metres). Default 150. */
  wallDistance?: number;
}

export interface Scene {
  seed: number;
  cameraHeight: number;
  wallDistance: number;
  /** Lattice values in [-1, 1], TABLE × TABLE, shared by every octave (octaves differ by transform). */
  table: Float32Array;
  /** Per surface (0 road, 1 wall) and octave: cos, sin, offset u, offset v. */
  octaves: Float64Array[];
}

const TABLE = 512;
const MASK = TABLE - 1;
const OCTAVES = 10;
/** Coarsest lattice spacing (metres) on the road and on the wall. */
const BASE = [6, 12];
/** Lattice spacing (pixels at the hit point) where an octave is fully / not at all visible. */
const LOD_FULL = 3;
const LOD_NONE = 1.5;
/** Lattice spacing (pixels) from which an octave is smooth across a pixel (no supersampling needed). */
const COARSE = 6;
/** Road lattice cells are this much longer along z than across (the view compresses z). */
const ROAD_STRETCH = 3;
/** Amplitude ratio between successive octaves (near 1: fine detail as strong as coarse shading). */
const AMP_GAIN = 1.15;
const CONTRAST = 1.6;

/** The project's mulberry32 (src/core/random.ts), re-exported for the tests. */
export { prng };

export function makeScene(opts: SceneOptions = {}): Scene {
  const seed = opts.seed ?? 1;
  const rnd = prng(seed);
  const table = new Float32Array(TABLE * TABLE);
  for (let i = 0; i < table.length; i++) table[i] = rnd() * 2 - 1;
  const octaves: Float64Array[] = [];
  for (let s = 0; s < 2; s++) {
    const o = new Float64Array(OCTAVES * 4);
    for (let k = 0; k < OCTAVES; k++) {
      const a = rnd() * Math.PI * 2;
      o[k * 4] = Math.cos(a);
      o[k * 4 + 1] = Math.sin(a);
      o[k * 4 + 2] = rnd() * TABLE;
      o[k * 4 + 3] = rnd() * TABLE;
    }
    octaves.push(o);
  }
  return { seed, cameraHeight: opts.cameraHeight ?? 1.65, wallDistance: opts.wallDistance ?? 150, table, octaves };
}

/** One octave of value noise: the smoothstep-interpolated lattice `k` of `surface` at (x, y) lattice units. */
function octave(T: Float32Array, o: Float64Array, k: number, uu: number, vv: number): number {
  const c = o[k * 4], s = o[k * 4 + 1];
  const x = c * uu - s * vv + o[k * 4 + 2];
  const y = s * uu + c * vv + o[k * 4 + 3];
  const ix = Math.floor(x), iy = Math.floor(y);
  let fx = x - ix, fy = y - iy;
  fx = fx * fx * (3 - 2 * fx);
  fy = fy * fy * (3 - 2 * fy);
  const r0 = (iy & MASK) * TABLE, r1 = ((iy + 1) & MASK) * TABLE;
  const c0 = ix & MASK, c1 = (ix + 1) & MASK;
  const a = T[r0 + c0] + (T[r0 + c1] - T[r0 + c0]) * fx;
  const b = T[r1 + c0] + (T[r1 + c1] - T[r1 + c0]) * fx;
  return a + (b - a) * fy;
}

/** Where a ray hits the scene: surface (0 road, 1 wall, -1 none) and surface coordinates (metres). */
interface Hit {
  surface: number;
  u: number;
  v: number;
  /** Footprint of one pixel along u and v (metres). */
  fpU: number;
  fpV: number;
}

/** Casts the ray through normalised image point (xn, yn); f = focal length in pixels. */
function cast(scene: Scene, R: number[], C: number[], xn: number, yn: number, f: number, hit: Hit): void {
  const dx = R[0] * xn + R[1] * yn + R[2];
  const dy = R[3] * xn + R[4] * yn + R[5];
  const dz = R[6] * xn + R[7] * yn + R[8];
  const len = Math.sqrt(dx * dx + dy * dy + dz * dz);
  // Ray parameters per unit of (xn, yn, 1), i.e. the hit's depth along the optical axis.
  const tg = dy > 1e-9 ? (scene.cameraHeight - C[1]) / dy : Infinity;
  const tw = dz > 1e-9 ? (scene.wallDistance - C[2]) / dz : Infinity;
  // Footprint: depth / f across, stretched by 1 / cos(incidence) along the surface's slope
  // direction (taken as v: world z on the road, world y on the wall).
  if (tg < tw) {
    hit.surface = 0;
    hit.u = C[0] + tg * dx;
    hit.v = C[2] + tg * dz;
    hit.fpU = tg / f;
    hit.fpV = hit.fpU / Math.max(dy / len, 0.01);
  } else if (tw < Infinity) {
    hit.surface = 1;
    hit.u = C[0] + tw * dx;
    hit.v = C[1] + tw * dy;
    hit.fpU = tw / f;
    hit.fpV = hit.fpU / Math.max(dz / len, 0.01);
  } else {
    hit.surface = -1;
  }
}

/**
 * Octave weights at a hit: w[k] fades octave k out as its lattice spacing (in pixels, the
 * smaller of the two axes) drops from LOD_FULL to LOD_NONE; also returns how many octaves are
 * visible and sets `px` to each octave's spacing.
 */
function weights(hit: Hit, w: Float64Array, px: Float64Array): number {
  const stretch = hit.surface === 0 ? ROAD_STRETCH : 1;
  let lambda = BASE[hit.surface];
  let amp = 1;
  let k = 0;
  for (; k < OCTAVES; k++, lambda *= 0.5, amp *= AMP_GAIN) {
    const p = Math.min(lambda / hit.fpU, (stretch * lambda) / hit.fpV);
    if (p <= LOD_NONE) break;
    px[k] = p;
    w[k] = amp * (p >= LOD_FULL ? 1 : (p - LOD_NONE) / (LOD_FULL - LOD_NONE));
  }
  return k;
}

/** 1 / lattice spacing (metres) along u and along v, per surface and octave. */
const INV_U = new Float64Array(2 * OCTAVES), INV_V = new Float64Array(2 * OCTAVES);
for (let s = 0; s < 2; s++)
  for (let k = 0; k < OCTAVES; k++) {
    INV_U[s * OCTAVES + k] = 2 ** k / BASE[s];
    INV_V[s * OCTAVES + k] = 2 ** k / BASE[s] / (s === 0 ? ROAD_STRETCH : 1);
  }

/** Σ_k w[k] · octave_k over octaves [k0, k1) at the hit's surface point. */
function noise(scene: Scene, hit: Hit, w: Float64Array, k0: number, k1: number): number {
  const T = scene.table, o = scene.octaves[hit.surface];
  const base = hit.surface * OCTAVES;
  let sum = 0;
  for (let k = k0; k < k1; k++) sum += w[k] * octave(T, o, k, hit.u * INV_U[base + k], hit.v * INV_V[base + k]);
  return sum;
}

/** 1 / the RMS of a texture sum: unit contrast wherever any octave is visible (the horizon stays grey). */
function gain(w: Float64Array, n: number): number {
  let norm = 0;
  for (let k = 0; k < n; k++) norm += w[k] * w[k];
  return CONTRAST / Math.sqrt(Math.max(norm, 1));
}

/** Texture value → grey level, tanh for hard edges. */
const grey = (x: number): number => 128 + 110 * Math.tanh(x);

/**
 * Renders one 8-bit greyscale frame (row-major, width*height bytes). Pixel (u, v) covers the square
 * of side 1 around (u, v) (OpenCV's convention: pixel centres at integer coordinates), sampled by
 * `supersample`² rays (default 2) and box-filtered, like a sensor integrating light. Octaves coarser
 * than a few pixels are smooth across a pixel and are evaluated once at its centre.
 */
export function renderFrame(scene: Scene, cam: Camera, pose: Pose, supersample = 2): Uint8Array {
  const { width: W, height: H, fx, fy, cx, cy } = cam;
  const img = new Uint8Array(W * H);
  const n = Math.max(1, Math.round(supersample));
  const f = Math.sqrt(fx * fy); // footprints and level of detail are in whole pixels
  const R = pose.R, C = pose.C;
  const centre: Hit = { surface: -1, u: 0, v: 0, fpU: 1, fpV: 1 };
  const sub: Hit = { surface: -1, u: 0, v: 0, fpU: 1, fpV: 1 };
  const w = new Float64Array(OCTAVES), px = new Float64Array(OCTAVES);
  const wSub = new Float64Array(OCTAVES), pxSub = new Float64Array(OCTAVES);
  const coarseSpacing = COARSE; // octaves at least this coarse are evaluated once per pixel
  for (let v = 0; v < H; v++) {
    for (let u = 0; u < W; u++) {
      cast(scene, R, C, (u - cx) / fx, (v - cy) / fy, f, centre);
      let g = 128;
      if (centre.surface >= 0) {
        const nk = weights(centre, w, px);
        const gn = gain(w, nk);
        if (n === 1) {
          g = grey(gn * noise(scene, centre, w, 0, nk));
        } else {
          let split = 0;
          while (split < nk && px[split] >= coarseSpacing) split++;
          const coarse = noise(scene, centre, w, 0, split);
          g = 0;
          for (let j = 0; j < n; j++) {
            const yn = (v - 0.5 + (j + 0.5) / n - cy) / fy;
            for (let i = 0; i < n; i++) {
              cast(scene, R, C, (u - 0.5 + (i + 0.5) / n - cx) / fx, yn, f, sub);
              if (sub.surface === centre.surface) {
                g += grey(gn * (coarse + noise(scene, sub, w, split, nk)));
              } else if (sub.surface >= 0) {
                const m = weights(sub, wSub, pxSub);
                g += grey(gain(wSub, m) * noise(scene, sub, wSub, 0, m));
              } else {
                g += 128;
              }
            }
          }
          g /= n * n;
        }
      }
      img[v * W + u] = g < 0 ? 0 : g > 255 ? 255 : Math.round(g);
    }
  }
  return img;
}

// ---------------------------------------------------------------------------------------------
// Poses and clips
// ---------------------------------------------------------------------------------------------

/**
 * Camera-to-world rotation of a level camera with planar yaw `yaw` (SPEC.md: counter-clockwise,
 * a left turn positive). Planar yaw = atan2(−R[0,2], R[2,2]), so this is a rotation by −yaw about
 * the camera's y (down) axis.
 */
export function yawRotation(yaw: number): number[] {
  const c = Math.cos(yaw), s = Math.sin(yaw);
  return [c, 0, -s, 0, 1, 0, s, 0, c];
}

/** Planar yaw of a camera-to-world rotation (row-major), as src/vo/planar.ts computes it. */
export const planarYaw = (R: ArrayLike<number>, offset = 0): number => Math.atan2(-R[offset + 2], R[offset + 8]);

export interface DrivingOptions extends SceneOptions {
  frames: number;
  /** Frame rate (Hz). Default 10. */
  fps?: number;
  /** Forward speed (m/s). */
  speed: number;
  /** Yaw rate (rad/s, left positive). */
  yawRate: number;
  camera?: Camera;
  /** n×n rays per pixel (default 2). */
  supersample?: number;
}

export interface SyntheticClip {
  frames: { data: Uint8Array; width: number; height: number }[];
  timestamps: Float64Array;
  intrinsics: { fx: number; fy: number; cx: number; cy: number };
  cameraHeight: number;
  /** True camera poses per frame (world = first camera). */
  poses: Pose[];
  /** True planar yaw per frame. */
  yaw: number[];
}

export const DEFAULT_CAMERA: Camera = { width: 640, height: 360, fx: 576, fy: 576, cx: 319.5, cy: 179.5 };

/**
 * A clip of a camera driving on a circle (or a straight line, or turning in place with speed 0):
 * constant speed and yaw rate from the origin, heading +z.
 */
export function drivingClip(opts: DrivingOptions): SyntheticClip {
  const cam = opts.camera ?? DEFAULT_CAMERA;
  const scene = makeScene(opts);
  const fps = opts.fps ?? 10;
  const poses: Pose[] = [], yaw: number[] = [];
  const frames: SyntheticClip['frames'] = [];
  const timestamps = new Float64Array(opts.frames);
  const still = opts.speed === 0 && opts.yawRate === 0;
  for (let k = 0; k < opts.frames; k++) {
    const t = k / fps;
    timestamps[k] = t;
    const psi = opts.yawRate * t;
    // Planar position (X forward, Y left) of a constant-curvature path, then world x = −Y, z = X.
    const X = Math.abs(opts.yawRate) < 1e-12 ? opts.speed * t : (opts.speed / opts.yawRate) * Math.sin(psi);
    const Y = Math.abs(opts.yawRate) < 1e-12 ? 0 : (opts.speed / opts.yawRate) * (1 - Math.cos(psi));
    const pose: Pose = { R: yawRotation(psi), C: [-Y, 0, X] };
    poses.push(pose);
    yaw.push(psi);
    // Standing still: every frame is the same picture (rendered once, copied).
    const data = still && k > 0 ? frames[0].data.slice() : renderFrame(scene, cam, pose, opts.supersample);
    frames.push({ data, width: cam.width, height: cam.height });
  }
  return {
    frames,
    timestamps,
    intrinsics: { fx: cam.fx, fy: cam.fy, cx: cam.cx, cy: cam.cy },
    cameraHeight: scene.cameraHeight,
    poses,
    yaw,
  };
}

// ---------------------------------------------------------------------------------------------
// Small rotation helpers for the assertions
// ---------------------------------------------------------------------------------------------

/** The 3×3 row-major block `k` of a flat array. */
export const block = (a: ArrayLike<number>, k: number): number[] => Array.from({ length: 9 }, (_, j) => a[k * 9 + j]);

/** Aᵀ B for row-major 3×3 matrices. */
export function mulTN(A: ArrayLike<number>, B: ArrayLike<number>): number[] {
  const out = new Array<number>(9).fill(0);
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) {
      let s = 0;
      for (let k = 0; k < 3; k++) s += A[k * 3 + i] * B[k * 3 + j];
      out[i * 3 + j] = s;
    }
  return out;
}

/** Rotation angle (radians) of a rotation matrix. */
export function rotationAngle(R: ArrayLike<number>): number {
  const c = (R[0] + R[4] + R[8] - 1) / 2;
  return Math.acos(Math.min(1, Math.max(-1, c)));
}

/** Angle (radians) between the rotations A and B: |log(Aᵀ B)|. */
export const rotationDistance = (A: ArrayLike<number>, B: ArrayLike<number>): number => rotationAngle(mulTN(A, B));

/** Writes a greyscale frame as binary PGM (for looking at a frame while debugging). */
export function toPgm(frame: { data: Uint8Array; width: number; height: number }): Uint8Array {
  const head = new TextEncoder().encode(`P5\n${frame.width} ${frame.height}\n255\n`);
  const out = new Uint8Array(head.length + frame.data.length);
  out.set(head);
  out.set(frame.data, head.length);
  return out;
}
