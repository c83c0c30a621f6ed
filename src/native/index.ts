/**
 * native/ — the typed JS face of the C++ engine (`native/` at the repo root, built by cmake-js or
 * node-gyp into build/Release). Loading is lazy so commands that need no native code (oracle,
 * grade) run even where the addon is not built. May import: core/.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import type { Intrinsics, PixelFrame } from '../core/clip.js';
import { InputError } from '../core/errors.js';

// The frame and camera types are the clip model's (core/clip.ts); re-exported for the engine's callers.
export type { Intrinsics, PixelFrame, VideoFrame } from '../core/clip.js';

export interface NativeClip {
  /** JPEG/PNG file paths, or greyscale buffers. */
  frames: (string | PixelFrame)[];
  /** Seconds, strictly increasing, one per frame. */
  timestamps: ArrayLike<number>;
  /** Default: core/clip.ts `defaultIntrinsics` (fx = fy = 0.9 W at the image centre, the reference's assumption). */
  intrinsics?: Intrinsics;
  /** Without intrinsics: a horizontal field of view (degrees), fx = fy = (W/2)/tan(hfov/2), centred. */
  hfovDeg?: number;
}

/**
 * A clip given as one video file (mp4, the benchmark's CARLA layout), decoded to grey inside the
 * engine (FFmpeg) on the calling thread — every worker decodes its own.
 */
export interface NativeVideoClip {
  video: string;
  /** The video frames to use (increasing, 0-based); default: all. */
  frameIndices?: ArrayLike<number>;
  /** Seconds, one per frame used; default: frame index / fps. */
  timestamps?: ArrayLike<number>;
  /** Frame rate for the default timestamps; default: the container's. */
  fps?: number;
  intrinsics?: Intrinsics;
  hfovDeg?: number;
}

/** What a video container declares (nothing decoded; `frames` may be 0 when it does not say). */
export interface VideoInfo {
  frames: number;
  fps: number;
  width: number;
  height: number;
}

/** The tracker's photometric stages (VoOptions.photometric). */
export const PHOTOMETRIC = ['none', 'pair', 'gain', 'match', 'global', 'equalize', 'clahe'] as const;
export type Photometric = (typeof PHOTOMETRIC)[number];

/** Engine options; every field has a documented default in native/vo/types.h. */
export interface VoOptions {
  detector?: 'fast' | 'orb';
  /**
   * Working resolution: frames are processed 1, 2 or 4 times smaller than stored (JPEG: libjpeg's
   * DCT scaling; otherwise an area average). Pixel options (minDistance, kltWindow, thresholds) are
   * in working pixels; the result's width, height, intrinsics and matches stay in stored pixels.
   * Default 1.
   */
  downsample?: 1 | 2 | 4;
  maxFeatures?: number;
  gridCols?: number;
  gridRows?: number;
  fastThreshold?: number;
  /**
   * Per-frame photometric normalisation before detection and KLT. Default 'none'. 'pair': per
   * frame pair, the new frame's mean/std matched to the previous frame's for KLT only
   * (gain-compensated tracking; detection sees the decoded frame). 'gain': each
   * frame's mean and standard deviation matched to the clip's first frame (per-frame gain and
   * offset changes cancel; the identity when brightness is constant; the choice for restyled or
   * auto-exposed video, see README). 'match': histogram matched to the
   * first frame (any global monotone tone curve); 'global': a fixed mean/std; 'equalize':
   * contrast-limited global histogram equalisation; 'clahe': 8×8 tiles; 'none'.
   * bench/photometric.mjs measures each.
   */
  photometric?: Photometric;
  /** Gaussian pre-blur sigma (px) of every frame before detection and KLT; 0 = off. */
  denoiseSigma?: number;
  /** FAST threshold = max(fastThreshold, factor × the frame's estimated noise sigma); 0 = off. */
  fastNoiseFactor?: number;
  minDistance?: number;
  kltWindow?: number;
  kltLevels?: number;
  /** KLT iterations per pyramid level (default 10; a level stops earlier once an update moves the point by less than 0.03 px). */
  kltIterations?: number;
  fbThreshold?: number;
  redetectRatio?: number;
  poseMethod?: 'ransac' | 'usac';
  ransacThreshold?: number;
  ransacConfidence?: number;
  minParallax?: number;
  minTracks?: number;
  /** 'road': metric scale from the road plane and cameraHeight; 'gt': from gtSpeeds; 'none': unit steps. */
  scale?: 'road' | 'gt' | 'none';
  cameraHeight?: number;
  /**
   * The road's downward normal in camera coordinates (x right, y down, z forward) from the
   * camera's calibrated mount; normalised by the engine, its y component must be at least half its
   * length. It places the horizon (road region) and gives the roll; the clip's median heading
   * still corrects the pitch. Default [0, 1, 0] (a level camera).
   */
  roadNormal?: [number, number, number];
  roadMargin?: number;
  /**
   * Road-distance fit: Cauchy scale for road-region points that move more than the plane predicts
   * (objects standing on the road are nearer than the road along their ray), relative to the other
   * side. Default 0.5; 1 = symmetric (the earlier fit).
   */
  roadAboveScale?: number;
  /**
   * Pairs whose road region kept too few tracks (frames far apart at speed: road points near the
   * camera move past KLT's reach) get their road distance by direct alignment of the two frames
   * under the plane homography (native/vo/scale/road_direct.cc). Default true.
   */
  directRoad?: boolean;
  /**
   * Check every pair's tracked road distance against its direct alignment and drop one the
   * alignment contradicts (default false: only where most pairs lack tracked road). On in the
   * wide-baseline preset (src/vo/config.ts): frames far apart let road tracks alias on repeating
   * texture, reading a fraction of the distance on many consistent tracks.
   */
  directCheck?: boolean;
  /**
   * Guided tracking: KLT starts each corner where the previous pair's motion (constant velocity)
   * and the road plane predict it, so road points that move tens of pixels a frame at highway speed
   * stay within its reach; a corner the guided search loses gets an unguided try. Default true.
   */
  guidedTracking?: boolean;
  /**
   * Refine every kept track at full working resolution with the patch's scale change (and gain,
   * offset) as parameters: frames 0.33 s apart grow near patches by 10-30%, which KLT's
   * translation-only window fits with an error shared by the pair's points. Default false; the
   * wide-baseline preset turns it on at full size (WIDE_BASELINE_FULL, vo/config.ts). Runs on the CPU after either device's KLT.
   */
  kltScale?: boolean;
  /** Fuse three-frame relative scales with the road distances (default true). */
  relativeScale?: boolean;
  /**
   * Refine the relative scales by a bundle adjustment over windows of up to 20 pairs (poses and
   * inverse depths, Huber reprojection errors; native/vo/scale/bundle_scale.cc). Default true; false:
   * the three-frame ratios alone.
   */
  bundleScale?: boolean;
  /**
   * With bundleScale, the road plane's pitch is taken from the bundle-adjusted headings rather
   * than the per-pair essential matrices' (default true): at highway speed the road points are
   * 25-50 m away and a 2 mrad pitch error is a 5% distance error (bench/RESULTS.md).
   */
  bundleNormal?: boolean;
  /**
   * Speed profile under a white-noise-jerk motion model (default true): road distances and
   * relative scales fused with their uncertainties, the jerk PSD and the measurements' noise scales
   * chosen per clip by maximum marginal likelihood (native/vo/scale/speed_smoother.cc). false: the older fusion.
   */
  speedSmoother?: boolean;
  /** Fixes the smoother's jerk power spectral density (m²/s⁵); default 0 = chosen per clip. */
  jerkPsd?: number;
  /**
   * Share of a relative scale's error variance that accumulates along a chain of ratios (0.01 ..
   * 0.99; default 0.2, calibrated against ground truth; near 1 = independent ratios). The rest is
   * each pair's own distance error, which the chain's running sum carries without accumulating.
   */
  ratioDrift?: number;
  /**
   * Standard deviation of the road distances' common level error (log; default 0.05, KITTI's
   * level errors are 2–6.5% rms). It widens the speed sigmas; the speeds do not depend on it.
   */
  roadBias?: number;
  /**
   * Correlation time (s) of the road distances' errors, modelled as AR(1) between consecutive
   * pairs (correlation exp(-dt / tau)). Default -1: chosen per clip, 0.1 s when a 1% likelihood-ratio
   * test rejects independent errors, else independent; 0 = independent; > 0 fixes it.
   */
  roadCorrTime?: number;
  /**
   * Centre (m²/s⁵) of a log-normal prior on the smoother's jerk PSD, ln q ~ N(ln jerkPsdPrior,
   * jerkPsdPriorWidth²); default 0 = none (maximum likelihood). 1.6 with width 1.25 is what the
   * benchmark's own smoothness calibration implies (bench/jerk-prior.mjs, bench/RESULTS.md "The speed profile").
   */
  jerkPsdPrior?: number;
  /** Standard deviation of ln q under that prior (default 1.25). */
  jerkPsdPriorWidth?: number;
  /** Ground-truth speed (m/s) per frame pair, for scale 'gt'. */
  gtSpeeds?: ArrayLike<number>;
  /** Return each pair's track points and inlier flags (`NativeResult.matches`; the clip viewer). Default false. */
  keepMatches?: boolean;
  /** Return the decoded grey frames used (`NativeResult.frames`: a video's, or image files' at their stored size). Default false. */
  keepFrames?: boolean;
  /**
   * Image files below their own size (`downsample` > 1): decode each at its stored size and
   * area-average it, as frames given as pixels and video frames are, instead of libjpeg's DCT
   * scaling (cheaper, other pixels). Resolution 'auto''s half-size run (vo/estimate.ts) sets it, so
   * it sees the pixels of the full-size run. Default false.
   */
  areaShrink?: boolean;
  /**
   * Decode image files, and detect FAST corners, through this addon instance's frame caches
   * (default true): a file with the same bytes as one decoded by an earlier call is not decoded
   * again, and a frame with the same pixels as one an earlier call detected on (at the same
   * threshold) takes that detection's corners.
   * Benchmark windows overlap (KITTI's, every 5 frames, share 7 of 10 frames with the window after
   * next at 10 frames, 26 of 31 with the next at all frames). The pixels are the same either way.
   */
  frameCache?: boolean;
  /**
   * Where pyramids, FAST and KLT run: 'cpu' (default) or 'gpu' (libegogeo_gpu.so beside the addon;
   * the engine throws '--device gpu: no CUDA device (…)' without it). Pose and scale stay on the CPU.
   * 'auto' is for callers: `decideDevice` (device.ts).
   */
  device?: Device;
}

/** How the addon reads each option (`optionTable()`): a number, an integer, a boolean, one of a list, or a value it checks itself. */
export type OptionKind = 'number' | 'integer' | 'boolean' | 'choice' | 'vector3' | 'numbers';

/**
 * Every VoOptions key with its kind. `satisfies` makes the compiler hold this list equal to the
 * interface; test/native/options.test.ts holds it equal to the addon's own table (names, kinds),
 * so an option exists in TS exactly when the engine reads it. Defaults and ranges are the addon's.
 */
export const VO_OPTION_KINDS = {
  detector: 'choice',
  maxFeatures: 'integer',
  gridCols: 'integer',
  gridRows: 'integer',
  fastThreshold: 'integer',
  minDistance: 'integer',
  downsample: 'integer',
  kltWindow: 'integer',
  kltLevels: 'integer',
  kltIterations: 'integer',
  fbThreshold: 'number',
  redetectRatio: 'number',
  poseMethod: 'choice',
  ransacThreshold: 'number',
  ransacConfidence: 'number',
  minParallax: 'number',
  minTracks: 'integer',
  scale: 'choice',
  cameraHeight: 'number',
  roadMargin: 'number',
  roadAboveScale: 'number',
  directRoad: 'boolean',
  directCheck: 'boolean',
  guidedTracking: 'boolean',
  kltScale: 'boolean',
  relativeScale: 'boolean',
  bundleScale: 'boolean',
  bundleNormal: 'boolean',
  speedSmoother: 'boolean',
  jerkPsd: 'number',
  ratioDrift: 'number',
  roadBias: 'number',
  roadCorrTime: 'number',
  jerkPsdPrior: 'number',
  jerkPsdPriorWidth: 'number',
  photometric: 'choice',
  denoiseSigma: 'number',
  fastNoiseFactor: 'number',
  roadNormal: 'vector3',
  keepMatches: 'boolean',
  device: 'choice',
  keepFrames: 'boolean',
  areaShrink: 'boolean',
  frameCache: 'boolean',
  gtSpeeds: 'numbers',
} as const satisfies Record<keyof VoOptions, OptionKind>;

/**
 * The frame caches of one addon instance (each worker thread loads its own): of the decoded-frame
 * cache, lookups that hit and missed since it loaded and the frames and pixel bytes it holds; the
 * same of the FAST corner lists (`corners`).
 */
export interface FrameCacheStats {
  hits: number;
  misses: number;
  frames: number;
  bytes: number;
  corners: { hits: number; misses: number; entries: number; bytes: number };
}

/** One row of the addon's option table. */
export interface OptionInfo {
  name: string;
  kind: OptionKind;
  default?: number | boolean | string;
  min?: number;
  max?: number;
  choices?: string[];
}

/** `--device`: 'auto' = the GPU when its library loads, sees a device and passes the self-check (device.ts). */
export const DEVICES = ['auto', 'cpu', 'gpu'] as const;
export type DeviceChoice = (typeof DEVICES)[number];
export type Device = Exclude<DeviceChoice, 'auto'>;

/** What the addon's GPU loader finds (native/vo/track/gpu_backend.h). */
export interface GpuInfo {
  /** libegogeo_gpu.so was found and loaded (built only where nvcc exists). */
  loaded: boolean;
  /** The library it tried: $EGOGEO_GPU_LIB, else beside the addon. */
  path: string;
  /** The file the dynamic loader mapped for it (what a run record hashes; '' when it did not load). */
  file: string;
  devices: number;
  /** Device 0's name ('' when none). */
  device: string;
  /** Why the GPU path is unusable ('' when a device is there). */
  reason: string;
  /**
   * The library's device self-test (egogeo_gpu_create proves FAST, the corner selection and KLT
   * against its host reference): 'ok', or its one-line failure; '' when it did not run (no device).
   */
  selftest: string;
  /**
   * What this process's shared device contexts did so far: `--device gpu` clips of one frame size
   * and options share one context (up to 16 at a time), and calls that arrive together go to the
   * device as one batch: contexts created, library calls, the jobs they carried (jobs > calls:
   * clips were batched).
   */
  shared: { contexts: number; calls: number; jobs: number };
}

/**
 * One frame pair's correspondences (with `keepMatches`): track k sits at (prev[2k], prev[2k+1]) in
 * the pair's first frame and at (curr[2k], curr[2k+1]) in its second (pixels); ids[k] is its track
 * id; inliers[k] = 1 when the pose stage kept it (essential matrix, or the rotation-only model).
 */
export interface PairMatches {
  prev: Float32Array;
  curr: Float32Array;
  ids: Int32Array;
  inliers: Uint8Array;
}

export type PairQuality = 'ok' | 'low_parallax' | 'degenerate' | 'too_few_tracks';

export interface NativeResult {
  width: number;
  height: number;
  intrinsics: Intrinsics;
  /** Camera-to-world rotation per frame, row-major 3×3 (world = first camera; x right, y down, z forward). */
  rotations: Float64Array;
  /** Camera centre per frame in metres. */
  positions: Float64Array;
  /**
   * speedSigma: posterior standard deviation of the pair's mean speed (m/s; 0 for scale 'gt' and
   * still pairs, NaN for 'none'). The scale stage's own measurements, before fusion (scale 'road'
   * only; 0 = none): roadDistance (m) from the road plane and roadSigma, the nominal standard
   * deviation of its log; logRatio, the three-frame relative scale log(distance / previous pair's
   * distance), and ratioSigma, its standard error. They are `smoothSpeed`'s inputs. directDistance
   * (m; 0 = not run) and directScore: the pair's direct road alignment where it ran, used or not.
   */
  pairs: {
    quality: PairQuality; tracks: number; inliers: number; roadPoints: number; parallax: number; distance: number; speedSigma: number;
    roadDistance: number; roadSigma: number; logRatio: number; ratioSigma: number; directDistance: number; directScore: number;
  }[];
  /**
   * Per frame: speed (m/s) and longitudinal acceleration (m/s²) from the pair distances, with their
   * posterior standard deviations (NaN when unknown); jerkPsd, noiseScale and roadCorrTime: what the speed
   * smoother chose for this clip (0 when it did not run).
   */
  speedProfile: { speed: Float64Array; speedSigma: Float64Array; accel: Float64Array; accelSigma: Float64Array; jerkPsd: number; noiseScale: number; roadCorrTime: number };
  tracks: { meanLength: number; created: number };
  roadNormal: [number, number, number];
  /**
   * The windowed bundle adjustment's robust reprojection error in pixels (the mean over its windows
   * of each one's residual sigma; 0 when it did not run). Where the clip turns it is lowest at the
   * true focal length: a check of the intrinsics (bench/turn-drift.mjs --residual).
   */
  bundleResidual: number;
  /** Milliseconds per stage over the whole clip. */
  timing: { decode: number; detect: number; track: number; pose: number; scale: number; total: number };
  /** Video clips only: what was decoded (frame count, container frame rate, 0 when none). */
  video?: { frames: number; fps: number };
  /** Video clips only: the video frames used (indices) and their timestamps (seconds). */
  frameIndices?: Int32Array;
  timestamps?: Float64Array;
  /** With options.keepMatches: per pair, its track points and inlier flags. */
  matches?: PairMatches[];
  /** With options.keepFrames: the decoded 8-bit grey frames used (width*height bytes each; a video's, or image files' at their stored size; none for frames given as pixels). */
  frames?: Buffer[];
}

/**
 * One synthetic clip for the street renderer (native/render; defaults and ranges in
 * native/render/types.h). World: X forward, Y left, Z up, yaw counter-clockwise; the camera sits
 * `mountHeight` above the road at each pose, looking along its yaw, tilted down by `pitchDeg`.
 */
export interface RenderRequest {
  /** One pose per frame: seconds (strictly increasing), metres, radians. */
  trajectory: { t: ArrayLike<number>; x: ArrayLike<number>; y: ArrayLike<number>; yaw: ArrayLike<number> };
  /** Default 1280×720, core/clip.ts `defaultIntrinsics` (or from hfovDeg), 1.5 m, pitch 0. */
  camera?: { width?: number; height?: number; fx?: number; fy?: number; cx?: number; cy?: number; hfovDeg?: number; mountHeight?: number; pitchDeg?: number };
  world?: {
    seed?: number;
    environment?: 'urban' | 'suburban' | 'highway' | 'flat';
    lanesPerDirection?: number;
    laneWidth?: number;
    egoLane?: number;
    laneWander?: number;
    sidewalkWidth?: number;
    buildingDensity?: number;
    poleSpacing?: number;
    textureContrast?: number;
    sunAzimuthDeg?: number;
    sunElevationDeg?: number;
  };
  /** Off by default: per-pixel noise std (grey levels), per-frame log-gain std, motion-blur samples. */
  photometric?: { noise?: number; exposure?: number; blurSamples?: number; shutter?: number };
  /** Anti-aliased spheres drawn over the scene at world points (Z up). */
  markers?: { x: number; y: number; z: number; radius?: number; value?: number }[];
  /** Default: raw frames only. `videoPath`: also an mp4 (FFmpeg, MPEG-4 part 2, mp4v). */
  output?: { pixels?: boolean; jpeg?: boolean; jpegQuality?: number; videoPath?: string; videoFps?: number };
}

export interface RenderResult {
  width: number;
  height: number;
  intrinsics: Intrinsics;
  /** 8-bit greyscale frames (width*height bytes each), when output.pixels. */
  frames: Buffer[];
  /** JPEG files, when output.jpeg. */
  jpegs: Buffer[];
  /** Exposure gain applied per frame. */
  gains: number[];
  /** Milliseconds: world build, rendering, JPEG encoding, video writing, total. */
  timing: { world: number; render: number; encode: number; video: number; total: number };
}

interface Addon {
  processClip(clip: NativeClip | NativeVideoClip, options?: VoOptions): NativeResult;
  processClipAsync(clip: NativeClip | NativeVideoClip, options?: VoOptions): Promise<NativeResult>;
  smoothSpeed(m: SpeedMeasurements): SmoothedSpeed;
  kltTrack(prev: PixelFrame, next: PixelFrame, points: Float32Array, options: KltOptions): { points: Float32Array; status: Uint8Array };
  bandBlur(frame: PixelFrame, options: BandBlurOptions): { pixels: Float32Array; own: boolean };
  fastCorners(frame: PixelFrame, options: FastCornerOptions): FastCorners;
  baselineSignals(r: BaselineRequest): BaselineSignals;
  baselineSignalsAsync(r: BaselineRequest): Promise<BaselineSignals>;
  referenceFrames(r: { video: string; frameIndices: number[]; paths: string[] }): { written: number };
  probeVideo(path: string): VideoInfo;
  renderClip(request: RenderRequest): RenderResult;
  writeMp4(path: string, frames: PixelFrame[], fps: number): void;
  renderClipAsync(request: RenderRequest): Promise<RenderResult>;
  /** OpenCV's thread count for the whole process: the module sets 1 at its first load (native/addon.cc). */
  setThreads(n: number): void;
  threads(): number;
  /** OpenBLAS's thread count (OpenCV's LAPACK): 1 from the module's first load, -1 without OpenBLAS. */
  blasThreads(): number;
  /** Threads this load's async calls have started (native/work_pool.h): lowest idle first, at most UV_THREADPOOL_SIZE (4). */
  asyncThreads(): number;
  /** The huge-page Mat allocator's counters (native/huge_pages.h); null where it is off (ASan builds, EGOGEO_HUGE_PAGES=0). */
  hugePages(): HugePageStats | null;
  gpuInfo(): GpuInfo;
  optionTable(): OptionInfo[];
  frameCacheStats(): FrameCacheStats;
  opencvVersion: string;
  /** How the addon was compiled: 'release' (optimised), 'debug' or 'asan' (sanitizer build). */
  buildType: 'release' | 'debug' | 'asan';
}

const CANDIDATES = ['../../build/Release/egogeo_native.node', '../../build/Debug/egogeo_native.node'];
let addon: Addon | undefined;
let addonFile: string | undefined;

/** The file the addon was loaded from (undefined before `native()` has loaded it). */
export function nativePath(): string | undefined {
  return addonFile;
}

/** The files `native()` tries, in order ($EGOGEO_NATIVE alone when set). */
function addonCandidates(): string[] {
  const override = process.env.EGOGEO_NATIVE;
  return override ? [override] : CANDIDATES.map((p) => fileURLToPath(new URL(p, import.meta.url)));
}

/**
 * The engine a run used: egogeo's package version, the addon build (a hash of its file) and where
 * tracking ran. On the GPU also the device's name and the GPU library (a hash of the file the
 * addon loads): the same addon can load another libegogeo_gpu.so, and a device's arithmetic is
 * its own, so a resume or a merge across any of these would mix two engines' answers.
 */
export interface EngineVersion {
  egogeo: string;
  /** The first 16 hex digits of the addon file's SHA-256 ('not built' without one). */
  addon: string;
  /** Where pyramids, FAST and KLT ran (absent in records before it was recorded: the CPU). */
  device?: Device;
  /** device 'gpu': the GPU's name as the library gives it ("NVIDIA H200 (sm_90, 139 GiB)", "host reference (…)"). */
  gpu_device?: string;
  /** device 'gpu': the first 16 hex digits of the SHA-256 of the libegogeo_gpu.so file loaded. */
  gpu_library?: string;
}

/** The first 16 hex digits of a file's SHA-256. */
const fileId = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16);

const engineVersionCache = new Map<Device, EngineVersion>();
/**
 * This process's engine on `device`. For the CPU it is found as `native()` would load the addon,
 * without loading it (~0.35 s saved); for the GPU the addon is loaded and asked which library
 * file it maps and which device it sees (one line, an InputError, when there is none).
 */
export function engineVersion(device: Device = 'cpu'): EngineVersion {
  const cached = engineVersionCache.get(device);
  if (cached) return cached;
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  const file = addonFile ?? addonCandidates().find((p) => existsSync(p));
  const base = { egogeo: pkg.version, addon: file ? fileId(file) : 'not built' };
  let v: EngineVersion;
  if (device === 'cpu') v = { ...base, device: 'cpu' };
  else {
    const g = gpuInfo();
    if (g.devices === 0 || !g.file) throw new InputError(`--device gpu: no CUDA device (${g.reason || `${g.path} loads but sees no device`})`);
    v = { ...base, device: 'gpu', gpu_device: g.device, gpu_library: fileId(g.file) };
  }
  engineVersionCache.set(device, v);
  return v;
}

/** An engine as one line: 'egogeo 1.2.0, addon 0123…, cpu' or '…, gpu NVIDIA H200 (…) with libegogeo_gpu.so 4567…'. */
export function engineLine(e: EngineVersion | undefined): string {
  if (!e) return 'an egogeo that did not record its engine';
  return `egogeo ${e.egogeo}, addon ${e.addon}, ${deviceLine(e)}`;
}

/** Where an engine tracked, as one phrase: 'cpu', or 'gpu <device> with libegogeo_gpu.so <hash>' (records without a device: the CPU). */
export function deviceLine(e: EngineVersion): string {
  return (e.device ?? 'cpu') === 'cpu' ? 'cpu' : `gpu ${e.gpu_device ?? '(device not recorded)'} with libegogeo_gpu.so ${e.gpu_library ?? '(not recorded)'}`;
}

/** The loaded addon; throws one clear line when it has not been built. */
export function native(): Addon {
  if (addon) return addon;
  const require = createRequire(import.meta.url);
  const paths = addonCandidates();
  for (const p of paths) {
    if (existsSync(p)) {
      addon = require(p) as Addon;
      addonFile = p;
      return addon;
    }
  }
  throw new Error(`the native engine is not built (looked for ${paths.join(', ')}); run \`npm run build:native\``);
}

/**
 * Runs VO over a clip synchronously (in a worker thread) — no per-frame round trips. A video clip
 * is decoded here too; its result carries `video`, `frameIndices` and `timestamps`.
 */
export function processClip(clip: NativeClip | NativeVideoClip, options: VoOptions = {}): NativeResult {
  return native().processClip(clip, options);
}

/** kltTrack's options (defaults: native/klt_defaults.h, the tracker's). */
export interface KltOptions {
  /** Window side (px). */
  window?: number;
  /** Pyramid levels above the base. */
  levels?: number;
  /** Iterations per level at most. */
  iterations?: number;
  /** Stop when a step moves less than this (px). */
  epsilon?: number;
  /** Starting guesses, x, y pairs (OpenCV's OPTFLOW_USE_INITIAL_FLOW). */
  initial?: Float32Array;
  /** 'opencv': cv::calcOpticalFlowPyrLK on the same pyramids instead of the tracker's own KLT. */
  reference?: 'egogeo' | 'opencv';
  /**
   * The widest instruction set the tracker's window sums may use, each where the CPU has it
   * (default 'best'); every choice gives the same bits (tests compare them).
   */
  instructions?: 'best' | 'avx512' | 'avx2' | 'sse2' | 'scalar';
}

/**
 * The tracker's pyramidal KLT (native/vo/track/klt.cc) from `prev` into `next` for x, y pairs: where each
 * went and whether it was found. With `reference: 'opencv'`, OpenCV's on the same pyramids.
 */
export function kltTrack(prev: PixelFrame, next: PixelFrame, points: Float32Array, options: KltOptions = {}): { points: Float32Array; status: Uint8Array } {
  return native().kltTrack(prev, next, points, options);
}

/** bandBlur's options. */
export interface BandBlurOptions {
  /** First row of the band (default 0). */
  top?: number;
  /** Gaussian sigma in pixels (default 3; the alignment uses 3 and 1). */
  sigma?: number;
  /** 'opencv': cv::GaussianBlur on the float frame instead of native/vo/track/band_blur.cc. */
  reference?: 'egogeo' | 'opencv';
}

/**
 * The direct road alignment's Gaussian blur of the rows `top`.. of an 8-bit frame (row-major
 * floats), and whether it was computed by band_blur.cc itself (`own`: a CPU with AVX2 and FMA) or
 * by OpenCV. Both give the same floats (tests compare them).
 */
export function bandBlur(frame: PixelFrame, options: BandBlurOptions = {}): { pixels: Float32Array; own: boolean } {
  return native().bandBlur(frame, options);
}

/** fastCorners' options. */
export interface FastCornerOptions {
  /** FAST threshold, 0..255 (default: the tracker's, 12). */
  threshold?: number;
  /** 'opencv': cv::FAST instead of native/vo/track/fast.cc. */
  reference?: 'egogeo' | 'opencv';
}

/** FAST corners: x, y pairs and their scores, in cv::FAST's order. */
export interface FastCorners {
  points: Float32Array;
  scores: Float32Array;
  /** Whether fast.cc computed them itself (x86-64 with AVX2) rather than OpenCV. */
  own: boolean;
}

/**
 * The tracker's FAST-9/16 corners with non-maximum suppression (native/vo/track/fast.cc): the list
 * cv::FAST(frame, threshold, true) gives, which `reference: 'opencv'` returns (tests compare them).
 */
export function fastCorners(frame: PixelFrame, options: FastCornerOptions = {}): FastCorners {
  return native().fastCorners(frame, options);
}

/** Per-pair measurements for `smoothSpeed` (see native/vo/binding.cc SmoothSpeed). */
export interface SpeedMeasurements {
  /** Seconds, one more than the pairs. */
  timestamps: ArrayLike<number>;
  /** Road-plane distance per pair (m; not > 0 = none) and the standard deviation of its log. */
  distances: ArrayLike<number>;
  distanceSigma: ArrayLike<number>;
  /** Log of pair k's distance over pair k−1's and its standard deviation (not > 0 = none; entry 0 unused). */
  logRatios: ArrayLike<number>;
  ratioSigma: ArrayLike<number>;
  /** Per pair: false where the engine saw no motion (quality 'low_parallax': speed 0); default all true. */
  moving?: boolean[];
  /** Fixes the jerk PSD (m²/s⁵); default chosen by maximum likelihood. */
  jerkPsd?: number;
  /** The ratios' drift share (`VoOptions.ratioDrift`; default 0.2). */
  ratioDrift?: number;
  /** The road distances' common level error (`VoOptions.roadBias`; default 0.05). */
  roadBias?: number;
  /** The road errors' correlation time (`VoOptions.roadCorrTime`; default -1, chosen per clip). */
  roadCorrTime?: number;
  /** A log-normal prior on the jerk PSD (`VoOptions.jerkPsdPrior`, `jerkPsdPriorWidth`; default none). */
  jerkPsdPrior?: number;
  jerkPsdPriorWidth?: number;
}

/** What `smoothSpeed` returns: per pair the posterior mean speed and its sigma, and the choices it made. */
export interface SmoothedSpeed {
  speed: Float64Array;
  speedSigma: Float64Array;
  jerkPsd: number;
  roadScale: number;
  ratioScale: number;
  /** The road errors' correlation time it modelled (s; 0 = independent). */
  roadCorrTime: number;
  /**
   * −2 log marginal likelihood at its choice, up to a constant shared by every call on the same
   * measurements (the last pass's robust weights): with `jerkPsd` fixed, the profile over q that
   * maximum likelihood maximises (bench/q-average.mjs averages over it).
   */
  neg2LogMl: number;
}

/**
 * The engine's scale fusion and jerk-driven speed smoother on given measurements (tests, studies):
 * the same preparation as the engine's (native/vo/scale/scale_fusion.cc), so the engine's own pair
 * measurements with `moving` give the engine's speeds.
 */
export function smoothSpeed(m: SpeedMeasurements): SmoothedSpeed {
  return native().smoothSpeed(m);
}

/**
 * A published baseline's per-pair signals, computed as the reference's Python computes them
 * (native/baselines/proxy.cc): image paths (JPEGs decoded to BGR and converted as cv2.imread +
 * cvtColor does) or a video's frames (its decoder's grey), in the order given.
 */
export interface BaselineRequest {
  method: 'vo-proxy' | 'flow-heuristic';
  frames?: string[];
  video?: string;
  frameIndices?: number[];
}
/** vo-proxy: yawDeg, dispMag; flow-heuristic: turnScore, expScore, motionMag (one entry per pair). */
export interface BaselineSignals {
  frames: number;
  yawDeg?: Float64Array;
  dispMag?: Float64Array;
  turnScore?: Float64Array;
  expScore?: Float64Array;
  motionMag?: Float64Array;
}

export function baselineSignals(r: BaselineRequest): BaselineSignals {
  return native().baselineSignals(r);
}

/**
 * A video's frames as the reference extracts them for a VLM (`extract_video_frames`: VideoCapture's
 * BGR, cv2.imencode JPEG at quality 95, byte for byte), written to `paths`, one per index.
 */
export function referenceFrames(r: { video: string; frameIndices: number[]; paths: string[] }): { written: number } {
  return native().referenceFrames(r);
}

/** `baselineSignals` on the addon's own threads (native/work_pool.h). */
export function baselineSignalsAsync(r: BaselineRequest): Promise<BaselineSignals> {
  return native().baselineSignalsAsync(r);
}

/** Runs VO over a clip (frames or a video) on the addon's own threads (native/work_pool.h), leaving the event loop free. */
export function processClipAsync(clip: NativeClip | NativeVideoClip, options: VoOptions = {}): Promise<NativeResult> {
  return native().processClipAsync(clip, options);
}

/** A video's frame count, frame rate and size as its container declares them (nothing decoded). */
export function probeVideo(path: string): VideoInfo {
  return native().probeVideo(path);
}

/** Renders a synthetic clip synchronously (in a worker thread). */
export function renderClip(request: RenderRequest): RenderResult {
  return native().renderClip(request);
}

/**
 * 8-bit grey frames (one size, even width and height) → an mp4 at `path` (MPEG-4 part 2, 'mp4v',
 * FFmpeg: what `renderClip`'s videoPath and `egogeo synth --video` write), complete or not there.
 */
export function writeMp4(path: string, frames: PixelFrame[], fps: number): void {
  native().writeMp4(path, frames, fps);
}

/** Renders a synthetic clip on the addon's own threads (native/work_pool.h); argument errors reject the promise. */
export function renderClipAsync(request: RenderRequest): Promise<RenderResult> {
  return native().renderClipAsync(request);
}

/** This thread's addon instance's decoded-frame cache (VoOptions.frameCache). */
/**
 * Threads this load's async calls (`processClipAsync`, `renderClipAsync`, `baselineSignalsAsync`)
 * have started: each call takes the lowest-numbered idle one, so a caller that awaits each call
 * runs them all on one thread (and its malloc arena), at most UV_THREADPOOL_SIZE (default 4).
 */
export function asyncThreads(): number {
  return native().asyncThreads();
}

/** OpenCV's image buffers of 256 KiB and more, served from huge-page slabs (native/huge_pages.h), process-wide. */
export interface HugePageStats {
  /** Address space reserved in slabs (pages are faulted in only as blocks are used). */
  slabBytes: number;
  blocksInUse: number;
  /** Blocks handed out from slabs since the process started, reused ones included. */
  blocksServed: number;
}

/** The huge-page allocator's counters, or null where it is off (sanitizer builds, EGOGEO_HUGE_PAGES=0). */
export function hugePages(): HugePageStats | null {
  return native().hugePages();
}

export function frameCacheStats(): FrameCacheStats {
  return native().frameCacheStats();
}

/**
 * Every processClip option as the engine reads it — name, kind, default, range or choices — in
 * the order it reads them. An options object with any other key is refused (one TypeError naming it).
 */
export function optionTable(): OptionInfo[] {
  return native().optionTable();
}

/** The addon's view of the CUDA library and device (loads and unloads the library each call). */
export function gpuInfo(): GpuInfo {
  return native().gpuInfo();
}
