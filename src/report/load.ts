/**
 * The inputs of a report, from disk: the predictions, the estimated trajectories the run wrote
 * (`<preds>.trajectories/<clip>.tum`), and the ground truth of the dataset — a benchmark-layout
 * directory (its `arrays/*.npz`, or the KITTI poses under KITTI frames) or a KITTI sequence
 * directory (its benchmark windows). The dataset defaults to the one the run record names.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../core/trajectory.js';
import { readBenchmark } from '../datasets/benchmark.js';
import { groundTruthArrays, type KittiCache, type NpzArraysReader, readNpzArrays, relativeToFirst } from '../datasets/groundtruth.js';
import { kittiClips, readKittiSequence } from '../datasets/kitti.js';
import { readPredictions } from '../io/predictions.js';
import { readTum } from '../io/trajectories.js';
import { computeDynamics } from '../oracle/index.js';
import { readRunRecord, sidecar } from '../run/run.js';
import type { ClipTruth, ReportInput } from './report.js';

export interface LoadOptions {
  preds: string;
  dataset?: string;
  trajectories?: string;
  readArrays?: NpzArraysReader | null;
}

export interface Loaded {
  records: ReportInput['records'];
  clips: Map<string, ClipTruth>;
  dataset: string | null;
  trajectories: string | null;
}

export function loadReportInputs(o: LoadOptions): Loaded {
  const { records } = readPredictions(o.preds);
  if (records.length === 0) throw new InputError(`${o.preds}: no predictions`);
  const ids = new Set(records.map((r) => r.clip_id));
  const clips = new Map<string, ClipTruth>();
  for (const id of ids) clips.set(id, {});

  let dataset = o.dataset ?? null;
  if (!dataset) {
    const run = existsSync(sidecar.run(o.preds)) ? readRunRecord(o.preds) : null;
    if (run && existsSync(run.key.dataset)) dataset = run.key.dataset;
  }
  if (dataset) {
    if (existsSync(join(dataset, 'clips_index.jsonl'))) {
      const cache: KittiCache = new Map();
      for (const c of readBenchmark(dataset).clips) {
        if (!ids.has(c.id)) continue;
        const gt = groundTruthArrays(c, o.readArrays === undefined ? readNpzArrays : o.readArrays, cache);
        if (gt) clips.get(c.id)!.gt = gt.arrays;
      }
    } else if (existsSync(join(dataset, 'poses.txt'))) {
      for (const c of kittiClips(readKittiSequence(dataset))) {
        if (ids.has(c.id) && c.groundTruth) clips.get(c.id)!.gt = computeDynamics(relativeToFirst(c.groundTruth));
      }
    } else {
      throw new InputError(`${dataset}: neither a benchmark dataset (clips_index.jsonl) nor a KITTI sequence (poses.txt)`);
    }
  }

  const trajectories = o.trajectories ?? (existsSync(sidecar.trajectories(o.preds)) ? sidecar.trajectories(o.preds) : null);
  if (o.trajectories && !existsSync(o.trajectories)) throw new InputError(`${o.trajectories}: no such directory`);
  if (trajectories) {
    for (const id of ids) {
      const p = join(trajectories, `${id}.tum`);
      if (existsSync(p)) clips.get(id)!.estimate = readTum(p);
    }
  }
  return { records, clips, dataset, trajectories };
}
