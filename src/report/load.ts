/**
 * The inputs of a report, from disk: the predictions, the estimated trajectories the run wrote
 * (`<preds>.trajectories/<clip>.tum`), and the ground truth of the dataset — a benchmark-layout
 * directory (its `arrays/*.npz`, or the KITTI poses under KITTI frames) or a KITTI sequence
 * directory (its benchmark windows). The dataset defaults to the one the run record names.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../core/trajectory.js';
import { readDataset } from '../datasets/benchmark.js';
import { groundTruthArrays, type KittiCache, type NpzArraysReader, readNpzArrays } from '../datasets/groundtruth.js';
import { readPredictions } from '../io/predictions.js';
import { readTum } from '../io/trajectories.js';
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
    if (!existsSync(join(dataset, 'clips_index.jsonl')) && !existsSync(join(dataset, 'image_0'))) {
      throw new InputError(`${dataset}: neither a benchmark dataset (clips_index.jsonl) nor a KITTI sequence (image_0/, poses.txt)`);
    }
    const cache: KittiCache = new Map();
    for (const c of readDataset(dataset).clips) {
      if (!ids.has(c.id)) continue;
      const gt = groundTruthArrays(c, o.readArrays === undefined ? readNpzArrays : o.readArrays, cache);
      if (gt) clips.get(c.id)!.gt = gt.arrays;
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
