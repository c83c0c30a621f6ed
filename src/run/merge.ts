/**
 * `egogeo merge`: the outputs of `egogeo run --shard i/n` (one per i) → one predictions file in
 * canonical order, byte-identical to what one unsharded run writes, with the merged errors file,
 * trajectories and manifest. Each shard must be complete (its `OUT.run.json` says so), all shards
 * must come from the same options, every shard index 0..n-1 must be there once, and every clip of
 * the run must be answered exactly once (missing clips are named with their reasons).
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { errnoText, faultFor, guardOutputs, readInputText } from '../io/safety.js';
import { onInterrupt } from '../io/interrupt.js';
import { lockHolder, lockOutput } from '../io/lock.js';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { InputError } from '../core/errors.js';
import { type ClipBlock, type ExpectedClip, parseBlocks } from './output.js';
import { writeFileAtomic as writeAtomic } from '../io/atomic.js';
import { keyDiff, readRunRecord, type RunRecord, sidecar, writeManifest } from './run.js';

export interface MergeOptions {
  inputs: string[];
  output: string;
  /** Write the merge even when clips are missing (they are listed in the errors file). */
  allowMissing?: boolean;
}

export interface MergeSummary {
  clips: number;
  missing: { clip_id: string; reason: string }[];
}

const sides = (p: string) => [p, sidecar.errors(p), sidecar.run(p), sidecar.manifest(p)];

/**
 * Merges (see the module comment). SIGINT/SIGTERM (io/interrupt.ts) at any moment leaves no merged
 * file, no side file this merge created and no lock; a write that fails names the output's path.
 */
export async function mergeShards(o: MergeOptions): Promise<MergeSummary> {
  if (o.inputs.length === 0) throw new InputError('merge: no shard outputs given');
  const out = resolve(o.output);
  guardOutputs(
    [...sides(out).map((p) => ({ path: p, flag: '-o' })), { path: sidecar.trajectories(out), flag: '-o (trajectories)', kind: 'dir' as const }],
    o.inputs.flatMap((p) => [...sides(p), sidecar.trajectories(p)]),
  );
  const lock = lockOutput(out, 'egogeo merge');
  // What this merge has created so far: removed again (then the lock) when it is interrupted.
  const created: string[] = [];
  const offInterrupt = onInterrupt(() => {
    for (const p of created) rmSync(p, { recursive: true, force: true });
    lock.release();
  });
  try {
    return await mergeLocked(o, out, created);
  } finally {
    offInterrupt();
    lock.release();
  }
}

async function mergeLocked(o: MergeOptions, out: string, created: string[]): Promise<MergeSummary> {
  const shards: { path: string; rec: RunRecord }[] = [];
  for (const p of o.inputs) {
    const path = resolve(p);
    if (path === out) throw new InputError(`merge: -o ${o.output} is also an input`);
    if (!existsSync(path)) throw new InputError(`${p}: no such file`);
    const rec = readRunRecord(path);
    if (!rec) throw new InputError(`${p}: no ${sidecar.run(p).split('/').pop()} beside it (not written by egogeo run)`);
    if (rec.status !== 'complete') {
      // A record that says running is true only while its run holds the output's lock.
      const holder = rec.status === 'running' ? lockHolder(p) : null;
      const state = rec.status === 'interrupted' ? 'was interrupted' : holder ? `is still running (pid ${holder.pid}${holder.host && holder.host !== hostname() ? ` on ${holder.host}` : ''})` : 'stopped before finishing (killed or crashed)';
      throw new InputError(`${p}: shard ${rec.shard.index}/${rec.shard.count} ${state}; ${holder ? 'wait for it, then merge' : 'rerun its egogeo run command to finish it'}`);
    }
    shards.push({ path, rec });
  }
  const first = shards[0].rec;
  const n = first.shard.count;
  const byIndex = new Map<number, string>();
  for (const { path, rec } of shards) {
    const differs = keyDiff(rec.key, first.key) ?? (rec.clips_total !== first.clips_total || rec.shard.count !== n ? `shard count or clips: ${first.shard.count} shards of ${first.clips_total} then, ${rec.shard.count} of ${rec.clips_total} now` : null);
    if (differs) throw new InputError(`${path}: comes from a run with other options than ${shards[0].path} (${differs.replace(' then, ', ` in ${shards[0].path}, `).replace(/ now$/, ' here')})`);
    const dup = byIndex.get(rec.shard.index);
    if (dup) throw new InputError(`${path}: shard ${rec.shard.index}/${n} is also ${dup}`);
    byIndex.set(rec.shard.index, path);
  }
  const absent = Array.from({ length: n }, (_, i) => i).filter((i) => !byIndex.has(i));
  if (absent.length > 0) throw new InputError(`merge: shard${absent.length > 1 ? 's' : ''} ${absent.map((i) => `${i}/${n}`).join(', ')} missing`);

  const expected = new Map<string, ExpectedClip & { source: string }>();
  const allClips: RunRecord['clips'] = [];
  for (const { path, rec } of shards) {
    for (const c of rec.clips) {
      const [index, id, source, count] = c;
      if (index % n !== rec.shard.index) throw new InputError(`${path}: clip '${id}' (index ${index}) does not belong to shard ${rec.shard.index}/${n}`);
      if (expected.has(id)) throw new InputError(`${path}: clip '${id}' is in two shards`);
      expected.set(id, { index, count, source });
      allClips.push(c);
    }
  }
  if (expected.size !== first.clips_total) {
    throw new InputError(`merge: the shards list ${expected.size} clips, the run has ${first.clips_total}`);
  }

  const blocks: ClipBlock[] = [];
  const answeredIds = new Set<string>();
  const errors = new Map<string, string>();
  for (const { path } of shards) {
    const { blocks: b, dropped, repaired } = parseBlocks(readInputText(path, 'predictions file'), expected, path);
    if (repaired || dropped.length > 0) throw new InputError(`${path}: has incomplete clip records (${dropped.join(', ') || 'stray lines'}); rerun its egogeo run command`);
    for (const blk of b) {
      if (answeredIds.has(blk.id)) throw new InputError(`${path}: clip '${blk.id}' is answered by two shards`);
      answeredIds.add(blk.id);
    }
    blocks.push(...b);
    const ep = sidecar.errors(path);
    if (existsSync(ep)) {
      readInputText(ep, 'errors file').split('\n').forEach((line, i) => {
        if (!line.trim()) return;
        let e: { clip_id?: unknown; reason?: unknown };
        try {
          e = JSON.parse(line);
        } catch {
          throw new InputError(`${ep}:${i + 1}: not an errors line egogeo run wrote (invalid JSON)`);
        }
        if (typeof e?.clip_id === 'string') errors.set(e.clip_id, String(e.reason));
      });
    }
  }
  const missing = [...expected.entries()]
    .filter(([id, e]) => !answeredIds.has(id) && e.count > 0)
    .sort((a, b) => a[1].index - b[1].index)
    .map(([id]) => ({ clip_id: id, reason: errors.get(id) ?? 'no records and no error recorded' }));
  if (missing.length > 0 && !o.allowMissing) {
    const list = missing.slice(0, 5).map((m) => `${m.clip_id} (${m.reason})`).join(', ');
    throw new InputError(`merge: ${missing.length} clip${missing.length > 1 ? 's' : ''} missing: ${list}${missing.length > 5 ? ', …' : ''} (--allow-missing writes the merge anyway)`);
  }

  blocks.sort((a, b) => expected.get(a.id)!.index - expected.get(b.id)!.index);
  // The side files first and the predictions file last: a failed write (full disk) leaves no
  // complete-looking merge; what this merge created is removed again.
  const trajDir = sidecar.trajectories(out);
  created.push(...[...sides(out), trajDir].filter((p) => !existsSync(p)));
  try {
    await writeSides(o, out, shards, blocks, missing, expected, allClips, first);
    writeAtomic(out, blocks.map((b) => b.text).join(''));
  } catch (e) {
    for (const p of created) rmSync(p, { recursive: true, force: true });
    throw e;
  }
  created.length = 0; // complete: an interrupt from here on leaves the merge as it is
  return { clips: blocks.length, missing };
}

/** Copies a shard's file into the merge; a failure (full disk) is one line naming the merge's file, not the shard's. */
function copyOut(src: string, dest: string): void {
  try {
    const fault = faultFor(dest);
    // Played as Node reports a failed copy: the error's path is the source.
    if (fault) throw Object.assign(fault, { path: src, dest, syscall: 'copyfile' });
    copyFileSync(src, dest);
  } catch (e) {
    throw new InputError(`${dest}: cannot write (${errnoText(e)})`);
  }
}

async function writeSides(
  o: MergeOptions,
  out: string,
  shards: { path: string; rec: RunRecord }[],
  blocks: ClipBlock[],
  missing: { clip_id: string; reason: string }[],
  expected: Map<string, ExpectedClip & { source: string }>,
  allClips: RunRecord['clips'],
  first: RunRecord,
): Promise<void> {
  writeAtomic(
    sidecar.errors(out),
    missing.map((m) => `${JSON.stringify({ clip_id: m.clip_id, source: expected.get(m.clip_id)!.source, reason: m.reason })}\n`).join(''),
  );
  const trajDir = sidecar.trajectories(out);
  mkdirSync(trajDir, { recursive: true });
  let copied = 0;
  for (const { path } of shards) {
    const d = sidecar.trajectories(path);
    if (!existsSync(d)) continue;
    for (const f of readdirSync(d)) {
      if (!f.endsWith('.tum') && !f.endsWith('.signals.json')) continue;
      copyOut(join(d, f), join(trajDir, f));
      // Let a signal in now and then: an interrupt then finds a consistent list of what to remove.
      if (++copied % 32 === 0) await new Promise((r) => setImmediate(r));
    }
  }
  allClips.sort((a, b) => a[0] - b[0]);
  const record: RunRecord = {
    ...first,
    shard: { index: 0, count: 1 },
    clips: allClips,
    cameras: Object.assign({}, ...shards.map((s) => s.rec.cameras ?? {})),
    status: 'complete',
    started: shards.map((s) => s.rec.started).sort()[0],
    finished: new Date().toISOString(),
    counts: { done: blocks.length, failed: missing.length, resumed: 0 },
    seconds: shards.reduce((s, x) => s + (x.rec.seconds ?? 0), 0),
  };
  writeManifest(out, blocks, record);
  writeAtomic(sidecar.run(out), `${JSON.stringify({ ...record, merged_from: shards.map((s) => s.path) }, null, 1)}\n`);
}
