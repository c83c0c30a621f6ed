/**
 * `egogeo audit shortcut` — the best score reachable without the image (answers from record fields
 * alone), per question, pooled and per cell, with chance beside it and, with --leaderboard, how many
 * published rows score at or below it. `egogeo audit turn-geometry` — the a-priori bound of a
 * stated-turn question set from the camera's geometry. Thin: src/audit/ computes.
 */
import type { Command } from 'commander';
import { statSync } from 'node:fs';
import { InputError } from '../../core/errors.js';
import { loadAuditClips, loadLabelClips, readJson } from '../../audit/load.js';
import { auditLabels, DEFAULT_FRAMES, type NoiseLevel, DEFAULT_NOISE, DEFAULT_SMOOTH, type LabelAudit, labelAuditMarkdown } from '../../audit/labels.js';
import { parseFrameCounts, parseNoise, parseSmooth, parseSourceLevels } from '../options.js';
import { barChart, lineChart, stackSvgs, svgToPng } from '../../report/svg.js';
import { intIn } from '../options.js';
import { parseLeaderboard } from '../../report/leaderboard.js';
import { compareLeaderboard, type LeaderboardComparison, shortcutBound, type ShortcutMetric, type ShortcutReport } from '../../audit/shortcut.js';
import { turnGeometry, type TurnReport } from '../../audit/turn.js';
import { writeFileAtomic } from '../../io/atomic.js';
import { guardOutputs } from '../../io/safety.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions } from '../../oracle/index.js';
import { parseLimit, parseList } from '../options.js';

const f3 = (x: number): string => (Number.isNaN(x) ? '-' : x.toFixed(3));
const f4 = (x: number): string => (Number.isNaN(x) ? '-' : x.toFixed(4));

function table(header: string[], rows: string[][], left = 1): string {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r: string[]): string => r.map((c, i) => (i < left ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ').trimEnd();
  return [fmt(header), w.map((x) => '-'.repeat(x)).join('  '), ...rows.map(fmt)].join('\n');
}

export function formatShortcut(r: ShortcutReport, lb?: LeaderboardComparison, lbFile?: string): string {
  const m = r.metric === 'acc' ? 'accuracy' : 'balanced accuracy';
  const out: string[] = [];
  out.push(`shortcut bound from ${r.by.join(', ')} alone: ${r.n_clips} clips, ${r.questions.length} questions (${m})`, '');
  out.push(
    table(
      ['question', 'bound', 'chance', 'labels', 'answer per cell'],
      r.questions.map((q) => {
        const b = r.per_question[q];
        return [q, f3(b.bound), f3(b.chance), String(b.n_labels), Object.entries(b.answers).sort(([a], [c]) => (a < c ? -1 : a > c ? 1 : 0)).map(([c, y]) => `${c}: ${y}`).join('; ')];
      }),
      1,
    ),
    '',
  );
  out.push(`pooled over all ${r.questions.length} questions: ${f3(r.pooled14)} (chance ${f3(r.pooled14_chance)}; the pooled metric's own optimum ${f3(r.pooled14_max)})`);
  if (r.subset.length) out.push(`pooled over the ${r.subset.length}-question subset: ${f3(r.pooled6)} (chance ${f3(r.pooled6_chance)}; own optimum ${f3(r.pooled6_max)})`);
  out.push(`mean per question: ${f3(r.mean_bound)} (chance ${f3(r.mean_chance)})`);
  for (const [s, v] of Object.entries(r.per_source)) out.push(`  source ${s}: ${v.n_clips} clips, pooled ${f3(v.pooled14)}${r.subset.length ? `, subset ${f3(v.pooled6)}` : ''}`);
  out.push('', 'per cell: what each cell gives away (its share of bound − chance; sums over cells to bound − chance)', '');
  out.push(
    table(
      ['cell', 'clips', 'mean gain', ...r.questions],
      r.cells.map((c) => [c.cell, String(c.n_clips), f4(c.gain_mean), ...r.questions.map((q) => (c.per_question[q] ? `${c.per_question[q].answer} ${f3(c.per_question[q].gain)}` : '-'))]),
      1,
    ),
  );
  if (lb) {
    out.push('', `leaderboard ${lbFile}: ${lb.n_rows} published rows; rows at or below the bound (rows answering the ${r.subset.length}-question subset against the subset bound)`);
    out.push(`  pooled: ${lb.pooled.at_or_below}/${lb.n_rows}${lb.pooled.models.length ? ` (${lb.pooled.models.join(', ')})` : ''}`);
    for (const [s, v] of Object.entries(lb.per_source)) out.push(`  ${s}: ${v.at_or_below}/${v.n_rows}${v.models.length ? ` (${v.models.join(', ')})` : ''}`);
    // The rows were scored on the whole benchmark; this bound on the clips given here. On a small
    // sample the per-cell optimum fits the sample (more cells than clips per answer inflate it).
    out.push(
      `  caveat: the bound comes from these ${r.n_clips} clips (${r.cells.length} cells, ${f3(r.n_clips / Math.max(1, r.cells.length))} clips a cell), the published rows from the benchmark's full test set; ${r.n_clips < 500 ? 'on a sample this small the bound is optimistic (it is fitted to the same clips) and the count is indicative only' : 'compare like with like'}`,
    );
  }
  return out.join('\n');
}

export function formatTurns(r: TurnReport): string {
  const out: string[] = [];
  out.push(
    `camera ${r.camera.width}x${r.camera.height}, vertical field of view ${r.camera.vfovDeg}°: f = ${r.focal.toFixed(4)} px (fy from the vertical field of view, fx = fy)`,
    `horizontal half-angle ${r.halfAngleDeg.toFixed(4)}° (horizontal field of view ${r.hfovDeg.toFixed(4)}°)`,
    `answers: the object's sector after the turn (${r.sectors} sectors); start bearing uniform over the view; turns to the right (left is the mirror image)`,
    '',
  );
  out.push(
    table(
      ['turn', 'bearing after', 'reachable answers (share of the view)', 'bound', 'answer', 'chance'],
      r.turns.map((t) => [
        `${t.turn}°`,
        `[${t.after[0].toFixed(1)}°, ${t.after[1].toFixed(1)}°]`,
        t.reachable.map((a) => `${a.answer} ${(100 * a.share).toFixed(1)}%`).join(', '),
        f3(t.bound),
        t.best,
        f3(t.chance),
      ]),
      3,
    ),
  );
  out.push('', `mean bound over the ${r.turns.length} turns: ${f3(r.mean_bound)}`);
  return out.join('\n');
}

const num = (s: string, flag: string): number => {
  const v = Number(s);
  if (s.trim() === '' || !Number.isFinite(v)) throw new InputError(`${flag}: expected a number, got '${s}'`);
  return v;
};

const isFolder = (p: string): boolean => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/** Fourteen distinguishable colours: one per question. */
const COLOURS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f', '#bab0ac', '#1f77b4', '#8c564b', '#17becf', '#bcbd22', '#d62728'];

/**
 * The plot: the fragility curves (agreement per question over the noise levels; x: the level's
 * index, 0 = exact, the note names each; all questions pooled in black), and beneath them each
 * question's ceilings (the noise ceiling at each source's level, the sampling ceilings).
 */
export function labelAuditPlot(r: LabelAudit): string {
  // White levels make the x axis; a drifting level (@TAU) is not on that scale: the tables give it.
  const noise = r.levels.filter((l): l is NoiseLevel & { key: string } => l.kind === 'noise' && !l.tauS);
  const series = r.questions.map((q, i) => ({ name: q, color: COLOURS[i % COLOURS.length], points: noise.map((l, x) => [x, r.per_question[q][l.key]] as [number, number]) }));
  series.push({ name: 'all questions', color: '#000000', points: noise.map((l, x) => [x, r.pooled[l.key]] as [number, number]) });
  const own = Object.entries(r.source_levels).filter(([, k]) => noise.some((l) => l.key === k));
  const curves = lineChart(series, {
    title: `Label agreement under white ground-truth pose noise (${r.n_clips} clips, ${r.draws} draws)`,
    xLabel: `noise level (σ per pose); each source's own: ${own.map(([s, k]) => `${s} ${noise.findIndex((l) => l.key === k)}`).join(', ') || 'drifting (tables)'}`,
    yLabel: 'agreement with the clean label',
    xTicks: noise.map((_, x) => x),
    note: `σ of position (yaw in the tables): ${noise.map((l, x) => `${x}: ${l.posM === 0 && l.yawDeg === 0 ? 'exact' : `${Number((1000 * l.posM).toPrecision(3))} mm`}`).join(' · ')}`,
  });
  const cols: { name: string; get: (q: string | null) => number }[] = [
    { name: `noise at each source's level (${Object.entries(r.source_levels).map(([s, k]) => `${s} ${k}`).join(', ')})`, get: (q) => (q === null ? r.ceiling.pooled.all : r.ceiling.pooled.per_question[q]) },
    ...Object.entries(r.sampling).flatMap(([k, v]) => Object.entries(v).map(([how, c]) => ({ name: `sampling: ${k} frames, ${how}`, get: (q: string | null) => (q === null ? c.pooled.all : c.pooled.per_question[q]) }))),
  ];
  const rows = [...r.questions, `all ${r.questions.length} (pooled)`];
  const bars = barChart(rows, cols.map((c) => c.name), rows.map((_, i) => cols.map((c) => c.get(i < r.questions.length ? r.questions[i] : null) ?? Number.NaN)), {
    title: `Ceilings: balanced accuracy of the ground truth's labels against the published ones (${r.n_clips} clips)`,
    axis: 'balanced accuracy',
    labels: true,
  });
  return stackSvgs([curves, bars]);
}

export function registerAudit(program: Command): void {
  const audit = program.command('audit').description('bounds reachable without the image (record-field shortcuts, stated-turn geometry) and the stability of the oracle labels under ground-truth noise');
  audit
    .command('shortcut')
    .description('the best score reachable from record fields alone (per question, pooled, per cell), with chance beside it')
    .option('--dataset <dir>', 'the clips of a dataset folder: EgoDyn-Bench as published, the benchmark layout (qa.jsonl + clips_index.jsonl) or a KITTI sequence')
    .option('--clips <file>', 'the same from files: selected_clips.json, a benchmark folder or its qa.jsonl (with clips_index.jsonl beside it); several comma-separated')
    .requiredOption('--by <fields>', 'comma-separated record fields that make a cell (e.g. source, behavior, features.x)')
    .option('--limit <n>', 'only the first n clips')
    .option('--metric <m>', 'bacc (balanced accuracy, the published grader) or acc', 'bacc')
    .option('--leaderboard <file>', 'count the published rows that score at or below the bound')
    .option('--config <yaml>', "question file: the questions' choices (chance is a uniform guess over them; an answer outside them is an error)", DEFAULT_QUESTIONS_PATH)
    .option('--json <out>', 'also write the report as JSON (atomically)')
    .action((o: { dataset?: string; clips?: string; limit?: string; by: string; metric: string; leaderboard?: string; config: string; json?: string }) => {
      if (o.dataset !== undefined && o.clips !== undefined) throw new InputError('--dataset and --clips name the clips twice: give one');
      if (o.dataset === undefined && o.clips === undefined) throw new InputError('missing the clips: --dataset DIR (or --clips FILES)');
      if (o.dataset !== undefined && !isFolder(o.dataset)) throw new InputError(`--dataset ${o.dataset}: not a folder (a selected_clips.json or qa.jsonl is given with --clips)`);
      const paths = o.dataset !== undefined ? [o.dataset] : parseList(o.clips!);
      if (paths.length === 0) throw new InputError('--clips: expected a file or folder');
      const spec = paths.join(',');
      const limit = parseLimit(o.limit);
      if (o.metric !== 'bacc' && o.metric !== 'acc') throw new InputError(`--metric: expected bacc or acc, got '${o.metric}'`);
      guardOutputs([o.json !== undefined ? { path: o.json, flag: '--json' } : undefined], [...paths, o.leaderboard]);
      const by = parseList(o.by);
      if (by.length === 0) throw new InputError('--by: expected a comma-separated list of fields');
      const clips = loadAuditClips(paths).slice(0, limit);
      for (const f of by) {
        if (!clips.some((c) => c.fields[f] !== undefined || f.includes('.'))) throw new InputError(`--by: no clip in ${spec} has the field '${f}'`);
      }
      const choices = new Map(loadQuestions(o.config).questions.map((q) => [q.id, q.choices ?? []] as const));
      const report = shortcutBound(clips, by, o.metric as ShortcutMetric, undefined, 'source', choices);
      let lb: LeaderboardComparison | undefined;
      if (o.leaderboard) {
        const data = parseLeaderboard(readJson(o.leaderboard, 'leaderboard'), o.leaderboard);
        lb = compareLeaderboard(report, data);
      }
      if (o.json) {
        const { pooled14, pooled6, per_question, ...rest } = report;
        const j = { pooled14, pooled6, per_question, ...rest, ...(lb ? { leaderboard: lb } : {}) };
        writeFileAtomic(o.json, `${JSON.stringify(j, (_k, v) => (typeof v === 'number' && Number.isNaN(v) ? null : v), 2)}\n`);
      }
      process.stdout.write(`${formatShortcut(report, lb, o.leaderboard)}\n`);
    });
  audit
    .command('turn-geometry')
    .description('the a-priori bound of a stated-turn question set from camera geometry')
    .requiredOption('--width <px>', 'image width in pixels')
    .requiredOption('--height <px>', 'image height in pixels')
    .requiredOption('--vfov <deg>', 'vertical field of view in degrees')
    .option('--turns <list>', 'comma-separated turns in degrees (right positive)', '30,60,90,120,180')
    .option('--sectors <n>', 'answer sectors: 4 (front/right/behind/left) or 8', '4')
    .option('--json <out>', 'also write the report as JSON (atomically)')
    .action((o: { width: string; height: string; vfov: string; turns: string; sectors: string; json?: string }) => {
      guardOutputs([o.json !== undefined ? { path: o.json, flag: '--json' } : undefined], []);
      if (o.sectors !== '4' && o.sectors !== '8') throw new InputError(`--sectors: expected 4 or 8, got '${o.sectors}'`);
      const turns = parseList(o.turns).map((s) => num(s, '--turns'));
      const r = turnGeometry({ width: num(o.width, '--width'), height: num(o.height, '--height'), vfovDeg: num(o.vfov, '--vfov') }, turns, Number(o.sectors) as 4 | 8);
      if (o.json) writeFileAtomic(o.json, `${JSON.stringify(r, null, 2)}\n`);
      process.stdout.write(`${formatTurns(r)}\n`);
    });
  audit
    .command('labels')
    .description("each oracle label's stability under the ground truth's own jitter (measured from its poses) and other noise or smoothing: fragility curves per question and source, the noise ceiling, and the protocol's sampling ceiling (the truth kept at K frames, interpolated back), graded against the published labels")
    .requiredOption('--dataset <dir>', 'EgoDyn-Bench as published, the benchmark layout (clips_index.jsonl, arrays/*.npz) or a KITTI sequence')
    .option('--noise <levels>', "noise levels POS_M:YAW_DEG (σ per pose of x and y in metres, of yaw in degrees; @TAU_S: drifting with that correlation time), comma-separated; the exact level and each source's own level are always added", DEFAULT_NOISE)
    .option('--smooth <windows>', "centred moving-average windows over the poses (odd, e.g. 3,5), or 'none'", DEFAULT_SMOOTH)
    .option('--source-level <list>', "each source's own level SOURCE=measured|literature|exact|POS_M:YAW_DEG[@TAU_S], comma-separated (default: measured from the source's poses; CARLA exact; docs/labels.md)")
    .option('--frames <list>', "the protocol's frame counts for the sampling ceiling: counts and/or 'all', comma-separated", DEFAULT_FRAMES.join(','))
    .option('--draws <n>', 'noise draws per clip and level', '20')
    .option('--seed <s>', 'random seed', '0')
    .option('--config <yaml>', 'question file', DEFAULT_QUESTIONS_PATH)
    .option('--json <out>', 'write the audit as JSON (atomically); `egogeo report --label-audit` reads it')
    .option('--md <out>', 'also write the Markdown tables (atomically)')
    .option('--plot <out>', 'the fragility curves: OUT.svg (with a PNG copy beside it when sharp is installed) or OUT.png')
    .action(async (o: { dataset: string; noise: string; smooth: string; sourceLevel?: string; frames: string; draws: string; seed: string; config: string; json?: string; md?: string; plot?: string }) => {
      if (!isFolder(o.dataset)) throw new InputError(`--dataset ${o.dataset}: not a folder (EgoDyn-Bench as published, a benchmark layout folder or a KITTI sequence)`);
      if (o.plot !== undefined && !/\.(svg|png)$/i.test(o.plot)) throw new InputError(`--plot ${o.plot}: expected a .svg or .png file name`);
      const pngBeside = o.plot && /\.svg$/i.test(o.plot) ? o.plot.replace(/\.svg$/i, '.png') : undefined;
      guardOutputs([o.json, o.md, o.plot, pngBeside].map((p, i) => (p !== undefined ? { path: p, flag: ['--json', '--md', '--plot', '--plot'][i] } : undefined)), [o.dataset, o.config]);
      const levels = [...parseNoise(o.noise), ...parseSmooth(o.smooth)];
      const draws = intIn('--draws', o.draws, 1, 10_000);
      const seed = intIn('--seed', o.seed, 0, 2 ** 32 - 1);
      const sourceLevels = parseSourceLevels(o.sourceLevel);
      const frames = parseFrameCounts(o.frames);
      const questions = loadQuestions(o.config);
      const { clips, skipped } = loadLabelClips(o.dataset);
      if (skipped > 0) process.stderr.write(`egogeo: note: ${skipped} clip${skipped === 1 ? '' : 's'} of ${o.dataset} without ground truth (no arrays/<clip>.npz, no KITTI poses): left out\n`);
      const have = new Set(clips.map((c) => c.source));
      for (const s of Object.keys(sourceLevels)) {
        if (!have.has(s)) process.stderr.write(`egogeo: note: --source-level ${s}: no clip of ${o.dataset} has source '${s}' (sources here: ${[...have].join(', ')})\n`);
      }
      const r = auditLabels(clips, questions, { levels, draws, seed, sourceLevels, frames });
      const md = labelAuditMarkdown(r);
      if (o.json) writeFileAtomic(o.json, `${JSON.stringify({ dataset: o.dataset, ...r }, (_k, v) => (typeof v === 'number' && Number.isNaN(v) ? null : v), 2)}\n`);
      if (o.md) writeFileAtomic(o.md, `${md}\n`);
      if (o.plot) {
        const svg = labelAuditPlot(r);
        const png = await svgToPng(svg);
        if (/\.png$/i.test(o.plot)) {
          if (!png) throw new InputError(`--plot ${o.plot}: PNG needs the optional dependency sharp (give a .svg name)`);
          writeFileAtomic(o.plot, png);
        } else {
          writeFileAtomic(o.plot, svg);
          if (png && pngBeside) writeFileAtomic(pngBeside, png);
        }
      }
      process.stdout.write(`${md}\n`);
    });
}
