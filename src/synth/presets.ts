/**
 * Camera and timing presets after the benchmark's two sources.
 *  - carla: the CARLA clips — 1280×720 (the resized FPV videos), 10 Hz, 31 frames over 3.0 s,
 *    camera 1.5 m above the road; core/clip.ts `defaultIntrinsics` (0.9·W at the centre), the reference baselines'
 *    assumption, so an estimator that is told nothing is exact.
 *  - nuscenes: nuScenes CAM_FRONT — 1600×900, ~12 Hz with a few milliseconds of timestamp jitter,
 *    frames until 3.0 s are covered, calibrated-like intrinsics, camera 1.51 m above the road,
 *    some sensor noise and exposure drift.
 */
import { defaultIntrinsics } from '../core/clip.js';
import type { RenderRequest } from '../native/index.js';
import type { Rng } from '../core/random.js';

export const PRESET_NAMES = ['carla', 'nuscenes'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

export interface Preset {
  name: PresetName;
  camera: Required<Pick<NonNullable<RenderRequest['camera']>, 'width' | 'height' | 'fx' | 'fy' | 'cx' | 'cy' | 'mountHeight' | 'pitchDeg'>>;
  /** Nominal frame rate (Hz), also the mp4's frame rate. */
  hz: number;
  photometric: NonNullable<RenderRequest['photometric']>;
  /** Clip-relative frame timestamps (s), first 0, covering the 3.0 s clip. */
  timestamps(rng: Rng): number[];
}

export const CLIP_SECONDS = 3.0;

export const PRESETS: Readonly<Record<PresetName, Preset>> = {
  carla: {
    name: 'carla',
    camera: { width: 1280, height: 720, ...defaultIntrinsics(1280, 720), mountHeight: 1.5, pitchDeg: 0 },
    hz: 10,
    photometric: { noise: 1.5, exposure: 0, blurSamples: 1 },
    timestamps: () => Array.from({ length: 31 }, (_, k) => Math.round(k * 1e6 * 0.1) / 1e6),
  },
  nuscenes: {
    name: 'nuscenes',
    camera: { width: 1600, height: 900, fx: 1266.417, fy: 1266.417, cx: 816.267, cy: 491.507, mountHeight: 1.51, pitchDeg: 0 },
    hz: 12,
    photometric: { noise: 3, exposure: 0.04, blurSamples: 1 },
    timestamps: (rng) => {
      const ts = [0];
      for (let k = 1; ts[ts.length - 1] < CLIP_SECONDS; k++) {
        // nominal 12 Hz, a few ms of jitter (rounded to microseconds like nuScenes' timestamps)
        ts.push(Math.round((k / 12 + rng.uniform(-0.004, 0.004)) * 1e6) / 1e6);
      }
      return ts;
    },
  },
};

export function isPresetName(s: string): s is PresetName {
  return (PRESET_NAMES as readonly string[]).includes(s);
}
