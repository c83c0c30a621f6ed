/**
 * What the clip viewer shows, computed on the server: the dataset (every layout `egogeo run`
 * reads, through readDataset), the predictions files (each with its run's estimated trajectories,
 * `<preds>.trajectories/<clip>.tum`), the clip list with agreement and near-threshold flags (the
 * margins `egogeo report` uses), and — when a clip is opened — a fresh engine run with its track
 * points and inlier flags, the trajectories, the dynamics series and the QA table. May import:
 * core/, datasets/, io/, oracle/, report/, run/, vo/, native/.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { InputError } from '../core/errors.js';
import type { Clip } from '../core/clip.js';
import { type BenchmarkOptions, readDataset } from '../datasets/benchmark.js';
import { groundTruthArrays } from '../datasets/groundtruth.js';
import type { Prediction } from '../core/prediction.js';
import { readPredictions } from '../io/predictions.js';
import { type ClipQuality, qualityFromTum, readTum } from '../io/trajectories.js';
import { clipData, computeDynamics, DEFAULT_QUESTIONS_PATH, type DynamicsArrays, labelClip, loadQuestions, type Question, type QuestionSet, runOracle, summaryFeatures } from '../oracle/index.js';
import { domainTable } from '../report/domains.js';
import { decisionMargin, type Margin } from '../report/margins.js';
import { keyEngine, readRunRecord, type RunKey, sidecar } from '../run/record.js';
import { type EngineConfig, engineConfig, engineInput } from '../vo/config.js';
import { engineVersion } from '../native/index.js';
import { estimateClipAsync } from '../vo/estimate.js';
import { evenFrames, loadFrames } from '../vo/frames.js';
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
}

export interface PredictionRun {
  name: string;
  file: string;
  /** Records per clip id, then per question id. */
  byClip: Map<string, Map<string, Prediction>>;
  trajectories: string | null;
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
  /** The first predictions run's quality verdict for this clip when it is not 'ok' (vo/quality.ts). */
  quality?: { verdict: string; reasons: string[] };
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

interface EngineRun {
  native: NativeResult;
  labels: Record<string, string>;
  arrays: DynamicsArrays;
  frames: number;
  timestamps: number[];
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
  /** What the engine runs with here: the first predictions file's run settings, else a run's defaults. */
  readonly settings: EngineConfig;
  private queue: Promise<unknown> = Promise.resolve();
  private log: (line: string) => void;

  constructor(o: ViewOptions) {
    this.log = o.log ?? (() => {});
    if (!existsSync(o.dataset)) throw new InputError(`${o.dataset}: no such dataset directory`);
    const b = readDataset(o.dataset, { nuscenesRoot: o.nuscenesRoot, carlaDomain: o.carlaDomain, cameras: o.cameras, needFrames: o.nuscenesRoot !== undefined, log: this.log });
    this.root = b.dir;
    this.clips = b.clips.slice(0, o.limit);
    this.byId = new Map(this.clips.map((c) => [c.id, c]));
    this.questions = loadQuestions(o.config ?? DEFAULT_QUESTIONS_PATH);
    this.near = o.near ?? 0.15;
    this.runs = (o.predictions ?? []).map((f) => this.readRun(f));
    for (const r of this.runs) if (r.warning) this.warnings.push(r.warning);
    // A run answered from one CARLA domain's videos, shown over the other's, would look wrong for no reason.
    const shown = o.carlaDomain ?? 'simulation';
    for (const r of this.runs) {
      const d = readRunRecord(r.file)?.key.carla_domain;
      if (d && d !== shown) this.warn(`${r.file}: answered from the CARLA ${d} videos; this page shows the ${shown} videos (egogeo view --carla-domain ${d} shows what it answered from)`);
    }
    this.settings = this.engineSettings();
  }

  /**
   * The engine re-runs clips as the predictions' run did (frames, scale, photometric stage, from
   * the first file with a run record), so what the page shows is what that run answered from; a
   * run by another engine build, or runs with other settings, are named in a warning.
   */
  private engineSettings(): EngineConfig {
    const keyed = this.runs.map((r) => ({ r, key: readRunRecord(r.file)?.key })).filter((x): x is { r: PredictionRun; key: RunKey } => !!x.key);
    if (keyed.length === 0) return engineConfig({ device: 'cpu' }); // the defaults, tracking on the CPU as for a keyed run
    const { r, key } = keyed[0];
    const s = keyEngine(key);
    const differs = keyed.slice(1).filter((x) => JSON.stringify(keyEngine(x.key)) !== JSON.stringify(s));
    if (differs.length > 0) this.warn(`${differs[0].r.file}: run with other engine settings than ${r.file}; the engine here runs as ${r.name} did`);
    const mine = engineVersion();
    if (key.engine && (key.engine.egogeo !== mine.egogeo || key.engine.addon !== mine.addon)) {
      this.warn(`${r.file}: answered by egogeo ${key.engine.egogeo} (addon ${key.engine.addon}); this viewer's engine is egogeo ${mine.egogeo} (addon ${mine.addon}), so its tracks may differ from that run's`);
    }
    return s;
  }

  /** The dataset image at position `i` of the clip as the engine sees it (the run's frame selection applied); null for none. */
  frameFile(c: Clip, i: number): string | null {
    if (!c.frames) return null;
    const k = this.settings.frames ? evenFrames(c.frames.length, this.settings.frames)[i] : i;
    const f = k === undefined || k >= c.frames.length ? null : c.frames[k];
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
    const run: PredictionRun = { name: basename(file), file, byClip, trajectories: existsSync(trajDir) ? trajDir : null };
    if (ids.length === 0) run.warning = `${file}: no predictions`;
    else if (missing.length === ids.length) run.warning = `${file}: none of its ${ids.length} clips is in the dataset ${this.root} (a predictions file for other clips? e.g. '${missing[0]}')`;
    else if (missing.length > 0) run.warning = `${file}: ${missing.length} of its ${ids.length} clips are not in the dataset (e.g. '${missing[0]}')`;
    if (run.warning) this.log(`warning: ${run.warning}`);
    return run;
  }

  /** The ground-truth arrays of a clip (npz, else KITTI poses), cached; null when none or unreadable. */
  groundTruth(c: Clip): DynamicsArrays | null {
    if (!this.gtCache.has(c.id)) {
      let g: DynamicsArrays | null = null;
      try {
        g = groundTruthArrays(c)?.arrays ?? null;
      } catch (e) {
        this.log(`warning: clip ${c.id}: ground truth unreadable (${(e as Error).message.split('\n')[0]})`);
      }
      this.gtCache.set(c.id, g);
    }
    return this.gtCache.get(c.id)!;
  }

  /** The run's estimated trajectory of a clip as oracle arrays (null without its TUM file). */
  /** The verdict a run's trajectory file carries for a clip (null: none, or no file). */
  runQuality(run: PredictionRun, id: string): ClipQuality | null {
    if (!run.trajectories) return null;
    const p = join(run.trajectories, `${id}.tum`);
    try {
      return existsSync(p) ? qualityFromTum(readFileSync(p, 'utf8')) : null;
    } catch {
      return null;
    }
  }

  runEstimate(run: PredictionRun, id: string): DynamicsArrays | null {
    if (!run.trajectories) return null;
    const p = join(run.trajectories, `${id}.tum`);
    if (!existsSync(p)) return null;
    try {
      return computeDynamics(readTum(p));
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
          if (Number.isFinite(mg.rel) && mg.rel <= this.near) near.add(qid);
        }
      }
    }
    const questions = c.qa.length > 0 ? [...new Set(c.qa.map((q) => q.question_id))] : this.questions.questions.map((q) => q.id);
    const quality = this.runs.map((r) => this.runQuality(r, c.id)).find((q) => q && q.verdict !== 'ok');
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
      ...(quality ? { quality: { verdict: quality.verdict, reasons: quality.reasons } } : {}),
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

  /** The engine over a clip, one clip at a time (the server stays responsive; CPU use modest), cached. */
  runEngine(c: Clip): Promise<EngineRun> {
    let p = this.engine.get(c.id);
    if (p) return p;
    const job = async (): Promise<EngineRun> => {
      if (!c.problem && !c.frames && !c.video) throw new Error(`clip ${c.id} has no frames here (nuScenes clips of the published layout need --nuscenes-root)`);
      const { clip, options, alternative } = engineInput(loadFrames(c), this.settings);
      const keep = { keepMatches: true, keepFrames: true };
      const est = await estimateClipAsync(clip, { ...options, ...keep }, alternative && { ...alternative, ...keep });
      const o = runOracle(est.trajectory, this.questions);
      return { native: est.native, labels: o.labels, arrays: o.arrays, frames: clip.frames.length, timestamps: Array.from(clip.timestamps) };
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
    const engData = eng ? clipData(eng.arrays, summaryFeatures(eng.arrays)) : null;
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
      const engine = eng ? eng.labels[qid] ?? null : null;
      return {
        question: qid,
        category: q?.category ?? c.qa.find((x) => x.question_id === qid)?.category ?? 'unknown',
        text: q?.text ?? '',
        oracle: label,
        answers,
        engine,
        engineAgree: engine === null || label === null ? null : engine === label,
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
      frames: eng ? eng.frames : c.frames?.length ?? 0,
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
        engine: eng ? dynamicsJson(eng.arrays) : null,
        runs: runEst.map((e) => (e ? dynamicsJson(e) : null)),
      },
      thresholds,
      runs: this.runs.map((r) => r.name),
      qa,
      ms: { engine: nat ? Math.round(nat.timing.total) : null, total: Math.round(performance.now() - t0) },
    };
  }
}

export { SERIES };
