/**
 * The results manifest in the benchmark's submission shape: the model's name, its type
 * ("Baseline") and input ("Vision") as the leaderboard lists them, and the answers per clip; the
 * run's settings ride along so a result can be traced to how it was made.
 */
import { REFERENCE_FRAMES } from '../baseline/reference.js';
import { InputError } from '../core/errors.js';
import type { Device } from '../native/index.js';
import type { RunKey } from './record.js';

export interface ManifestClip {
  clip_id: string;
  source: string;
  /** The clip's prediction records (JSONL). */
  text: string;
  /** The camera the clip ran with (run record). */
  camera?: Record<string, unknown>;
}

export interface Manifest {
  model: string;
  type: 'Baseline';
  input: 'Vision';
  questions: string[];
  n_clips: number;
  n_predictions: number;
  per_source: Record<string, number>;
  settings: {
    /** `--protocol` ('published': the leaderboard's geometric rows' 10 frames and 6 questions), else null. */
    protocol: 'published' | null;
    /** How the clips were answered: 'egogeo', or a published baseline ('vo-proxy', 'flow-heuristic'). */
    method: string;
    /** The frames the method saw (the published baselines: 10 unless --frames said otherwise). */
    frames: number | 'all';
    /** The questions answered (the published baselines answer their 6 only). */
    questions: 'subset' | 'all';
    /** `--abstain`: clips whose scale failed left their scale-dependent answers null (else every question is answered). */
    abstain: boolean;
    scale: string;
    dataset: string;
    clips: string | null;
    source_label: string | null;
    nuscenes_root: string | null;
    carla_domain: string | null;
    /** Where tracking ran (runs before --device: absent). */
    device?: Device;
    /** device 'gpu': the GPU's name and the GPU library's hash (the run record's engine). */
    gpu_device?: string;
    gpu_library?: string;
  };
  predictions: { clip_id: string; source: string; answers: Record<string, string | null>; camera?: Record<string, unknown> }[];
}

export const DEFAULT_MODEL = 'egogeo_vo';

/**
 * A run's model name as the leaderboard names its rows: egogeo_<domain> on the published layout
 * (else egogeo_vo); the published baselines vo_proxy_<domain> / flow_heuristic_<domain> (else
 * vo_proxy / flow_heuristic).
 */
export function modelName(method: string, carlaDomain?: string | null): string {
  if (method === 'egogeo') return carlaDomain ? `egogeo_${carlaDomain}` : DEFAULT_MODEL;
  const base = method.replace('-', '_');
  return carlaDomain ? `${base}_${carlaDomain}` : base;
}

/**
 * `--model NAME`: '{domain}' in it stands for the run's CARLA domain (`x_{domain}` →
 * x_simulation / x_transferred, as the leaderboard names its rows); absent: `modelName`'s default.
 * A run without a CARLA domain (no CARLA videos read) has nothing to put there: one line.
 */
export function resolveModel(model: string | undefined, method: string, carlaDomain: string | null): string {
  if (model === undefined) return modelName(method, carlaDomain);
  if (!model.includes('{domain}')) return model;
  if (!carlaDomain) throw new InputError(`--model '${model}': {domain} stands for the run's CARLA domain, and this run has none (no CARLA videos read); name the model without {domain}`);
  return model.replaceAll('{domain}', carlaDomain);
}

export function buildManifest(clips: readonly ManifestClip[], key: RunKey, model = DEFAULT_MODEL, device?: Device, protocol: 'published' | null = null): Manifest {
  const questions: string[] = [];
  const perSource: Record<string, number> = {};
  let n = 0;
  const predictions = clips.map((c) => {
    const answers: Record<string, string | null> = {};
    for (const line of c.text.split('\n')) {
      if (!line) continue;
      const r = JSON.parse(line) as { question_id: string; model_answer: string | null };
      answers[r.question_id] = r.model_answer;
      if (!questions.includes(r.question_id)) questions.push(r.question_id);
      n++;
    }
    perSource[c.source] = (perSource[c.source] ?? 0) + 1;
    return { clip_id: c.clip_id, source: c.source, answers, ...(c.camera ? { camera: c.camera } : {}) };
  });
  return {
    model,
    type: 'Baseline',
    input: 'Vision',
    questions,
    n_clips: clips.length,
    n_predictions: n,
    per_source: perSource,
    settings: {
      protocol,
      method: key.method ?? 'egogeo',
      frames: key.frames ?? (key.method && key.method !== 'egogeo' ? REFERENCE_FRAMES : 'all'),
      questions: key.method && key.method !== 'egogeo' ? 'subset' : key.questions,
      abstain: key.abstain === true,
      scale: key.scale,
      dataset: key.dataset,
      clips: key.clips,
      source_label: key.source_label,
      nuscenes_root: key.nuscenes_root ?? null,
      carla_domain: key.carla_domain ?? null,
      ...(device ? { device } : {}),
      ...(device === 'gpu' && key.engine?.gpu_device ? { gpu_device: key.engine.gpu_device, gpu_library: key.engine.gpu_library } : {}),
    },
    predictions,
  };
}
