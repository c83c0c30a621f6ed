/**
 * The inputs of a report, from disk: one or more predictions files, each one run (e.g. a CARLA
 * simulation run and a style-transferred run of the same clips), named by its manifest
 * (`<preds>.manifest.json` `model`), else by its run record's CARLA domain (`<preds>.run.json`
 * `key.carla_domain` → `egogeo_<domain>`), else by the file name; the estimated trajectories each
 * run wrote (`<preds>.trajectories/<clip>.tum`); the ground truth of each run's dataset — a
 * benchmark-layout directory (its `arrays/*.npz`, or the KITTI poses under KITTI frames), a
 * published root (nuscenes_clips/, carla_clips/) or a KITTI sequence directory (its benchmark
 * windows); a run's dataset defaults to the one its run record names — and the published
 * leaderboard (`--leaderboard`).
 */
import { requireLayout } from '../datasets/layout.js';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, join } from 'node:path';
import { InputError } from '../core/errors.js';
import type { Clip } from '../core/clip.js';
import { readDataset } from '../datasets/benchmark.js';
import { groundTruthArrays, type NpzArraysReader, readNpzArrays } from '../datasets/groundtruth.js';
import { readPredictions } from '../io/predictions.js';
import { readInputText } from '../io/safety.js';
import { parseTum, qualityFromTum } from '../io/trajectories.js';
import type { DynamicsArrays } from '../oracle/index.js';
import { readRunRecord, sidecar } from '../run/run.js';
import { type LeaderboardRow, parseLeaderboard } from './leaderboard.js';
import { type ClipTruth, clipKey } from './report.js';
import { combineRuns, type CombinedRuns, type ReportRun, sourceOf } from './runs.js';

export interface LoadOptions {
  preds: string[];
  /** Ground truth for every file (default: each run record's dataset). */
  dataset?: string;
  /** Estimated trajectories (only with one predictions file; default: `<preds>.trajectories`). */
  trajectories?: string;
  readArrays?: NpzArraysReader | null;
}

export interface Loaded {
  runs: ReportRun[];
  /** The runs' records combined by domain (runs.ts): `source` is the domain label. */
  combined: CombinedRuns;
  /** Keyed by `clipKey(domain, clip_id)`. */
  clips: Map<string, ClipTruth>;
  datasets: (string | null)[];
}

/** `<preds>.manifest.json`'s model, when the file exists. */
function manifestModel(preds: string): string | null {
  const p = sidecar.manifest(preds);
  if (!existsSync(p)) return null;
  let m: unknown;
  try {
    m = JSON.parse(readFileSync(p, 'utf8'));
  } catch (e) {
    throw new InputError(`${p}: not a results manifest (${(e as Error).message.split('\n')[0]})`);
  }
  const model = (m as { model?: unknown } | null)?.model;
  if (typeof model !== 'string' || !model) throw new InputError(`${p}: not a results manifest (no string "model")`);
  return model;
}

/**
 * A run's protocol in words, from its run key: the method, the frames the estimator saw and the
 * questions answered ("egogeo, all frames, 14 questions"; "vo-proxy, 10 frames, 6 questions"),
 * the terms the leaderboard's rows differ in.
 */
export function protocolOf(key: { method?: string; frames?: number | null; questions?: string }): string {
  const method = key.method ?? 'egogeo';
  const frames = framesOf(key);
  const six = key.questions === 'subset' || method !== 'egogeo';
  return `${method}, ${frames === null ? 'all frames' : `${frames} frames`}, ${six ? '6 questions' : '14 questions'}`;
}

/** The frames a run's estimator saw, from its run key (null: every frame; the published baselines always see 10). */
export function framesOf(key: { method?: string; frames?: number | null }): number | null {
  return key.frames ?? ((key.method ?? 'egogeo') === 'egogeo' ? null : 10);
}

/** Reads one predictions file as a run (name, CARLA domain, dataset). */
function readRun(preds: string): { run: ReportRun; dataset: string | null } {
  const records = readPredictions(preds).records;
  if (records.length === 0) throw new InputError(`${preds}: no predictions`);
  const record = existsSync(sidecar.run(preds)) ? readRunRecord(preds) : null;
  const d = (record?.key as { carla_domain?: unknown } | undefined)?.carla_domain;
  if (d !== undefined && d !== null && typeof d !== 'string') throw new InputError(`${sidecar.run(preds)}: key.carla_domain must be a string or null, got ${JSON.stringify(d)}`);
  const domain = d || null;
  const model = manifestModel(preds);
  const [name, from]: [string, ReportRun['name_from']] = model ? [model, 'manifest'] : domain ? [`egogeo_${domain}`, 'run record'] : [basename(preds), 'file name'];
  return { run: { file: preds, name, name_from: from, carla_domain: domain, records, protocol: record ? protocolOf(record.key) : null, method: record ? (record.key.method ?? 'egogeo') : null, ...(record ? { frames: framesOf(record.key) } : {}) }, dataset: record && existsSync(record.key.dataset) ? record.key.dataset : null };
}

/**
 * Gives every run a distinct name. The same file twice is an error; two runs that claim the same
 * name (manifest or run record) and share a clip are too, since nothing tells them apart; same
 * names on different clips (e.g. runs with different --source-label) get the file name appended.
 */
function nameRuns(runs: ReportRun[]): void {
  const real = new Map<string, string>();
  for (const r of runs) {
    let p: string;
    try {
      p = realpathSync(r.file);
    } catch {
      p = r.file;
    }
    const other = real.get(p);
    if (other !== undefined) throw new InputError(`${r.file}: given twice (also as ${other})`);
    real.set(p, r.file);
  }
  const byName = new Map<string, ReportRun[]>();
  for (const r of runs) byName.set(r.name, [...(byName.get(r.name) ?? []), r]);
  for (const [name, same] of byName) {
    if (same.length < 2) continue;
    for (let i = 0; i < same.length; i++) {
      const keys = new Set(same[i].records.map((x) => clipKey(sourceOf(x), x.clip_id)));
      for (let j = i + 1; j < same.length; j++) {
        const shared = same[j].records.find((x) => keys.has(clipKey(sourceOf(x), x.clip_id)));
        if (shared && (same[i].name_from !== 'file name' || same[j].name_from !== 'file name')) {
          throw new InputError(
            `${same[j].file}: run '${name}' (from its ${same[j].name_from}) is also the run of ${same[i].file}, and both have clip '${shared.clip_id}'` +
              ` of source '${sourceOf(shared)}'; name the runs apart (egogeo run --model, --carla-domain or --source-label)`,
          );
        }
      }
    }
    for (const r of same) r.name = r.name_from === 'file name' ? r.file : `${name} [${basename(r.file)}]`;
  }
}

export function loadReportInputs(o: LoadOptions): Loaded {
  if (o.preds.length === 0) throw new InputError('report: no predictions file given');
  if (o.trajectories && o.preds.length > 1) throw new InputError('--trajectories goes with one predictions file (each run has its own <preds>.trajectories)');
  if (o.trajectories && !existsSync(o.trajectories)) throw new InputError(`${o.trajectories}: no such directory`);
  const read = o.preds.map(readRun);
  const runs = read.map((x) => x.run);
  nameRuns(runs);
  const combined = combineRuns(runs);

  const clips = new Map<string, ClipTruth>();
  const datasets: (string | null)[] = [];
  const byDataset = new Map<string, { clips: Map<string, Clip>; gt: Map<string, DynamicsArrays | null> }>();
  // The (domain key → clip id) pairs each run owns in the combined records.
  const owned = runs.map(() => new Map<string, string>());
  for (const r of combined.records) {
    const key = clipKey(r.source!, r.clip_id);
    if (!clips.has(key)) clips.set(key, {});
    owned[combined.owner.get(r.source!)!].set(key, r.clip_id);
  }

  runs.forEach((run, i) => {
    const mine = owned[i];
    const dataset = o.dataset ?? read[i].dataset;
    datasets.push(dataset);
    if (dataset) {
      requireLayout(dataset);
      let ds = byDataset.get(dataset);
      if (!ds) {
        const opts = { needFrames: false }; // a published root's nuScenes clips need no frames for ground truth
        ds = { clips: new Map(readDataset(dataset, opts).clips.map((c) => [c.id, c])), gt: new Map() };
        byDataset.set(dataset, ds);
      }
      for (const [key, id] of mine) {
        if (!ds.gt.has(id)) {
          const c = ds.clips.get(id);
          ds.gt.set(id, c ? (groundTruthArrays(c, o.readArrays === undefined ? readNpzArrays : o.readArrays)?.arrays ?? null) : null);
        }
        const gt = ds.gt.get(id);
        if (gt) clips.get(key)!.gt = gt;
      }
    }
    const dir = o.trajectories ?? (existsSync(sidecar.trajectories(run.file)) ? sidecar.trajectories(run.file) : null);
    if (dir) {
      for (const [key, id] of mine) {
        const p = join(dir, `${id}.tum`);
        if (!existsSync(p)) continue;
        const text = readFileSync(p, 'utf8');
        clips.get(key)!.estimate = parseTum(text, p);
        clips.get(key)!.quality = qualityFromTum(text) ?? undefined;
      }
    }
  });
  return { runs, combined, clips, datasets };
}

/** Reads and validates a leaderboard file (`--leaderboard`). */
export function readLeaderboard(file: string): LeaderboardRow[] {
  const text = readInputText(file, 'leaderboard JSON file');
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new InputError(`${file}: not a leaderboard: not JSON (${(e as Error).message.split('\n')[0]}); expected a JSON list of rows with a string "model" and a numeric "balanced_acc"`);
  }
  return parseLeaderboard(data, file);
}
