/**
 * What the clip viewer shows, computed on the server: the dataset (every layout `egogeo run`
 * reads, through readDataset), the predictions files (each with its run's estimated trajectories,
 * `<preds>.trajectories/<clip>.tum`), the clip list with agreement and near-threshold flags (the
 * margins `egogeo report` uses), and — when a clip is opened — the clip re-run through the run's
 * own per-clip task (src/run/task.ts: its method, frames, question subset and withheld answers,
 * as the first predictions file with a run record ran it) with its track points and inlier flags,
 * the trajectories, the dynamics series and the QA table. Every banner and setting names the
 * predictions file it comes from. May import: core/, datasets/, io/, oracle/, report/, run/, vo/,
 * native/.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { InputError } from '../core/errors.js';
import type { Clip } from '../core/clip.js';
import { type BenchmarkOptions, readDataset } from '../datasets/benchmark.js';
import { groundTruthArrays, NPZ_ARRAYS, npzArrays } from '../datasets/groundtruth.js';
import { decodeNpz } from '../io/npz.js';
import type { Prediction } from '../core/prediction.js';
import { readPredictions } from '../io/predictions.js';
import { type ClipQuality, parseTum, qualityFromTum } from '../io/trajectories.js';
import { ConfinedError, type ConfinedHooks, readConfinedSync, realRoots } from '../io/confined.js';
import { isSafeFileName } from '../io/safety.js';
import { clipData, computeDynamics, DEFAULT_QUESTIONS_PATH, type DynamicsArrays, labelClip, loadQuestions, type Question, type QuestionSet, summaryFeatures } from '../oracle/index.js';
import { domainTable } from '../report/domains.js';
import { decisionMargin, isNearThreshold, type Margin, NEAR_THRESHOLD } from '../report/margins.js';
import { clipTasks } from '../run/clips.js';
import { keyEngine, readRunRecord, type RunKey, sidecar } from '../run/record.js';
import { type ClipOutput, runClipTask, taskFrameIndices, taskFrames } from '../run/task.js';
import { type EngineConfig, engineConfig } from '../vo/config.js';
import { engineVersion } from '../native/index.js';
import type { NativeResult } from '../native/index.js';

export interface ViewOptions extends Pick<BenchmarkOptions, 'nuscenesRoot' | 'carlaDomain' | 'cameras'> {
  dataset: string;
  predictions?: string[];
  /** Question file (default: the published one). */
  config?: string;
  /** A disagreement within this relative distance of the threshold is near-threshold (report's --near). */
  near?: number;
  /** Only the first `limit` clips of the dataset (as run's --limit). */
  limit?: number;
  log?: (line: string) => void;
  /** Test hook: runs between naming a file the viewer reads and opening it (io/confined.ts). */
  hooks?: ConfinedHooks;
}

export interface PredictionRun {
  name: string;
  file: string;
  /** Records per clip id, then per question id. */
  byClip: Map<string, Map<string, Prediction>>;
  trajectories: string | null;
  /** Made with `--abstain` (its run record says so): a failed clip's scale-dependent answers are null. */
  abstain: boolean;
  /** The trajectories folder's real path when the viewer started: what its files must lie inside. */
  trajectoriesReal: string[];
  warning?: string;
}

export interface ClipSummary {
  id: string;
  source: string;
  /** Image count (video clips: null until opened). */
  frames: number | null;
  video: boolean;
  questions: string[];
  /** Question ids where some predictions file disagrees with the oracle. */
  disagree: string[];
  /** Of those, the near-threshold ones (as `egogeo report` classifies them). */
  near: string[];
  /** Whether any predictions file answers this clip. */
  predicted: boolean;
  problem?: string;
  /** Each predictions file's quality verdict for this clip that is not 'ok' (vo/quality.ts), naming the file (`run`: its position). */
  quality?: RunVerdict[];
}

/** A predictions file's quality verdict of a clip. */
export interface RunVerdict {
  run: number;
  name: string;
  verdict: string;
  reasons: string[];
  /** The file was made with `--abstain` (a failed verdict then means its scale-dependent answers are null). */
  abstain: boolean;
}

/** Clips per source, and per predictions file its scores per source (`all`: pooled). */
export interface ViewScores {
  sources: Record<string, number>;
  runs: Record<string, { clips: number; subset: number | null; all: number }>[];
}

/** A threshold of a question drawn on a dynamics series. */
export interface SeriesThreshold {
  series: 'speed' | 'accel' | 'yaw_rate' | 'jerk';
  value: number;
  question: string;
}

const SERIES = ['speed', 'accel', 'yaw_rate', 'jerk'] as const;
const round = (v: number, k = 1000) => (Number.isFinite(v) ? Math.round(v * k) / k : null);
const arr = (a: ArrayLike<number>, k = 1000) => Array.from(a, (v) => round(v, k));

/** The series a question's feature reads (null: none of the four). */
function seriesOf(feature: string): SeriesThreshold['series'] | null {
  const f = feature.toLowerCase();
  if (f.includes('jerk')) return 'jerk';
  if (f.includes('yaw_rate') || f.includes('lateral') || f.includes('turn')) return 'yaw_rate';
  if (f.includes('accel') || f.includes('brak')) return 'accel';
  if (f.includes('speed')) return 'speed';
  return null;
}

/**
 * The thresholds a question compares with, on the series they apply to: every numeric parameter
 * named like a threshold (threshold, thresholds, *_threshold, min_value, max_value), its series
 * from the nearest `feature` parameter, else the question's required features.
 */
export function questionThresholds(q: Question): SeriesThreshold[] {
  const out: SeriesThreshold[] = [];
  const req = (q.metadata?.required_features as unknown[] | undefined)?.filter((f): f is string => typeof f === 'string') ?? [];
  const walk = (o: unknown, feature: string | null) => {
    if (!o || typeof o !== 'object') return;
    if (Array.isArray(o)) return o.forEach((e) => walk(e, feature));
    const rec = o as Record<string, unknown>;
    const f = typeof rec.feature === 'string' ? rec.feature : feature;
    for (const [k, v] of Object.entries(rec)) {
      const isThr = /threshold|^min_value$|^max_value$/.test(k) && !/ratio|similarity|prominence/.test(k);
      const vals = typeof v === 'number' ? [v] : Array.isArray(v) && v.every((e) => typeof e === 'number') ? (v as number[]) : null;
      if (isThr && vals) {
        const s = seriesOf(k.includes('speed') ? 'speed' : f ?? req[0] ?? q.id) ?? (req.map(seriesOf).find((x) => x) || null);
        if (s) for (const value of vals) if (Number.isFinite(value)) out.push({ series: s, value, question: q.id });
      } else if (v && typeof v === 'object') {
        walk(v, f);
      }
    }
  };
  walk(q.params, null);
  return out;
}

function dynamicsJson(a: DynamicsArrays) {
  return { t: arr(a.timestamps), x: arr(a.x), y: arr(a.y), yaw: arr(a.yaw, 1e5), speed: arr(a.speed), accel: arr(a.accel), yaw_rate: arr(a.yaw_rate, 1e5), jerk: arr(a.jerk) };
}

/** A clip re-run through the run's per-clip task. */
export interface EngineRun {
  /** The task's output: its prediction records, estimate (TUM) and quality verdict, as the run wrote them. */
  output: ClipOutput;
  /** The records' answers by question id (null: withheld, as the run wrote it). */
  labels: Record<string, string | null>;
  /** Method egogeo: the engine's result with tracks (null for the published baselines, which keep none). */
  native: NativeResult | null;
  /** Method egogeo: the oracle's series of the estimate. */
  arrays: DynamicsArrays | null;
  frames: number;
  timestamps: number[];
}

/** What the viewer re-runs clips as: a predictions file's run (null: none has a run record, a run's defaults). */
export interface Rerun {
  of: PredictionRun | null;
  engine: EngineConfig;
  questions: 'subset' | 'all';
  /** The question file the run answered with (its own when still readable and unchanged, else the viewer's). */
  config: string;
  questionSet: QuestionSet;
  /** The run's `--abstain` (a failed clip's scale-dependent answers left null). */
  abstain: boolean;
}

/** One line naming what a re-run is: method, frames, the engine's settings (egogeo), questions. */
function rerunLine(r: Rerun): string {
  const e = r.engine;
  const engine = e.method === 'egogeo' ? `, scale ${e.scale}, photometric ${e.photometric}, resolution ${e.resolution}` : '';
  return `${e.method}, ${taskFrames(e) ?? 'all'} frames${engine}, ${r.questions === 'subset' || e.method !== 'egogeo' ? 'the 6-question subset' : 'all questions'}${r.abstain ? ', abstaining' : ''}`;
}

/** The viewer's model: dataset + predictions, clip summaries, and opened clips (engine runs cached). */
export class ViewData {
  readonly root: string;
  readonly clips: Clip[];
  readonly byId: Map<string, Clip>;
  readonly questions: QuestionSet;
  readonly runs: PredictionRun[];
  readonly warnings: string[] = [];
  readonly near: number;
  private summaries: ClipSummary[] | null = null;
  private gtCache = new Map<string, DynamicsArrays | null>();
  private engine = new Map<string, Promise<EngineRun>>();
  /** What clips are re-run as: the first predictions file with a run record, else a run's defaults. */
  readonly rerun: Rerun;
  /** Its engine configuration. */
  readonly settings: EngineConfig;
  private queue: Promise<unknown> = Promise.resolve();
  private log: (line: string) => void;
  private hooks: ConfinedHooks;
  private arrayDirs: Set<string>;

  constructor(o: ViewOptions) {
    this.log = o.log ?? (() => {});
    this.hooks = o.hooks ?? {};
    if (!existsSync(o.dataset)) throw new InputError(`${o.dataset}: no such dataset directory`);
    const b = readDataset(o.dataset, { nuscenesRoot: o.nuscenesRoot, carlaDomain: o.carlaDomain, cameras: o.cameras, needFrames: o.nuscenesRoot !== undefined, log: this.log });
    this.root = b.dir;
    this.clips = b.clips.slice(0, o.limit);
    this.byId = new Map(this.clips.map((c) => [c.id, c]));
    this.arrayDirs = new Set(realRoots([...new Set(this.clips.flatMap((c) => (c.arrays ? [dirname(c.arrays)] : [])))]));
    this.questions = loadQuestions(o.config ?? DEFAULT_QUESTIONS_PATH);
    this.near = o.near ?? NEAR_THRESHOLD;
    this.runs = (o.predictions ?? []).map((f) => this.readRun(f));
    for (const r of this.runs) if (r.warning) this.warnings.push(r.warning);
    // A run answered from one CARLA domain's videos, shown over the other's, would look wrong for no reason.
    const shown = o.carlaDomain ?? 'simulation';
    for (const r of this.runs) {
      const d = readRunRecord(r.file)?.key.carla_domain;
      if (d && d !== shown) this.warn(`${r.file}: answered from the CARLA ${d} videos; this page shows the ${shown} videos (egogeo view --carla-domain ${d} shows what it answered from)`);
    }
    this.rerun = this.rerunPlan(o.cameras);
    this.settings = this.rerun.engine;
  }

  /**
   * Clips are re-run as the first predictions file with a run record ran them (method, frames,
   * scale, photometric stage, question subset, question file), through the run's own per-clip
   * task, so what the page shows is what that run wrote; the page names that file. Another file
   * run otherwise, a run by another engine build, or a question file changed since, is a warning
   * naming the file.
   */
  private rerunPlan(cameras: string | undefined): Rerun {
    const keyed = this.runs.map((r) => ({ r, key: readRunRecord(r.file)?.key })).filter((x): x is { r: PredictionRun; key: RunKey } => !!x.key);
    const viewer = { config: this.questions.source, questionSet: this.questions };
    // No run record: a run's defaults, tracking on the CPU as for a keyed run.
    if (keyed.length === 0) return { of: null, engine: engineConfig({ device: 'cpu' }), questions: 'all', abstain: false, ...viewer };
    const { r, key } = keyed[0];
    const engine = keyEngine(key);
    const plan: Rerun = { of: r, engine, questions: key.questions, abstain: key.abstain === true, ...viewer };
    for (const x of keyed.slice(1)) {
      const other = { ...plan, engine: keyEngine(x.key), questions: x.key.questions, abstain: x.key.abstain === true };
      if (rerunLine(other) !== rerunLine(plan)) {
        this.warn(`${x.r.file}: run as ${rerunLine(other)}; the page re-runs clips as ${r.name} was run (${rerunLine(plan)}), its answers and tracks are ${r.name}'s`);
      }
    }
    // The cameras it ran with: `--cameras` changes every scale-dependent answer.
    const given = cameras ? JSON.parse(readFileSync(cameras, 'utf8')) : null;
    if (JSON.stringify(given) !== JSON.stringify(key.cameras ?? null)) {
      this.warn(`${r.file}: run ${key.cameras ? 'with --cameras overrides' : 'without --cameras'}, this page ${cameras ? `with --cameras ${cameras}` : 'without'}; give egogeo view the --cameras the run had to re-run clips as it ran them`);
    }
    const mine = engineVersion();
    if (key.engine && (key.engine.egogeo !== mine.egogeo || key.engine.addon !== mine.addon)) {
      this.warn(`${r.file}: answered by egogeo ${key.engine.egogeo} (addon ${key.engine.addon}); this viewer's engine is egogeo ${mine.egogeo} (addon ${mine.addon}), so its tracks may differ from that run's`);
    }
    let text: string | null = null;
    try {
      text = readFileSync(key.config, 'utf8');
    } catch {
      // not readable here: the viewer's question file stands in (warned below)
    }
    if (text !== null && createHash('sha256').update(text).digest('hex') === key.config_sha256) return { ...plan, config: key.config, questionSet: loadQuestions(key.config) };
    this.warn(`${r.file}: its question file ${key.config} is ${text === null ? 'not readable here' : 'changed since the run'}; the re-run answers with ${this.questions.source}`);
    return plan;
  }

  /** The dataset frames the re-run's method uses (positions into the clip's frames). */
  frameIndices(c: Clip): number[] {
    return c.frames ? taskFrameIndices(c.frames.length, this.settings) : [];
  }

  /** The dataset image at position `i` of the frames the re-run's method uses; null for none. */
  frameFile(c: Clip, i: number): string | null {
    if (!c.frames) return null;
    const k = this.frameIndices(c)[i];
    const f = k === undefined ? null : c.frames[k];
    return typeof f === 'string' ? f : null;
  }

  private warn(line: string): void {
    this.warnings.push(line);
    this.log(`warning: ${line}`);
  }

  private readRun(file: string): PredictionRun {
    const recs = readPredictions(file).records;
    const byClip = new Map<string, Map<string, Prediction>>();
    for (const r of recs) {
      let m = byClip.get(r.clip_id);
      if (!m) byClip.set(r.clip_id, (m = new Map()));
      m.set(r.question_id, r);
    }
    const ids = [...byClip.keys()];
    const missing = ids.filter((id) => !this.byId.has(id));
    const trajDir = sidecar.trajectories(file);
    const run: PredictionRun = { name: basename(file), file, byClip, trajectories: existsSync(trajDir) ? trajDir : null, trajectoriesReal: realRoots([trajDir]), abstain: readRunRecord(file)?.key.abstain === true };
    if (ids.length === 0) run.warning = `${file}: no predictions`;
    else if (missing.length === ids.length) run.warning = `${file}: none of its ${ids.length} clips is in the dataset ${this.root} (a predictions file for other clips? e.g. '${missing[0]}')`;
    else if (missing.length > 0) run.warning = `${file}: ${missing.length} of its ${ids.length} clips are not in the dataset (e.g. '${missing[0]}')`;
    if (run.warning) this.log(`warning: ${run.warning}`);
    return run;
  }

  /** A clip's npz, read open-then-verify inside the folders the dataset's npz files lie in (fixed at start). */
  private readArrays = (p: string): DynamicsArrays => npzArrays(decodeNpz(readConfinedSync(p, (real) => this.arrayDirs.has(dirname(real)), this.hooks), p, { keys: NPZ_ARRAYS }), p);

  /** The ground-truth arrays of a clip (npz, else KITTI poses), cached; null when none or unreadable. */
  groundTruth(c: Clip): DynamicsArrays | null {
    if (!this.gtCache.has(c.id)) {
      let g: DynamicsArrays | null = null;
      try {
        g = groundTruthArrays(c, this.readArrays)?.arrays ?? null;
      } catch (e) {
        this.log(`warning: clip ${c.id}: ground truth unreadable (${(e as Error).message.split('\n')[0]})`);
      }
      this.gtCache.set(c.id, g);
    }
    return this.gtCache.get(c.id)!;
  }

  /** Each predictions file's quality verdict of a clip (files without one left out). */
  verdicts(id: string): RunVerdict[] {
    return this.runs.flatMap((r, run) => {
      const q = r.byClip.has(id) ? this.runQuality(r, id) : null;
      return q ? [{ run, name: r.name, verdict: q.verdict, reasons: q.reasons, abstain: r.abstain }] : [];
    });
  }

  /**
   * A run's file of a clip (`<trajectories>/<id>.tum`) as text, null when there is none. Read
   * open-then-verify inside that run's trajectories folder (io/confined.ts): a clip id that is not
   * a safe file name ('../x') names no file, and a folder swapped for a symlink leading out is refused.
   */
  private runFile(run: PredictionRun, id: string): string | null {
    if (!run.trajectories || !isSafeFileName(id)) return null;
    const p = join(run.trajectories, `${id}.tum`);
    try {
      return readConfinedSync(p, run.trajectoriesReal, this.hooks).toString('utf8');
    } catch (e) {
      if (e instanceof ConfinedError && e.code !== 'ENOENT') this.log(`warning: ${e.message}`);
      return null;
    }
  }

  /** The verdict a run's trajectory file carries for a clip (null: none, or no file). */
  runQuality(run: PredictionRun, id: string): ClipQuality | null {
    const text = this.runFile(run, id);
    return text === null ? null : qualityFromTum(text);
  }

  /** The run's estimated trajectory of a clip as oracle arrays (null without its TUM file). */
  runEstimate(run: PredictionRun, id: string): DynamicsArrays | null {
    const text = this.runFile(run, id);
    if (text === null) return null;
    const p = join(run.trajectories!, `${id}.tum`);
    try {
      return computeDynamics(parseTum(text, p));
    } catch (e) {
      this.log(`warning: ${p}: ${(e as Error).message.split('\n')[0]}`);
      return null;
    }
  }

  /** The oracle's labels of a clip: its QA items' answers, else the ground truth's, else the predictions' oracle_label. */
  oracleLabels(c: Clip): Record<string, string> {
    const out: Record<string, string> = {};
    for (const r of this.runs) for (const [q, p] of r.byClip.get(c.id) ?? []) out[q] ??= (p.oracle_label ?? '').toLowerCase();
    if (c.qa.length > 0) {
      for (const item of c.qa) out[item.question_id] = String(item.answer).toLowerCase();
      return out;
    }
    if (Object.keys(out).length === 0) {
      const g = this.groundTruth(c);
      if (g) Object.assign(out, labelClip(clipData(g, summaryFeatures(g)), this.questions));
    }
    return out;
  }

  private summary(c: Clip): ClipSummary {
    const disagree = new Set<string>(), near = new Set<string>();
    let predicted = false;
    const labels = this.runs.length > 0 ? this.oracleLabels(c) : {};
    for (const r of this.runs) {
      const m = r.byClip.get(c.id);
      if (!m) continue;
      predicted = true;
      for (const [qid, p] of m) {
        const oracle = labels[qid] ?? (p.oracle_label ?? '').toLowerCase();
        if (p.model_answer !== null && p.model_answer.toLowerCase() === oracle) continue;
        disagree.add(qid);
        const q = this.questions.byId.get(qid);
        const g = q ? this.groundTruth(c) : null;
        if (q && g) {
          const est = this.runEstimate(r, c.id);
          const mg = decisionMargin(q, clipData(g, summaryFeatures(g)), est ? clipData(est, summaryFeatures(est)) : undefined);
          if (Number.isFinite(mg.rel) && isNearThreshold(mg, this.near)) near.add(qid);
        }
      }
    }
    const questions = c.qa.length > 0 ? [...new Set(c.qa.map((q) => q.question_id))] : this.questions.questions.map((q) => q.id);
    const quality = this.verdicts(c.id).filter((v) => v.verdict !== 'ok');
    return {
      id: c.id,
      source: c.source,
      frames: c.frames ? c.frames.length : null,
      video: !c.frames,
      questions,
      disagree: [...disagree],
      near: [...near],
      predicted,
      ...(c.problem ? { problem: c.problem } : {}),
      ...(quality.length > 0 ? { quality } : {}),
    };
  }

  /**
   * The landing page's table: clips per source, and per predictions file (in order) its answered
   * clips and pooled balanced accuracy (6-question subset / all) per source and over all, graded
   * as `egogeo grade` grades (the records' own oracle labels).
   */
  scores(): ViewScores {
    const sourceOfClip = new Map(this.clips.map((c) => [c.id, c.source]));
    const sources: Record<string, number> = {};
    for (const c of this.clips) sources[c.source] = (sources[c.source] ?? 0) + 1;
    const runs = this.runs.map((r) => {
      const recs = [...r.byClip.values()].flatMap((m) => [...m.values()]).filter((p) => sourceOfClip.has(p.clip_id));
      const out: ViewScores['runs'][number] = {};
      const rows = (rs: Prediction[]) => domainTable(rs, this.questions, []).rows;
      for (const row of rows(recs.map((p) => ({ ...p, source: sourceOfClip.get(p.clip_id)! })))) {
        out[row.domain] = { clips: row.clips, subset: row.subset?.balanced_acc ?? null, all: row.all.balanced_acc };
      }
      const pooled = rows(recs.map((p) => ({ ...p, source: 'all' })))[0];
      if (pooled) out.all = { clips: pooled.clips, subset: pooled.subset?.balanced_acc ?? null, all: pooled.all.balanced_acc };
      return out;
    });
    return { sources, runs };
  }

  /** Every clip's summary (computed once). */
  list(): ClipSummary[] {
    this.summaries ??= this.clips.map((c) => this.summary(c));
    return this.summaries;
  }

  /**
   * The clip through the run's per-clip task (src/run/task.ts, as `rerun` says), one clip at a
   * time (the server stays responsive; CPU use modest), cached.
   */
  runEngine(c: Clip): Promise<EngineRun> {
    let p = this.engine.get(c.id);
    if (p) return p;
    const job = async (): Promise<EngineRun> => {
      if (!c.problem && !c.frames && !c.video) throw new Error(`clip ${c.id} has no frames here (nuScenes clips of the published layout need --nuscenes-root)`);
      const r = this.rerun;
      const [task] = clipTasks([c], { questions: r.questions, engine: r.engine, config: r.config, questionSet: r.questionSet, abstain: r.abstain });
      const output = await runClipTask(task, { async: true, inspect: true });
      const ins = output.inspection!;
      const labels: Record<string, string | null> = {};
      for (const p of output.records) labels[p.question_id] = p.model_answer;
      return { output, labels, native: ins.native ?? null, arrays: ins.arrays ?? null, frames: ins.frameIndices.length, timestamps: ins.timestamps };
    };
    p = this.queue.then(job, job);
    this.queue = p.catch(() => {});
    this.engine.set(c.id, p);
    // Keep the few most recent clips (video frames are held in memory).
    if (this.engine.size > 4) this.engine.delete(this.engine.keys().next().value!);
    p.catch(() => this.engine.delete(c.id));
    return p;
  }

  /** An opened engine run, if cached (for serving decoded video frames). */
  cachedEngine(id: string): Promise<EngineRun> | undefined {
    return this.engine.get(id);
  }

  /** Everything the page shows for one clip; an engine failure is an `error` in the result, not a throw. */
  async clipDetail(id: string) {
    const c = this.byId.get(id);
    if (!c) return null;
    const t0 = performance.now();
    const gt = this.groundTruth(c);
    const gtData = gt ? clipData(gt, summaryFeatures(gt)) : null;
    const oracle = this.oracleLabels(c);
    let eng: EngineRun | null = null;
    let error: string | null = null;
    try {
      eng = await this.runEngine(c);
    } catch (e) {
      error = (e as Error).message.split('\n')[0];
      this.log(`clip ${id}: ${error}`);
    }
    const runEst = this.runs.map((r) => (r.byClip.has(id) ? this.runEstimate(r, id) : null));
    const engData = eng?.arrays ? clipData(eng.arrays, summaryFeatures(eng.arrays)) : null;
    const qids = c.qa.length > 0 ? [...new Set(c.qa.map((q) => q.question_id))] : this.questions.questions.map((q) => q.id);
    const margin = (q: Question, est: DynamicsArrays | null): Margin | null => {
      if (!gtData) return null;
      try {
        return decisionMargin(q, gtData, est ? clipData(est, summaryFeatures(est)) : engData ?? undefined);
      } catch {
        return null;
      }
    };
    const qa = qids.map((qid) => {
      const q = this.questions.byId.get(qid);
      const label = oracle[qid] ?? null;
      const answers = this.runs.map((r, i) => {
        const p = r.byClip.get(id)?.get(qid);
        const answer = p ? p.model_answer : undefined;
        const m = q && p && label !== null && (answer === null || answer!.toLowerCase() !== label) ? margin(q, runEst[i]) : null;
        return {
          answer: answer === undefined ? null : answer,
          present: p !== undefined,
          agree: p === undefined || label === null ? null : answer !== null && answer!.toLowerCase() === label,
          near: m ? Number.isFinite(m.rel) && m.rel <= this.near : null,
        };
      });
      const m = q ? margin(q, runEst.find((e) => e) ?? null) : null;
      // The re-run's answer as the run wrote it: null withheld (or the clip failed), undefined not asked (e.g. the published baselines' 6 questions).
      const engine = eng ? eng.labels[qid] : undefined;
      return {
        question: qid,
        category: q?.category ?? c.qa.find((x) => x.question_id === qid)?.category ?? 'unknown',
        text: q?.text ?? '',
        oracle: label,
        answers,
        engine: engine ?? null,
        engineAnswered: engine !== undefined,
        engineAgree: engine === undefined || label === null ? null : engine !== null && engine.toLowerCase() === label,
        feature: m ? m.feature : null,
        value: m ? round(m.value, 1e4) : null,
        estimate: m && m.estimate !== null ? round(m.estimate, 1e4) : null,
        threshold: m ? round(m.threshold, 1e4) : null,
        margin: m && Number.isFinite(m.rel) ? round(m.rel, 1e4) : null,
        near: m ? Number.isFinite(m.rel) && m.rel <= this.near : null,
      };
    });
    const thresholds = qids.flatMap((qid) => {
      const q = this.questions.byId.get(qid);
      return q ? questionThresholds(q) : [];
    });
    const nat = eng?.native;
    return {
      id,
      source: c.source,
      index: c.index,
      problem: c.problem ?? null,
      error,
      video: !c.frames,
      frames: eng ? eng.frames : c.frames ? this.frameIndices(c).length : 0,
      // Video frames are served as the engine decoded them: the published baselines keep none.
      images: c.frames ? true : !!nat?.frames,
      width: nat?.width ?? null,
      height: nat?.height ?? null,
      timestamps: eng ? arr(eng.timestamps) : c.timestamps ? arr(c.timestamps) : [],
      pairs: nat ? nat.pairs.map((p) => ({ quality: p.quality, tracks: p.tracks, inliers: p.inliers })) : [],
      // Per pair: [x0, y0, x1, y1, inlier] per track, rounded to 0.1 px.
      matches: nat?.matches
        ? nat.matches.map((m) => {
            const out: number[] = [];
            for (let j = 0; j < m.ids.length; j++) out.push(Math.round(m.prev[2 * j] * 10) / 10, Math.round(m.prev[2 * j + 1] * 10) / 10, Math.round(m.curr[2 * j] * 10) / 10, Math.round(m.curr[2 * j + 1] * 10) / 10, m.inliers[j]);
            return out;
          })
        : [],
      series: {
        truth: gt ? dynamicsJson(gt) : null,
        engine: eng?.arrays ? dynamicsJson(eng.arrays) : null,
        runs: runEst.map((e) => (e ? dynamicsJson(e) : null)),
      },
      thresholds,
      runs: this.runs.map((r) => r.name),
      // What the re-run column is, and whose: every banner names its predictions file.
      rerun: { of: this.rerun.of?.name ?? null, file: this.rerun.of?.file ?? null, method: this.rerun.engine.method, settings: rerunLine(this.rerun), abstain: this.rerun.abstain, quality: eng?.output.quality ? { verdict: eng.output.quality.verdict, reasons: eng.output.quality.reasons } : null },
      quality: this.verdicts(id),
      qa,
      ms: { engine: nat ? Math.round(nat.timing.total) : null, total: Math.round(performance.now() - t0) },
    };
  }
}

export { SERIES };
