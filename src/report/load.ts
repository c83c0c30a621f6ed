/**
 * The inputs of a report, from disk: one or more predictions files (one per domain, e.g. a CARLA
 * simulation run and a style-transferred run of the same clips), the estimated trajectories each
 * run wrote (`<preds>.trajectories/<clip>.tum`), and the ground truth of each run's dataset — a
 * benchmark-layout directory (its `arrays/*.npz`, or the KITTI poses under KITTI frames) or a KITTI
 * sequence directory (its benchmark windows). A run's dataset defaults to the one its run record
 * names.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../core/trajectory.js';
import { type BenchmarkClip, readDataset } from '../datasets/benchmark.js';
import { groundTruthArrays, type KittiCache, type NpzArraysReader, readNpzArrays } from '../datasets/groundtruth.js';
import { type Prediction, readPredictions } from '../io/predictions.js';
import { readTum } from '../io/trajectories.js';
import type { DynamicsArrays } from '../oracle/index.js';
import { readRunRecord, sidecar } from '../run/run.js';
import { type ClipTruth, clipKey, sourceOf } from './report.js';

export interface LoadOptions {
  preds: string[];
  /** Ground truth for every file (default: each run record's dataset). */
  dataset?: string;
  /** Estimated trajectories (only with one predictions file; default: `<preds>.trajectories`). */
  trajectories?: string;
  readArrays?: NpzArraysReader | null;
}

export interface Loaded {
  records: Prediction[];
  /** Keyed by `clipKey(source, clip_id)`. */
  clips: Map<string, ClipTruth>;
  datasets: (string | null)[];
}

export function loadReportInputs(o: LoadOptions): Loaded {
  if (o.preds.length === 0) throw new InputError('report: no predictions file given');
  if (o.trajectories && o.preds.length > 1) throw new InputError('--trajectories goes with one predictions file (each run has its own <preds>.trajectories)');
  if (o.trajectories && !existsSync(o.trajectories)) throw new InputError(`${o.trajectories}: no such directory`);
  const records: Prediction[] = [];
  const clips = new Map<string, ClipTruth>();
  const owner = new Map<string, string>();
  const datasets: (string | null)[] = [];
  const byDataset = new Map<string, { clips: Map<string, BenchmarkClip>; gt: Map<string, DynamicsArrays | null> }>();
  const kittiCache: KittiCache = new Map();

  for (const preds of o.preds) {
    const recs = readPredictions(preds).records;
    if (recs.length === 0) throw new InputError(`${preds}: no predictions`);
    const mine = new Map<string, string>(); // key → clip id, this file
    for (const r of recs) {
      const key = clipKey(sourceOf(r), r.clip_id);
      const other = owner.get(key);
      if (other !== undefined && other !== preds) {
        throw new InputError(`${preds}: clip '${r.clip_id}' of source '${sourceOf(r)}' is also in ${other}; give the runs different --source-label values`);
      }
      owner.set(key, preds);
      mine.set(key, r.clip_id);
    }
    records.push(...recs);
    for (const key of mine.keys()) clips.set(key, {});

    let dataset = o.dataset ?? null;
    if (!dataset) {
      const run = existsSync(sidecar.run(preds)) ? readRunRecord(preds) : null;
      if (run && existsSync(run.key.dataset)) dataset = run.key.dataset;
    }
    datasets.push(dataset);
    if (dataset) {
      if (!existsSync(join(dataset, 'clips_index.jsonl')) && !existsSync(join(dataset, 'image_0'))) {
        throw new InputError(`${dataset}: neither a benchmark dataset (clips_index.jsonl) nor a KITTI sequence (image_0/, poses.txt)`);
      }
      let ds = byDataset.get(dataset);
      if (!ds) {
        ds = { clips: new Map(readDataset(dataset).clips.map((c) => [c.id, c])), gt: new Map() };
        byDataset.set(dataset, ds);
      }
      for (const [key, id] of mine) {
        if (!ds.gt.has(id)) {
          const c = ds.clips.get(id);
          ds.gt.set(id, c ? (groundTruthArrays(c, o.readArrays === undefined ? readNpzArrays : o.readArrays, kittiCache)?.arrays ?? null) : null);
        }
        const gt = ds.gt.get(id);
        if (gt) clips.get(key)!.gt = gt;
      }
    }

    const dir = o.trajectories ?? (existsSync(sidecar.trajectories(preds)) ? sidecar.trajectories(preds) : null);
    if (dir) {
      for (const [key, id] of mine) {
        const p = join(dir, `${id}.tum`);
        if (existsSync(p)) clips.get(key)!.estimate = readTum(p);
      }
    }
  }
  return { records, clips, datasets };
}
