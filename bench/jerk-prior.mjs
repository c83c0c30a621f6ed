// The jerk-PSD prior the benchmark's own question file implies (VoOptions.jerkPsdPrior). Its
// smoothness thresholds were calibrated on its data pool to split clips into thirds by mean |jerk|
// (config/questions.yaml: 1.25 and 2.15 m/s^3 at P33 and P67). For white-noise jerk of PSD q this
// simulates 3-s clips (8 m/s, random initial acceleration), runs them through the oracle exactly as
// the benchmark does (10 Hz grid, Savitzky-Golay after every differentiation) and reads off the
// q whose median mean |jerk| is the pool's median, and the spread of ln q between clips that the
// pool's P33..P67 width leaves after the within-q spread. No shared data is used.
// Run: npm run build && node bench/jerk-prior.mjs [--clips 400]   → bench/results/jerk-prior.json
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadQuestions } from '../dist/oracle/index.js';
import { computeDynamics } from '../dist/oracle/dynamics.js';
import { summaryFeatures } from '../dist/oracle/features.js';
import { mulberry32 } from '../dist/core/random.js';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({ options: { clips: { type: 'string', default: '400' } } });
const clips = Number(args.clips);
const smooth = loadQuestions().questions.find((q) => q.id === 'driving_smoothness');
const [p33, p67] = smooth.params.thresholds;

/** mean |jerk| of `clips` simulated clips with white-noise jerk of PSD q (m^2/s^5). */
function meanAbsJerk(q, seed) {
  const rand = mulberry32(seed);
  const g = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand()); // Box-Muller
  const h = 0.005, n = Math.round(3 / h);
  const out = [];
  for (let c = 0; c < clips; c++) {
    let a = 0.5 * g(), v = 8, x = 0;
    const xs = [0];
    for (let i = 0; i < n; i++) {
      a += Math.sqrt(q * h) * g();
      v += a * h;
      x += v * h;
      xs.push(x);
    }
    const t = Float64Array.from({ length: 31 }, (_, k) => k * 0.1);
    const X = Float64Array.from(t, (tt) => xs[Math.round(tt / h)]);
    out.push(summaryFeatures(computeDynamics({ id: 'sim', t, x: X, y: new Float64Array(31), yaw: new Float64Array(31) })).mean_abs_jerk);
  }
  return out.sort((u, w) => u - w);
}

const at = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const rows = [];
for (const q of [0.05, 0.1, 0.2, 0.5, 1, 1.6, 2, 3, 5, 10]) {
  const j = meanAbsJerk(q, 2026);
  rows.push({ q, median: at(j, 0.5), p33: at(j, 1 / 3), p67: at(j, 2 / 3) });
  console.log(`q ${String(q).padEnd(5)} mean |jerk| median ${at(j, 0.5).toFixed(2)}  P33 ${at(j, 1 / 3).toFixed(2)}  P67 ${at(j, 2 / 3).toFixed(2)}`);
}
// The pool's median mean |jerk| (the geometric mean of P33 and P67, as the log scale is the natural
// one here) against the simulated medians: interpolate ln q in ln(median).
const target = Math.sqrt(p33 * p67);
let q0 = NaN, within = NaN;
for (let i = 0; i + 1 < rows.length; i++) {
  const [a, b] = [rows[i], rows[i + 1]];
  if (a.median <= target && target <= b.median) {
    const u = Math.log(target / a.median) / Math.log(b.median / a.median);
    q0 = Math.exp(Math.log(a.q) + u * Math.log(b.q / a.q));
    within = Math.log(a.p67 / a.p33) * (1 - u) + Math.log(b.p67 / b.p33) * u;
    break;
  }
}
// mean |jerk| grows as q^beta (beta from the table); the pool's P33..P67 width in ln(mean |jerk|)
// minus the within-q width, in quadrature, is the between-clip width; P33..P67 spans 0.861 sd.
const beta = Math.log(rows.at(-1).median / rows[0].median) / Math.log(rows.at(-1).q / rows[0].q);
const poolWidth = Math.log(p67 / p33);
const between = Math.sqrt(Math.max(0, poolWidth ** 2 - within ** 2));
const sdLnQ = between / 0.861 / beta;
console.log(`\nquestion file: mean |jerk| P33 ${p33}, P67 ${p67} m/s^3 -> median ${target.toFixed(2)}`);
console.log(`implied prior: q0 = ${q0.toFixed(2)} m^2/s^5, sd of ln q = ${sdLnQ.toFixed(2)} (mean |jerk| ~ q^${beta.toFixed(2)})`);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/jerk-prior.json', import.meta.url), JSON.stringify({ ...measuredWith(), clips, thresholds: [p33, p67], rows, q0, sdLnQ, beta }, null, 2) + '\n');
