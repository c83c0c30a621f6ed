/**
 * `egogeo bench`'s figures as a plain text table and as its scaling plot (clips/s against workers
 * for egogeo and the proxy, with linear scaling from the fewest workers measured).
 */
import { type LineSeries, lineChart } from '../report/svg.js';
import type { ThroughputResult } from './bench.js';
import { type SizeStages, STAGES } from './measure.js';
import type { Provenance } from './provenance.js';

const pad = (s: string, w: number) => s.padStart(w);
const f = (v: number, d: number) => (Number.isFinite(v) ? v.toFixed(d) : '-');
const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
const name = (method: string, device: string | null) => (method === 'egogeo' ? `egogeo (${device})` : method);

/** The stage rows of one run: one per tracking size. */
export function stageLines(stages: readonly SizeStages[], lead: string): string[] {
  return stages.map((s) => `${lead}${s.size.padEnd(5)} ${pad(String(s.clips), 6)}  ${STAGES.map((k) => pad(f(s.ms[k], 1), 7)).join(' ')}`);
}

export const STAGE_HEADER = `size   clips  ${STAGES.map((k) => pad(k, 7)).join(' ')}`;

export function formatThroughput(r: ThroughputResult, p: Provenance, input: string): string {
  const L: string[] = [];
  const fpc = r.engine.frames === null ? 'all frames' : `${r.engine.frames} frames`;
  L.push(`egogeo bench: ${input}, ${fpc} per clip; egogeo ${p.egogeo} (engine ${p.engine.addon}, resolution ${r.engine.resolution}) and the published VO proxy (--method vo-proxy)`);
  L.push(`machine: ${p.machine.cpuModel ?? 'unknown CPU'}, ${plural(p.machine.cpus, 'core')}, Node ${p.node}${p.gitCommit ? `, commit ${p.gitCommit.slice(0, 12)}${p.gitCommit.endsWith('-dirty') ? '-dirty' : ''}` : ''}`);
  L.push('');
  L.push(`method          workers  clips  frames/clip   wall s   clips/s  frames/s  core-s/clip  cores busy  task ms/clip`);
  for (const x of r.runs) {
    L.push(
      `${name(x.method, x.device).padEnd(15)} ${pad(String(x.workers), 7)} ${pad(String(x.clips), 6)} ${pad(f(x.framesPerClip, 1), 12)} ${pad(f(x.wallSeconds, 2), 8)} ${pad(f(x.clipsPerSecond, 3), 9)} ${pad(f(x.framesPerSecond, 1), 9)} ${pad(f(x.coreSecondsPerClip, 3), 12)} ${pad(f(x.coresBusy, 2), 11)} ${pad(f(x.taskMs.total, 0), 13)}`,
    );
  }
  if (r.ratios.length > 0) {
    L.push('');
    L.push("egogeo against the VO proxy, this run (the proxy's time per clip over egogeo's: how many times faster egogeo is):");
    for (const q of r.ratios) L.push(`  ${name('egogeo', q.device)}, ${plural(q.workers, 'worker')}: ${f(q.speedup, 2)}x by wall time, ${f(q.coreSecondsSpeedup, 2)}x by core-seconds`);
  }
  const scaled = r.scaling.filter((s) => s.points.length > 1);
  if (scaled.length > 0) {
    L.push('');
    L.push(`scaling (clips/s over ${plural(scaled[0].points[0].workers, 'worker')}; ideal = the worker ratio):`);
    for (const s of scaled) L.push(`  ${name(s.method, s.device).padEnd(15)} ${s.points.slice(1).map((q) => `${plural(q.workers, 'worker')} ${f(q.speedup, 2)}x (ideal ${f(q.workers / s.points[0].workers, 2)}x)`).join(', ')}`);
  }
  const staged = r.runs.filter((x) => x.stages.length > 0);
  if (staged.length > 0) {
    L.push('');
    L.push(`egogeo's engine stages, ms per clip over all clips, per tracking size (resolution ${r.engine.resolution} tracks frames far apart at full size, and at half size where full size doubts itself: 'clips' counts each size's runs; a clip's mean cost is the sizes' sum):`);
    L.push(`device  workers  ${STAGE_HEADER}`);
    for (const x of staged) L.push(...stageLines(x.stages, `${(x.device ?? '').padEnd(7)} ${pad(String(x.workers), 7)}  `));
  }
  return L.join('\n');
}

const COLORS = { egogeo: '#4e79a7', gpu: '#59a14f', proxy: '#f28e2b' };

/** The scaling curve: clips/s against workers for each method (and device), ideal linear scaling dashed. */
export function scalingPlot(r: ThroughputResult, p: Provenance, input: string): string {
  // Each method's measured line, then its linear scaling from the fewest workers (dashed).
  const series: LineSeries[] = r.scaling.flatMap((s): LineSeries[] => {
    const color = s.method !== 'egogeo' ? COLORS.proxy : s.device === 'gpu' ? COLORS.gpu : COLORS.egogeo;
    const measured: LineSeries = { name: name(s.method, s.device), color, points: s.points.map((q) => [q.workers, q.clipsPerSecond]) };
    if (s.points.length < 2) return [measured];
    return [measured, { name: `${name(s.method, s.device)}, ideal linear`, color, dashed: true, points: s.points.map((q) => [q.workers, q.ideal]) }];
  });
  const frames = r.engine.frames === null ? 'all frames' : `${r.engine.frames} frames`;
  return lineChart(series, {
    title: `Throughput: clips/s against workers (${frames} per clip)`,
    xLabel: 'workers',
    yLabel: 'clips / s',
    xTicks: [...new Set(r.runs.map((x) => x.workers))].sort((a, b) => a - b),
    note: `${input}; ${p.machine.cpuModel ?? 'unknown CPU'}, ${plural(p.machine.cpus, 'core')}; egogeo ${p.egogeo}, engine ${p.engine.addon}`,
  });
}
