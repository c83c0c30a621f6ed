/**
 * Where pyramids, FAST and KLT run (`--device`). The CUDA path is used only after it has shown, in
 * this process, that it tracks like the CPU: a small rendered clip is tracked on both and compared
 * against the tolerances of the GPU harness (native/gpu/tolerances.json, bench/gpu/harness.py).
 * Before that, the library's own device self-test (run by egogeo_gpu_create, reported by
 * `gpuInfo().selftest`) must have passed. `auto` falls back to the CPU with one note (that line)
 * when the library, the device, its self-test or the check fails;
 * `gpu` stops with one line. The decision (`decideDevice`) takes its probes as arguments, so the
 * logic is tested without a GPU.
 */
import { existsSync, readFileSync } from 'node:fs';
import { InputError } from '../core/errors.js';
import { type Device, type DeviceChoice, type GpuInfo, gpuInfo, type NativeResult, type PairMatches, processClip, renderClip } from './index.js';

/** The agreement GPU tracks must reach against the CPU's (shared with bench/gpu/harness.py). */
export interface GpuTolerances {
  median_endpoint_diff_px: number;
  kept_by_both_of_either: number;
}
export const GPU_TOLERANCES: GpuTolerances = JSON.parse(readFileSync(new URL('../../native/gpu/tolerances.json', import.meta.url), 'utf8'));

/** The outcome of the GPU self-check. */
export interface GpuCheck {
  ok: boolean;
  /** One line: the figures against the tolerances, or why the check could not run. */
  detail: string;
  /** Tracks kept by both devices over tracks kept by either (null when none was compared). */
  keptByBothOfEither: number | null;
  /** Median distance between the two devices' track end points, px (null when none). */
  medianEndpointDiffPx: number | null;
  tracks: { cpu: number; gpu: number; both: number };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Compares two runs' tracks pair by pair: a track is the same on both when its id is, and it starts
 * at the same point (within the end-point tolerance, so ids that drift apart are not paired).
 */
export function compareTracks(cpu: readonly PairMatches[], gpu: readonly PairMatches[], tol: GpuTolerances = GPU_TOLERANCES): GpuCheck {
  let nCpu = 0, nGpu = 0, both = 0;
  const diffs: number[] = [];
  if (cpu.length !== gpu.length) return fail(`the CPU gives ${cpu.length} pairs of tracks, the GPU ${gpu.length}`);
  for (let p = 0; p < cpu.length; p++) {
    const a = cpu[p], b = gpu[p];
    const at = new Map<number, number>();
    for (let k = 0; k < b.ids.length; k++) at.set(b.ids[k], k);
    nCpu += a.ids.length;
    nGpu += b.ids.length;
    for (let k = 0; k < a.ids.length; k++) {
      const j = at.get(a.ids[k]);
      if (j === undefined) continue;
      if (Math.hypot(a.prev[2 * k] - b.prev[2 * j], a.prev[2 * k + 1] - b.prev[2 * j + 1]) > tol.median_endpoint_diff_px) continue;
      both++;
      diffs.push(Math.hypot(a.curr[2 * k] - b.curr[2 * j], a.curr[2 * k + 1] - b.curr[2 * j + 1]));
    }
  }
  const either = nCpu + nGpu - both;
  const kept = either > 0 ? both / either : null;
  const med = diffs.length ? median(diffs) : null;
  const ok = kept !== null && med !== null && kept >= tol.kept_by_both_of_either && med <= tol.median_endpoint_diff_px;
  const detail =
    kept === null || med === null
      ? `no track to compare (CPU ${nCpu}, GPU ${nGpu})`
      : `${(100 * kept).toFixed(1)}% of tracks kept by both (needs ≥ ${100 * tol.kept_by_both_of_either}%), median end-point difference ${med.toFixed(3)} px (needs ≤ ${tol.median_endpoint_diff_px}) over ${both} tracks`;
  return { ok, detail, keptByBothOfEither: kept, medianEndpointDiffPx: med, tracks: { cpu: nCpu, gpu: nGpu, both } };
}

function fail(detail: string): GpuCheck {
  return { ok: false, detail, keptByBothOfEither: null, medianEndpointDiffPx: null, tracks: { cpu: 0, gpu: 0, both: 0 } };
}

/**
 * Tracks a 4-frame rendered clip (640×360, 8 m/s with a gentle turn: 3 pairs) on the CPU and the
 * GPU and compares the tracks (`compareTracks`). Never throws: a GPU error is a failed check.
 * `devices` is the pair compared (tests compare the CPU with itself).
 */
export function gpuSelfCheck(devices: readonly [Device, Device] = ['cpu', 'gpu']): GpuCheck {
  const t = [0, 0.1, 0.2, 0.3];
  const r = renderClip({
    trajectory: { t, x: t.map((s) => 8 * s), y: t.map((s) => 0.4 * s * s), yaw: t.map((s) => 0.1 * s) },
    camera: { width: 640, height: 360, mountHeight: 1.5 },
    world: { seed: 7, environment: 'urban' },
    output: { pixels: true },
  });
  const clip = { frames: r.frames.map((data) => ({ data, width: r.width, height: r.height })), timestamps: t, intrinsics: r.intrinsics };
  let cpu: NativeResult, gpu: NativeResult;
  try {
    cpu = processClip(clip, { device: devices[0], keepMatches: true, cameraHeight: 1.5 });
    gpu = processClip(clip, { device: devices[1], keepMatches: true, cameraHeight: 1.5 });
  } catch (e) {
    return fail(`the GPU path failed on the check clip: ${((e as Error).message ?? String(e)).split('\n')[0]}`);
  }
  return compareTracks(cpu.matches ?? [], gpu.matches ?? []);
}

/**
 * Where tracking runs when nobody says: `auto`, the GPU where it loads, sees a device and passes
 * the self-check, else the CPU. The CLI's `--device` default and the library's (vo/config.ts
 * ENGINE_DEFAULTS) are this one value.
 */
export const DEFAULT_DEVICE: DeviceChoice = 'auto';

/** What `decideDevice` asks of the machine (injected in tests). */
export interface DeviceProbes {
  /** An NVIDIA driver node exists (/dev/nvidiactl; /dev/dxg under WSL): cheap, no library loaded. */
  driverNode: () => boolean;
  gpuInfo: () => GpuInfo;
  selfCheck: () => GpuCheck;
}

export const MACHINE: DeviceProbes = {
  // EGOGEO_GPU_REFERENCE=1: the library's host reference stands in for a device (egogeo_gpu.h), no driver needed.
  driverNode: () => process.env.EGOGEO_GPU_REFERENCE === '1' || ['/dev/nvidiactl', '/dev/dxg'].some((p) => existsSync(p)),
  gpuInfo,
  selfCheck: gpuSelfCheck,
};

export interface DeviceDecision {
  device: Device;
  /** For 'auto' on the CPU where a GPU path exists or was tried: one line saying why (else null). */
  note: string | null;
  /** The self-check's result, when it ran. */
  check: GpuCheck | null;
}

/**
 * A `--device` value → the device the engine gets. 'gpu' without a usable, checked GPU throws one
 * InputError line; 'auto' then runs on the CPU, with a note when a GPU was there but not used.
 * `flag` names the option in messages.
 */
export function decideDevice(choice: DeviceChoice | undefined, probes: DeviceProbes = MACHINE, flag = '--device'): DeviceDecision {
  const c = choice ?? DEFAULT_DEVICE;
  if (c === 'cpu') return { device: 'cpu', note: null, check: null };
  // No driver node: no CUDA device, and no need to load the addon and OpenCV (~0.35 s) to hear so.
  if (c === 'auto' && !probes.driverNode()) return { device: 'cpu', note: null, check: null };
  const g = probes.gpuInfo();
  if (g.devices === 0) {
    const why = g.loaded ? `${g.path} loads but sees no CUDA device` : `no GPU library (${g.reason || 'none found'})`;
    if (c === 'gpu') throw new InputError(`${flag} gpu: no CUDA device (${g.reason || why})`);
    return { device: 'cpu', note: `${flag} auto: running on the CPU: ${why}`, check: null };
  }
  // The library's own self-test (egogeo_gpu_create: FAST, selection and KLT against its host
  // reference) first: a device that fails it is not asked to track the check clip.
  if (g.selftest && g.selftest !== 'ok') {
    if (c === 'gpu') throw new InputError(`${flag} gpu: ${g.device}: ${g.selftest}`);
    return { device: 'cpu', note: `${flag} auto: running on the CPU: ${g.device}: ${g.selftest}`, check: null };
  }
  const check = probes.selfCheck();
  if (check.ok) return { device: 'gpu', note: null, check };
  if (c === 'gpu') throw new InputError(`${flag} gpu: the GPU self-check failed on ${g.device}: ${check.detail}`);
  return { device: 'cpu', note: `${flag} auto: running on the CPU: the GPU self-check failed on ${g.device}: ${check.detail}`, check };
}
