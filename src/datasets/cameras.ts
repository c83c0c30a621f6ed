/**
 * Cameras: what a clip's camera is and where that came from. One place for the per-source
 * defaults, the `--cameras FILE` overrides and the record that goes into the run manifest.
 *
 * `--cameras FILE` (JSON) maps a source to a camera, overriding what the dataset says:
 *   {"carla": {"hfov_deg": 90, "height": 1.65}, "nuscenes": {"fx": 1266.4, "fy": 1266.4, "cx": 816.3, "cy": 491.5, "height": 1.51}}
 * Either a horizontal field of view (principal point at the image centre) or fx, fy, cx, cy;
 * `height` is the camera's height above the road in metres. Every field is optional.
 * May import: core/.
 */
import { type Camera, DEFAULT_CAMERA_TEXT } from '../core/clip.js';
import { InputError } from '../core/errors.js';
import { KITTI_CAMERA_HEIGHT } from './kitti.js';
import { readInputText } from '../io/safety.js';

/** The manifest's record of a clip's camera (snake_case, as the benchmark's files); `from` 'default' when unknown. */
export function cameraRecord(c: Camera): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (c.intrinsics) Object.assign(out, c.intrinsics);
  else if (c.hfovDeg !== undefined) Object.assign(out, { hfov_deg: c.hfovDeg, principal_point: 'centre' });
  else out.intrinsics = `${DEFAULT_CAMERA_TEXT} (the reference baselines\u2019 assumption)`;
  if (c.height !== undefined) out.height = c.height;
  if (c.roadNormal) out.road_normal = c.roadNormal.map((v) => Math.round(v * 1e6) / 1e6);
  out.from = c.from ?? 'default';
  return out;
}

/**
 * CARLA publishes no calibration for the benchmark's videos: CARLA's own camera default (90°
 * horizontal field of view, principal point at the centre) and a stated mount height, assumed to
 * be a car roof's as KITTI's rig has it.
 */
export const CARLA_DEFAULT_CAMERA: Readonly<Camera> = { hfovDeg: 90, height: KITTI_CAMERA_HEIGHT, from: `CARLA default (90° hfov, centred; height ${KITTI_CAMERA_HEIGHT} m, assumed)` };

export type CameraOverrides = ReadonlyMap<string, Omit<Camera, 'from'>>;

const FIELDS = new Set(['hfov_deg', 'fx', 'fy', 'cx', 'cy', 'height']);

/** Reads a `--cameras` file; any problem is one line naming the file and the field. */
export function readCamerasFile(path: string): CameraOverrides {
  const text = readInputText(path, 'cameras file');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new InputError(`${path}: invalid JSON (${(e as Error).message.split('\n')[0]})`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new InputError(`${path}: expected {"<source>": {hfov_deg | fx, fy, cx, cy, height}, …}`);
  const out = new Map<string, Omit<Camera, 'from'>>();
  for (const [source, spec] of Object.entries(doc as Record<string, unknown>)) {
    const where = `${path}: '${source}'`;
    if (!spec || typeof spec !== 'object' || Array.isArray(spec)) throw new InputError(`${where} must be an object {hfov_deg | fx, fy, cx, cy, height}`);
    const s = spec as Record<string, unknown>;
    for (const k of Object.keys(s)) if (!FIELDS.has(k)) throw new InputError(`${where}: unknown field '${k}' (expected ${[...FIELDS].join(', ')})`);
    const num = (k: string, lo: number, hi: number): number | undefined => {
      const v = s[k];
      if (v === undefined) return undefined;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < lo || v > hi) throw new InputError(`${where}.${k} must be a number in [${lo}, ${hi}], got ${JSON.stringify(v)}`);
      return v;
    };
    const cam: Omit<Camera, 'from'> = {};
    const hfov = num('hfov_deg', 1, 179);
    const k = ['fx', 'fy', 'cx', 'cy'].map((f) => num(f, f.startsWith('f') ? 1e-3 : 0, 1e6));
    const givenK = k.filter((v) => v !== undefined).length;
    if (givenK !== 0 && givenK !== 4) throw new InputError(`${where}: give all of fx, fy, cx, cy (or hfov_deg)`);
    if (givenK === 4 && hfov !== undefined) throw new InputError(`${where}: give hfov_deg or fx, fy, cx, cy, not both`);
    if (givenK === 4) cam.intrinsics = { fx: k[0]!, fy: k[1]!, cx: k[2]!, cy: k[3]! };
    if (hfov !== undefined) cam.hfovDeg = hfov;
    const h = num('height', 0.05, 100);
    if (h !== undefined) cam.height = h;
    out.set(source, cam);
  }
  return out;
}

/** `base` with the override's fields on top (intrinsics and field of view replace each other). */
export function overrideCamera(base: Camera, o: Omit<Camera, 'from'> | undefined, label: string): Camera {
  if (!o) return base;
  const out: Camera = { ...base };
  if (o.intrinsics) {
    out.intrinsics = o.intrinsics;
    delete out.hfovDeg;
  } else if (o.hfovDeg !== undefined) {
    out.hfovDeg = o.hfovDeg;
    delete out.intrinsics;
  }
  if (o.height !== undefined) out.height = o.height;
  out.from = `${label}${base.from ? ` over ${base.from}` : ''}`;
  return out;
}
