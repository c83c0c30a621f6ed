/**
 * doctor/ — what is installed and whether it works, each check with the fix when it does not:
 * Node, OpenCV (version, the modules the engine links), the native addon (and how it was built),
 * video decoding inside the addon, the optional @u4/opencv4nodejs, a CUDA device, ../shared.
 * `required` checks decide `egogeo doctor`'s exit status; the others only inform. May import:
 * native/, datasets/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type GpuInfo, gpuInfo, native, nativePath } from '../native/index.js';
import { gpuSelfCheck } from '../native/device.js';

export type Status = 'ok' | 'warn' | 'fail';

export interface Check {
  name: string;
  status: Status;
  /** What was found (one line). */
  detail: string;
  /** The command or step that fixes it, when status is not ok. */
  fix?: string;
  /** A failing required check makes `egogeo doctor` exit 1. */
  required: boolean;
}

/** The repository (or installed package) root: dist/doctor/ or src/doctor/ → two levels up. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The OpenCV modules the native engine links (CMakeLists.txt's find_package). */
export const ENGINE_MODULES = ['core', 'imgproc', 'video', 'calib3d', 'features2d'];

const APT = 'sudo apt-get install -y libopencv-dev libjpeg-dev libpng-dev libavformat-dev libavcodec-dev libavutil-dev libswscale-dev pkg-config cmake g++ make python3';
const first = (e: unknown) => String((e as Error)?.message ?? e).split('\n')[0];

function sh(cmd: string, argv: string[]): string | null {
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 ? r.stdout.trim() : null;
}

function nodeCheck(): Check {
  const major = Number(process.versions.node.split('.')[0]);
  return major >= 20
    ? { name: 'node', status: 'ok', detail: `${process.version} (needs >= 20)`, required: true }
    : { name: 'node', status: 'fail', detail: `${process.version}; egogeo needs Node 20 or newer`, fix: 'install Node 20 (https://nodejs.org)', required: true };
}

function opencvCheck(): Check {
  const version = sh('pkg-config', ['--modversion', 'opencv4']);
  if (version === null) {
    return { name: 'opencv', status: 'fail', detail: 'OpenCV 4 development files not found (pkg-config opencv4)', fix: APT, required: true };
  }
  const libs = sh('pkg-config', ['--libs', 'opencv4']) ?? '';
  const have = new Set([...libs.matchAll(/-lopencv_(\w+)/g)].map((m) => m[1]));
  const missing = ENGINE_MODULES.filter((m) => !have.has(m));
  if (missing.length > 0) {
    return { name: 'opencv', status: 'fail', detail: `OpenCV ${version} lacks ${missing.join(', ')}`, fix: APT, required: true };
  }
  return { name: 'opencv', status: 'ok', detail: `${version}, ${have.size} modules (the engine uses ${ENGINE_MODULES.join(', ')})`, required: true };
}

function addonCheck(): Check {
  try {
    const a = native();
    const where = nativePath()?.replace(PACKAGE_ROOT, '') ?? '?';
    return { name: 'addon', status: 'ok', detail: `${where}: ${a.buildType ?? 'unknown'} build against OpenCV ${a.opencvVersion}`, required: true };
  } catch (e) {
    return { name: 'addon', status: 'fail', detail: first(e).replace(/; run `npm run build:native`$/, ''), fix: 'npm run build:native', required: true };
  }
}

/** Renders a 4-frame mp4 with the engine (FFmpeg's encoder) and runs VO on it through the engine's own FFmpeg decoder. */
function videoCheck(addonOk: boolean): Check {
  const name = 'video decoding';
  if (!addonOk) return { name, status: 'fail', detail: 'needs the addon', fix: 'npm run build:native', required: true };
  const dir = mkdtempSync(join(tmpdir(), 'egogeo-doctor-'));
  try {
    const a = native();
    const path = join(dir, 'probe.mp4');
    const n = 4;
    const ramp = (f: (i: number) => number) => Array.from({ length: n }, (_, i) => f(i));
    a.renderClip({
      trajectory: { t: ramp((i) => i * 0.1), x: ramp((i) => i * 0.5), y: ramp(() => 0), yaw: ramp(() => 0) },
      camera: { width: 160, height: 96 },
      world: { seed: 1 },
      output: { pixels: false, videoPath: path, videoFps: 10 },
    });
    const info = a.probeVideo(path);
    const r = a.processClip({ video: path }, { scale: 'none' });
    if (r.video?.frames !== n) throw new Error(`decoded ${r.video?.frames} of ${n} frames`);
    return { name, status: 'ok', detail: `mp4 written and decoded in the addon (FFmpeg): ${n} frames ${info.width}×${info.height} at ${info.fps} fps`, required: true };
  } catch (e) {
    return {
      name,
      status: 'fail',
      detail: first(e),
      fix: 'the engine writes and decodes mp4 with FFmpeg, loaded at first use (Debian: apt-get install -y libavformat-dev libavcodec-dev libavutil-dev libswscale-dev), then npm run build:native',
      required: true,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The optional JS-side OpenCV binding, loaded in a child process (it may only load once per process). */
function opencv4nodejsCheck(): Check {
  const name = '@u4/opencv4nodejs';
  const script = `
    process.env.OPENCV4NODEJS_DISABLE_EXTERNAL_MEM_TRACKING = '1';
    const { dirname, join } = require('node:path');
    const main = require.resolve('@u4/opencv4nodejs');
    const cv = require(join(dirname(main), '../../build/Release/opencv4nodejs.node'));
    const v = cv.version;
    console.log(v ? v.major + '.' + v.minor + '.' + v.revision : '?', typeof cv.VideoCapture === 'function');`;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: PACKAGE_ROOT, encoding: 'utf8', timeout: 30_000 });
  const why = 'optional: only JavaScript-side video decoding (src/datasets/video.ts) uses it';
  if (r.status !== 0) {
    const err = (r.stderr ?? '').split('\n').find((l) => /Error|Cannot find/.test(l)) ?? `exit ${r.status}`;
    return { name, status: 'warn', detail: `not built (${err.trim().slice(0, 120)}); ${why}`, fix: 'npm run setup -- --with-opencv4nodejs (builds it against the system OpenCV)', required: false };
  }
  const [version, video] = r.stdout.trim().split(' ');
  return { name, status: 'ok', detail: `loads, OpenCV ${version}${video === 'true' ? ', VideoCapture' : ''} (${why})`, required: false };
}

/**
 * The GPU path: whether libegogeo_gpu was built and loads beside the addon, the device it sees, the
 * library's device self-test (egogeo_gpu_create: ok or its one-line failure) and the self-check
 * `--device auto|gpu` runs before using it (GPU vs CPU tracks on a rendered clip).
 */
function cudaCheck(addonOk: boolean): Check {
  const name = 'cuda';
  const smi = sh('nvidia-smi', ['-L']);
  const listed = smi ? `; nvidia-smi: ${smi.split('\n').map((l) => l.replace(/ \(UUID.*\)$/, '').trim()).join('; ')}` : '';
  if (!addonOk) return { name, status: 'ok', detail: `GPU library not checked (needs the addon)${listed}`, required: false };
  let g: GpuInfo;
  try {
    g = gpuInfo();
  } catch (e) {
    return { name, status: 'warn', detail: `the addon cannot report its GPU library (${first(e)})`, fix: 'npm run build:native', required: false };
  }
  const lib = g.path.replace(PACKAGE_ROOT, '');
  if (g.devices > 0 && g.selftest && g.selftest !== 'ok') {
    return {
      name,
      status: 'warn',
      detail: `${lib} loads; device ${g.device}; device self-test FAILED: ${g.selftest}: --device auto runs on the CPU, --device gpu refuses${listed}`,
      fix: 'report it with this line; ../shared/gpu and bench/gpu/harness.py (DEVELOPERS.md) show where the device differs',
      required: false,
    };
  }
  if (g.devices > 0) {
    const check = gpuSelfCheck();
    if (check.ok) return { name, status: 'ok', detail: `${lib} loads; device ${g.device}; device self-test ok; self-check passed (${check.detail}): --device auto uses it${listed}`, required: false };
    return {
      name,
      status: 'warn',
      detail: `${lib} loads; device ${g.device}; device self-test ok; self-check FAILED (${check.detail}): --device auto runs on the CPU, --device gpu refuses${listed}`,
      fix: 'report it with this line; bench/gpu/harness.py (DEVELOPERS.md) shows where the tracks differ',
      required: false,
    };
  }
  if (g.loaded) return { name, status: 'ok', detail: `${lib} loads but sees no CUDA device (--device auto runs on the CPU)${listed}`, required: false };
  return {
    name,
    status: 'ok',
    detail: `GPU library not built or not loadable (${g.reason.slice(0, 160)}); --device auto runs on the CPU${listed}`,
    ...(smi ? { fix: 'install the CUDA toolkit (nvcc) and run npm run build:native' } : {}),
    required: false,
  };
}

function sharedCheck(): Check {
  const shared = join(PACKAGE_ROOT, '..', 'shared');
  if (existsSync(join(shared, 'golden'))) {
    const kitti = existsSync(join(shared, 'data', 'kitti')) ? ', KITTI frames' : '';
    return { name: '../shared', status: 'ok', detail: `${shared} (golden files${kitti})`, required: false };
  }
  return {
    name: '../shared',
    status: 'warn',
    detail: `${shared} is missing: parity and KITTI tests and benchmarks skip`,
    fix: 'put the project\'s shared data folder beside the repository (../shared)',
    required: false,
  };
}

/** Every check, in the order `egogeo doctor` prints them. */
export function runChecks(): Check[] {
  const addon = addonCheck();
  return [nodeCheck(), opencvCheck(), addon, videoCheck(addon.status === 'ok'), opencv4nodejsCheck(), cudaCheck(addon.status === 'ok'), sharedCheck()];
}

/** One line per check, then the fixes; `ok` is false when a required check failed. */
export function formatChecks(checks: Check[]): { text: string; ok: boolean } {
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines = checks.map((c) => `${c.status.toUpperCase().padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}${c.fix ? `\n      ${' '.repeat(width)}  fix: ${c.fix}` : ''}`);
  const ok = checks.every((c) => c.status !== 'fail' || !c.required);
  const failed = checks.filter((c) => c.status === 'fail' && c.required).map((c) => c.name);
  lines.push(ok ? 'egogeo doctor: all required checks OK' : `egogeo doctor: ${failed.join(', ')} failed (fixes above)`);
  return { text: `${lines.join('\n')}\n`, ok };
}
