/**
 * audit/turn — the a-priori bound of a question set that states a turn ("the camera turns 90°
 * right; where is the object that was in view now?"), from the camera's geometry alone. Pure.
 * May import: core/.
 *
 * Derivation (pinhole camera, square pixels, principal point at the centre):
 *   fy = (H/2) / tan(vfov/2),  fx = fy,  horizontal half-angle h = atan((W/2) / fx).
 * For 640×480 at a 120° vertical field of view: fy = 240 / tan 60° = 138.564 px and
 * h = atan(320 / 138.564) = 66.5868°. An object seen in the first frame lies at a bearing
 * θ ∈ [−h, h] (degrees, clockwise = right positive). After the camera turns T degrees to the right
 * (a left turn is T < 0: the mirror image), its bearing is φ = θ − T, wrapped to (−180°, 180°]. The
 * answer is the sector of the circle φ falls in: 4 sectors of 90° centred on front (0°), right
 * (90°), behind (180°), left (−90°), or 8 sectors of 45° (front, front-right, right, back-right,
 * behind, back-left, left, front-left). With θ uniform over the view, the chance of each answer is
 * the length of θ's interval that lands in its sector divided by 2h; the answers a turn can produce
 * are those with a positive share, and the best score reachable from the stated turn alone is the
 * largest share (always answering the most likely sector).
 */
import { InputError } from '../core/errors.js';

export const SECTORS: Record<4 | 8, { name: string; centre: number }[]> = {
  4: [
    { name: 'front', centre: 0 },
    { name: 'right', centre: 90 },
    { name: 'behind', centre: 180 },
    { name: 'left', centre: -90 },
  ],
  8: [
    { name: 'front', centre: 0 },
    { name: 'front-right', centre: 45 },
    { name: 'right', centre: 90 },
    { name: 'back-right', centre: 135 },
    { name: 'behind', centre: 180 },
    { name: 'back-left', centre: -135 },
    { name: 'left', centre: -90 },
    { name: 'front-left', centre: -45 },
  ],
};

export interface Camera {
  width: number;
  height: number;
  vfovDeg: number;
}

export interface CameraGeometry {
  /** focal length in pixels (fy from the vertical field of view; fx = fy) */
  focal: number;
  halfAngleDeg: number;
  hfovDeg: number;
}

export function cameraGeometry(c: Camera): CameraGeometry {
  for (const [k, v] of [['--width', c.width], ['--height', c.height]] as const) {
    if (!Number.isFinite(v) || v <= 0) throw new InputError(`${k}: expected a positive number of pixels, got ${v}`);
  }
  // Below 0.01° the view's bearings are lost to rounding next to the turn (no camera is that narrow).
  if (!Number.isFinite(c.vfovDeg) || c.vfovDeg < 0.01 || c.vfovDeg >= 180) throw new InputError(`--vfov: expected degrees in [0.01, 180), got ${c.vfovDeg}`);
  const focal = c.height / 2 / Math.tan((c.vfovDeg * Math.PI) / 360);
  const half = (Math.atan(c.width / 2 / focal) * 180) / Math.PI;
  return { focal, halfAngleDeg: half, hfovDeg: 2 * half };
}

export interface TurnAnswer {
  answer: string;
  /** degrees of the start bearing θ that give this answer */
  degrees: number;
  /** share of the view: degrees / 2h */
  share: number;
}

export interface TurnBound {
  turn: number;
  /** the bearings after the turn, [−h − T, h − T] (before wrapping) */
  after: [number, number];
  /** reachable answers, in sector order, each with its share */
  reachable: TurnAnswer[];
  /** the best score from the stated turn alone: the largest share */
  bound: number;
  best: string;
  /** a uniform guess over the sectors, 1 / number of sectors */
  chance: number;
}

const overlap = (a0: number, a1: number, b0: number, b1: number): number => Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));

/** Reachable answers and the bound of one turn (degrees, right positive) for half-angle h. */
export function turnBound(halfAngleDeg: number, turn: number, sectors: 4 | 8 = 4): TurnBound {
  if (!Number.isFinite(turn) || Math.abs(turn) > 360) throw new InputError(`--turns: expected degrees in [-360, 360], got ${turn}`);
  const h = halfAngleDeg;
  const lo = -h - turn;
  const hi = h - turn;
  const list = SECTORS[sectors];
  const width = 360 / sectors;
  const reachable: TurnAnswer[] = [];
  for (const s of list) {
    let deg = 0;
    // The sector repeats every 360°; the interval spans at most 2h < 180° around −T.
    for (let k = -3; k <= 3; k++) deg += overlap(lo, hi, s.centre - width / 2 + 360 * k, s.centre + width / 2 + 360 * k);
    if (deg > 1e-12) reachable.push({ answer: s.name, degrees: deg, share: deg / (2 * h) });
  }
  let best = reachable[0];
  for (const r of reachable) if (r.share > best.share + 1e-12) best = r;
  return { turn, after: [lo, hi], reachable, bound: best.share, best: best.answer, chance: 1 / sectors };
}

export interface TurnReport extends CameraGeometry {
  camera: Camera;
  sectors: 4 | 8;
  turns: TurnBound[];
  /** the mean bound over the turns (a question set with these turns in equal numbers) */
  mean_bound: number;
}

export function turnGeometry(camera: Camera, turns: readonly number[], sectors: 4 | 8 = 4): TurnReport {
  if (turns.length === 0) throw new InputError('--turns: expected a comma-separated list of degrees');
  const g = cameraGeometry(camera);
  const tb = turns.map((t) => turnBound(g.halfAngleDeg, t, sectors));
  return { camera, sectors, ...g, turns: tb, mean_bound: tb.reduce((a, b) => a + b.bound, 0) / tb.length };
}
