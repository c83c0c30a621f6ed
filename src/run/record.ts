/**
 * A run's record (`OUT.run.json`) and the files beside its output: what was run (the key a resume
 * or a merge must match, the engine included), with which clips, and how it ended. The runner
 * (run.ts), the manifest, merge, report and view read it from here.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { Clip } from '../core/clip.js';
import { InputError } from '../core/errors.js';
import type { CarlaDomain } from '../datasets/records.js';
import { type Device, deviceLine, engineLine, type EngineVersion, type Photometric } from '../native/index.js';
import { type EngineConfig, engineConfig, type engineRecord, type Method, type Resolution, type Scale } from '../vo/config.js';

export const RUN_VERSION = 1;

export interface Shard {
  index: number;
  count: number;
}

/** The options that must match for a rerun to resume an output (and for shards to merge). */
export interface RunKey {
  dataset: string;
  /**
   * The dataset by content (datasetContent): an edited qa.jsonl or clip list under the same path
   * is another run. Absent in records written before it was recorded (such a run cannot resume).
   */
  dataset_content?: DatasetContent;
  clips: string | null;
  source_label: string | null;
  limit: number | null;
  questions: 'subset' | 'all';
  method: Method;
  frames: number | null;
  config: string;
  /** SHA-256 of the question file's bytes: an edited file under the same name is another run. */
  config_sha256: string;
  scale: Scale;
  nuscenes_root: string | null;
  /** The CARLA videos read (published layout), else null. */
  carla_domain: CarlaDomain | null;
  /** The `--cameras` file's content, else null. */
  cameras: unknown;
  photometric: Photometric;
  /**
   * `--abstain`: clips whose scale failed leave their scale-dependent answers null (the grader then
   * leaves them out); absent = every question answered (the default; records before it existed withheld them).
   */
  abstain?: true;
  /** The tracker's resolution for frames far apart; absent = 'auto' (records before it existed). */
  resolution?: Resolution;
  /**
   * The engine that answered: the build, the device and on the GPU the device's name and the GPU
   * library's hash (a resume or merge with another build or device would mix two engines' answers).
   */
  engine: EngineVersion;
}

/** SHA-256 prefixes (16 hex digits) of a dataset's clip list (id, source, position) and of its QA records, all fields. */
export interface DatasetContent {
  clips: string;
  qa: string;
}

/** The run key's dataset content of `clips` (the whole run's, before any shard). */
export function datasetContent(clips: readonly Pick<Clip, 'id' | 'source' | 'index' | 'qa'>[]): DatasetContent {
  const sha = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 16);
  return { clips: sha(clips.map((c) => [c.id, c.source, c.index])), qa: sha(clips.map((c) => c.qa)) };
}

/** `OUT.run.json`. */
export interface RunRecord {
  egogeo_run: number;
  key: RunKey;
  shard: Shard;
  /** Model name for the manifest. */
  model: string;
  /** `--protocol` ('published': 10 frames, the 6-question subset), else null; absent in records written before it was recorded. */
  protocol?: 'published' | null;
  /** Clips in the whole (unsharded) run. */
  clips_total: number;
  /** This run's clips: [canonical index, clip id, source, records expected]. */
  clips: [number, string, string, number][];
  /** The camera each clip ran with (intrinsics or field of view, height, road normal, origin). */
  cameras?: Record<string, Record<string, unknown>>;
  /** Where this run's tracking ran (for the manifest; the key's engine names it too, so a resume or merge across devices refuses). */
  device?: Device;
  /**
   * The run's engine configuration (vo/config.ts; the addon's own defaults are the key's addon
   * build's: `optionTable()`), and the rule that switched clips to the wide-baseline preset.
   */
  engine_options?: ReturnType<typeof engineRecord>;
  /**
   * The answered clips' quality verdicts (vo/quality.ts; written when the run completes): counts,
   * and the clips that are not 'ok' with the reasons. 'unknown': an estimate without a verdict.
   */
  quality?: { ok: number; weak: number; failed: number; unknown: number; flagged: Record<string, { verdict: string; reasons: string[] }> };
  status: 'running' | 'complete' | 'interrupted';
  started: string;
  finished?: string;
  counts?: { done: number; failed: number; resumed: number };
  seconds?: number;
}

/** The engine configuration a run key names (a field an older record lacks takes today's default; tracking on the CPU). */
export function keyEngine(key: RunKey): EngineConfig {
  return engineConfig({ method: key.method, frames: key.frames, scale: key.scale, photometric: key.photometric, resolution: key.resolution, device: 'cpu' }, 'run record');
}

export const sidecar = {
  errors: (out: string) => `${out}.errors.jsonl`,
  trajectories: (out: string) => `${out}.trajectories`,
  /** A finished clip's own file in the trajectories folder (a resumed run skips the clips that have it): the estimated trajectory (egogeo), else the published baseline's signals. */
  clipFile: (out: string, id: string, method: string) => `${out}.trajectories/${id}${method === 'egogeo' ? '.tum' : '.signals.json'}`,
  run: (out: string) => `${out}.run.json`,
  manifest: (out: string) => `${out}.manifest.json`,
};

export function readRunRecord(out: string): RunRecord | null {
  const p = sidecar.run(out);
  if (!existsSync(p)) return null;
  try {
    const r = JSON.parse(readFileSync(p, 'utf8')) as RunRecord;
    if (r.egogeo_run !== RUN_VERSION) throw new Error(`version ${r.egogeo_run}`);
    return r;
  } catch (e) {
    throw new InputError(`${p}: not an egogeo run record (${(e as Error).message.split('\n')[0]})`);
  }
}

/** What differs between two run keys (`b` the earlier), as 'field: X then, Y now'; null when none. */
export function keyDiff(a: RunKey, b: RunKey): string | null {
  // The build first, then where it tracked (a record from before the device was recorded: the CPU).
  if (a.engine?.egogeo !== b.engine?.egogeo || a.engine?.addon !== b.engine?.addon || !a.engine !== !b.engine) {
    return `engine: ${engineLine(b.engine)} then, ${engineLine(a.engine)} now`;
  }
  if (a.engine && b.engine && deviceLine(a.engine) !== deviceLine(b.engine)) return `device: ${deviceLine(b.engine)} then, ${deviceLine(a.engine)} now`;
  // Both keys' fields: an optional field (resolution) is absent at its default.
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof RunKey>) {
    if (k === 'engine' || JSON.stringify(a[k]) === JSON.stringify(b[k])) continue;
    if (k === 'dataset_content' && a.dataset === b.dataset) {
      const what = !b.dataset_content ? 'its content (QA records, clip list) was not recorded then (an older egogeo)' : a.dataset_content?.clips !== b.dataset_content.clips ? 'its clip list changed' : 'its QA records changed';
      return `dataset ${a.dataset}: ${what}; answers from both would mix`;
    }
    if (k === 'config_sha256' && a.config === b.config) return `question file ${a.config}: its content changed (sha256 ${String(b[k]).slice(0, 12)}… then, ${String(a[k]).slice(0, 12)}… now)`;
    const shown = (v: unknown) => (v === undefined ? 'the default' : JSON.stringify(v));
    return `${k}: ${shown(b[k])} then, ${shown(a[k])} now`;
  }
  return null;
}
