// Each point's own three-frame relative scale against the truth (KITTI windows, the published
// stand-in's two domains, sparse-smoother's rendered sets under --cache): where in
// the image, at which depth and at which flow the ratios lean (bench/studies/43). For every
// triple of frames whose two pairs are ok, each inlier point tracked through all three gives
// log(z_before / z_after), its depth in the middle frame from the pair before and from the pair
// after, each at unit baseline, as native/vo/scale/relative_scale.cc computes it (rays within
// 0.5 degrees left out). The geometry comes from the engine's chained poses. Its error is taken
// against log(d_k / d_{k-1}) of the truth (KITTI's steadied, bench/lib/truth-sets.mjs), for
// pairs of at least 0.5 m. Printed: the
// median error per bin of depth (m, the truth's scale), normalised image radius, vertical and
// horizontal position, and flow (px) in the pair after.
// Run: npm run build && node bench/sparse-smoother.mjs (the rendered sets) && node bench/ratio-points.mjs
//      [--sets 00,01+06,published-sim,published-transferred,carla,nus] [--frames 10,all]
//      [--options '{"kltScale":false}' (addon options over the run's)] [--out bench/results/ratio-points.json]
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { estimateClip } from '../dist/vo/estimate.js';
import { engineConfig, engineInput } from '../dist/vo/config.js';
import { loadFrames } from '../dist/vo/frames.js';
import { measuredWith } from './lib/provenance.mjs';
import { clipsOf, truthLengths } from './lib/truth-sets.mjs';

const { values: args } = parseArgs({
  options: {
    sets: { type: 'string', default: '00,01+06,published-sim,published-transferred,carla,nus' },
    frames: { type: 'string', default: '10,all' },
    options: { type: 'string', default: '{}' },
    cache: { type: 'string', default: join(tmpdir(), 'egogeo-sparse-smoother') },
    out: { type: 'string', default: new URL('./results/ratio-points.json', import.meta.url).pathname },
  },
});
const overrides = JSON.parse(args.options); // addon options over the run's (VoOptions), e.g. '{"kltScale":false}'
const BINS = { z: [0, 5, 10, 20, 40, 80, Infinity], r: [0, 0.1, 0.2, 0.4, 0.6, Infinity], v: [-Infinity, -0.1, 0, 0.1, 0.2, Infinity], u: [-Infinity, -0.4, -0.1, 0.1, 0.4, Infinity], flow: [0, 5, 10, 20, 40, 80, Infinity] };
const mul = (R, v) => [0, 1, 2].map((r) => R[3 * r] * v[0] + R[3 * r + 1] * v[1] + R[3 * r + 2] * v[2]);
const mulT = (R, v) => [0, 1, 2].map((c) => R[c] * v[0] + R[3 + c] * v[1] + R[6 + c] * v[2]);
const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

/** Depths [z_a, z_b] of a point seen along rays b1 (frame A) and b2 (frame B), X_B = R X_A + t; null when the rays are within 0.5 degrees. */
function triangulate(b1, b2, R, t) {
  const a = mul(R, b1);
  const aa = dot(a, a), ab = -dot(a, b2), bb = dot(b2, b2), ra = -dot(a, t), rb = dot(b2, t);
  const det = aa * bb - ab * ab;
  if (det <= 1e-12 || dot(a, b2) / Math.sqrt(aa * bb) > Math.cos((0.5 * Math.PI) / 180)) return null;
  const za = (ra * bb - ab * rb) / det, zb = (aa * rb - ab * ra) / det;
  return za > 0 && zb > 0 ? [za, zb] : null;
}

/** Pair a -> b of the engine's chained poses: X_b = R X_a + t, t of unit length. */
function relative(nat, a, b) {
  const rot = (i) => Array.from(nat.rotations.subarray(9 * i, 9 * i + 9)); // camera-to-world
  const centre = (i) => Array.from(nat.positions.subarray(3 * i, 3 * i + 3));
  const Ra = rot(a), Rb = rot(b), ca = centre(a), cb = centre(b);
  const R = Array.from({ length: 9 }, (_, j) => [0, 1, 2].reduce((s, m) => s + Rb[3 * m + Math.floor(j / 3)] * Ra[3 * m + (j % 3)], 0));
  const t = mulT(Rb, [ca[0] - cb[0], ca[1] - cb[1], ca[2] - cb[2]]);
  const len = Math.hypot(...t);
  return { R, t: t.map((v) => v / len) };
}

/** Every point's error in one set at `F` frames ('all' or a count). */
function pointErrors(clips, F) {
  const rows = [];
  for (const c of clips) {
    const { clip, options } = engineInput(loadFrames(c), engineConfig({ frames: F === 'all' ? null : Number(F), scale: 'road' }));
    const nat = estimateClip(clip, { ...options, ...overrides, keepMatches: true }).native;
    const K = nat.intrinsics, ts = clip.timestamps, n = ts.length;
    const d = truthLengths(c, ts);
    if (!d) continue;
    const ray = (m, i) => [(m[2 * i] - K.cx) / K.fx, (m[2 * i + 1] - K.cy) / K.fy, 1];
    for (let k = 1; k + 1 < n; k++) {
      if (nat.pairs[k - 1].quality !== 'ok' || nat.pairs[k].quality !== 'ok' || d[k] < 0.5 || d[k - 1] < 0.5) continue;
      const m0 = nat.matches[k - 1], m1 = nat.matches[k];
      const p0 = relative(nat, k - 1, k), p1 = relative(nat, k, k + 1);
      const next = new Map();
      for (let j = 0; j < m1.ids.length; j++) if (m1.inliers[j]) next.set(m1.ids[j], j);
      const truth = Math.log(d[k] / d[k - 1]);
      for (let i = 0; i < m0.ids.length; i++) {
        const j = m0.inliers[i] ? next.get(m0.ids[i]) : undefined;
        if (j === undefined) continue;
        const before = triangulate(ray(m0.prev, i), ray(m0.curr, i), p0.R, p0.t);
        const after = triangulate(ray(m1.prev, j), ray(m1.curr, j), p1.R, p1.t);
        if (!before || !after) continue;
        const [x, y] = ray(m1.prev, j);
        rows.push({
          e: Math.log(before[1] / after[0]) - truth,
          z: after[0] * d[k],
          r: Math.hypot(x, y),
          u: x,
          v: y,
          flow: Math.hypot(m1.curr[2 * j] - m1.prev[2 * j], m1.curr[2 * j + 1] - m1.prev[2 * j + 1]),
        });
      }
    }
  }
  return rows;
}

const median = (a) => {
  const s = [...a].sort((p, q) => p - q);
  return s.length % 2 ? s[s.length >> 1] : 0.5 * (s[s.length / 2 - 1] + s[s.length / 2]);
};
const results = { ...measuredWith(), options: overrides, sets: {} };
for (const set of args.sets.split(',')) {
  const clips = clipsOf(set, args.cache);
  for (const F of args.frames.split(',')) {
    const rows = pointErrors(clips, F);
    const row = { points: rows.length, median: median(rows.map((p) => p.e)), bins: {} };
    for (const [key, edges] of Object.entries(BINS))
      row.bins[key] = edges.slice(0, -1).map((lo, j) => {
        const s = rows.filter((p) => p[key] >= lo && p[key] < edges[j + 1]).map((p) => p.e);
        return { from: lo, to: edges[j + 1], n: s.length, median: s.length ? median(s) : null };
      });
    results.sets[`${set}/${F}`] = row;
    console.log(`${set}/${F}: ${rows.length} points, median error ${(100 * row.median).toFixed(3)}%`);
    for (const [key, bins] of Object.entries(row.bins)) console.log(`  ${key.padEnd(5)} ${bins.map((b) => `[${b.from},${b.to}) ${b.n} ${b.median === null ? '-' : `${(100 * b.median).toFixed(2)}%`}`).join('  ')}`);
  }
}
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, JSON.stringify(results, null, 2) + '\n');
