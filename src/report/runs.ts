/**
 * Several runs in one report. A run is one predictions file with a name (its manifest's model, its
 * run record's CARLA domain, or the file name) and, for runs over the published layout, the CARLA
 * domain its CARLA clips were rendered in ("simulation" or "transferred"). Runs of the same clips
 * carry the same (source, clip id) keys, so each record is given a *domain*: its source, and for
 * CARLA clips the run's domain ("carla simulation"). Where several runs cover one domain (the
 * nuScenes clips of a simulation run and a transferred run), their answers are compared: the same
 * answers are reported once, different answers once per run (`nuscenes (egogeo_simulation)`).
 * Pure: load.ts reads the files.
 */
import { type Prediction, recordSource } from '../core/prediction.js';

export interface ReportRun {
  file: string;
  name: string;
  /** Where the name comes from. */
  name_from: 'manifest' | 'run record' | 'file name';
  /** The CARLA domain of this run's CARLA clips (run record `key.carla_domain`), else null. */
  carla_domain: string | null;
  /** How the run was made, as its run record says (method, frames, questions), else null. */
  protocol?: string | null;
  /** Its method (run record key.method: egogeo, vo-proxy, flow-heuristic), else null (no run record). */
  method?: string | null;
  /** The frames its estimator saw, as its run record says (null: every frame); absent without a run record. */
  frames?: number | null;
  /** The records as the file holds them. */
  records: Prediction[];
}

/** A record's source: its `source` field, else the reference's rule (core/prediction.ts). */
export const sourceOf = (r: Prediction): string => recordSource(r);

/** The domain of a record of a run: its source, CARLA split by the run's domain. */
export const domainOf = (source: string, carlaDomain: string | null): string => (source === 'carla' && carlaDomain ? `carla ${carlaDomain}` : source);

/** A domain label without the run that split it off ('nuscenes (egogeo_simulation)' → 'nuscenes'). */
export const baseDomain = (d: string): string => d.replace(/ \(.*\)$/, '');

export interface DomainInfo {
  /** The domain label the combined records carry as `source`. */
  domain: string;
  /** The runs whose records it holds (several when they gave the same answers). */
  runs: string[];
}

export interface CombinedRuns {
  /** Every run's records with `source` set to its domain label; one copy where runs agree. */
  records: Prediction[];
  /** For each domain label, in order of first appearance. */
  domains: DomainInfo[];
  /** Index of the run whose records (and trajectories) a domain label's clips come from. */
  owner: Map<string, number>;
  notes: string[];
}

const answerKey = (r: Prediction): string => `${r.clip_id}\u0000${r.question_id}`;

/** Combines runs into one set of records keyed by (domain, clip id); see the module comment. */
export function combineRuns(runs: readonly ReportRun[]): CombinedRuns {
  // domain → run index → records
  const byDomain = new Map<string, Map<number, Prediction[]>>();
  runs.forEach((run, i) => {
    for (const r of run.records) {
      const d = domainOf(sourceOf(r), run.carla_domain);
      let m = byDomain.get(d);
      if (!m) byDomain.set(d, (m = new Map()));
      let rs = m.get(i);
      if (!rs) m.set(i, (rs = []));
      rs.push(r);
    }
  });
  const records: Prediction[] = [];
  const domains: DomainInfo[] = [];
  const owner = new Map<string, number>();
  const notes: string[] = [];
  const add = (label: string, i: number, rs: Prediction[], names: string[]) => {
    for (const r of rs) records.push({ ...r, source: label });
    domains.push({ domain: label, runs: names });
    owner.set(label, i);
  };
  for (const [d, per] of byDomain) {
    const entries = [...per];
    if (entries.length === 1) {
      add(d, entries[0][0], entries[0][1], [runs[entries[0][0]].name]);
      continue;
    }
    // Runs that gave the same answers (one method's runs of two CARLA domains share their nuScenes
    // clips) are one class, reported once; each class of differing answers gets its own label.
    const signature = (rs: Prediction[]): string => JSON.stringify(rs.map((r) => [answerKey(r), r.model_answer]).sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0)));
    const classes = new Map<string, [number, Prediction[]][]>();
    for (const e of entries) {
      const k = signature(e[1]);
      classes.set(k, [...(classes.get(k) ?? []), e]);
    }
    const all = entries.map(([i]) => runs[i].name);
    const n = new Set(entries.flatMap(([, rs]) => rs.map(answerKey))).size;
    if (classes.size === 1) {
      add(d, entries[0][0], entries[0][1], all);
      notes.push(`${d}: the same ${n} answers in ${all.join(' and ')}; counted once`);
      continue;
    }
    for (const members of classes.values()) {
      const names = members.map(([i]) => runs[i].name);
      add(`${d} (${names.join(' = ')})`, members[0][0], members[0][1], names);
    }
    const same = [...classes.values()].filter((m) => m.length > 1).map((m) => m.map(([i]) => runs[i].name).join(' = '));
    if (same.length === 0) {
      const maps = entries.map(([, rs]) => new Map(rs.map((r) => [answerKey(r), r.model_answer])));
      const keys = new Set(maps.flatMap((m) => [...m.keys()]));
      let differ = 0;
      for (const k of keys) if (maps.some((m) => !m.has(k) || m.get(k) !== maps[0].get(k))) differ++;
      notes.push(`${d}: ${all.join(' and ')} differ in ${differ} of ${keys.size} answers; reported once per run`);
    } else {
      notes.push(`${d}: ${all.join(', ')} answer ${n} items in ${classes.size} different ways, reported once per way (the same answers, counted once: ${same.join('; ')})`);
    }
  }
  return { records, domains, owner, notes };
}
