/**
 * The GPU path of `egogeo run` without a GPU: EGOGEO_GPU_REFERENCE=1 makes libegogeo_gpu run its
 * host reference behind the same interface (native/gpu/egogeo_gpu.h), so everything the engine does
 * with the library runs here. Checked: the run record and the manifest name the device and the GPU
 * library (the hash of the file loaded); a resume or a merge across devices or GPU libraries refuses
 * with one line naming both; the library's device self-test (EGOGEO_GPU_SELFTEST_INJECT=1 makes it
 * fail) stops `--device gpu` with its line, makes `--device auto` fall back to the CPU with that
 * line printed once, and shows in `egogeo doctor`.
 * Skips where the GPU library was not built (no nvcc): then there is no library to test.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideDevice } from '../../src/native/device.js';
import { gpuInfo } from '../../src/native/index.js';
import { cli, ensureDist, NATIVE_BUILT, ROOT, syntheticDataset } from '../run/fixtures.js';

const LIB = join(ROOT, 'build/Release/libegogeo_gpu.so');
const HAS_LIB = NATIVE_BUILT && existsSync(LIB);
if (NATIVE_BUILT && !HAS_LIB) console.warn('[egogeo tests] build/Release/libegogeo_gpu.so is not built (no nvcc): the GPU reference-path tests skip.');

const REF = { EGOGEO_GPU_REFERENCE: '1', EGOGEO_GPU_SELFTEST_INJECT: undefined, EGOGEO_GPU_LIB: undefined };
const INJECT = { ...REF, EGOGEO_GPU_SELFTEST_INJECT: '1' };
const CPU = { EGOGEO_GPU_REFERENCE: undefined, EGOGEO_GPU_SELFTEST_INJECT: undefined, EGOGEO_GPU_LIB: undefined };
const id16 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16);
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8'));

/** Runs `fn` with these environment variables set (undefined: removed) in this process. */
function withEnv<T>(env: Record<string, string | undefined>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const put = (e: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(e)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  put(env);
  try {
    return fn();
  } finally {
    put(saved);
  }
}

describe.skipIf(!HAS_LIB)('gpuInfo with the host reference (EGOGEO_GPU_REFERENCE=1)', () => {
  it('one device, the file loaded, and the device self-test: ok, or the injected failure as one line', () => {
    const g = withEnv(REF, () => gpuInfo());
    expect(g).toMatchObject({ loaded: true, devices: 1, selftest: 'ok', reason: '' });
    expect(g.device).toMatch(/^host reference \(/);
    expect(g.file).toBe(realpathSync(LIB));
    const bad = withEnv(INJECT, () => gpuInfo());
    expect(bad.devices).toBe(1);
    expect(bad.selftest).toMatch(/^device self-test failed \(.*\): FAST score at \(\d+, \d+\)/);
    expect(bad.selftest.split('\n')).toHaveLength(1);
    // Without the variable this machine's answer is the CPU's (no CUDA device: no self-test).
    if (withEnv(CPU, () => gpuInfo()).devices === 0) expect(withEnv(CPU, () => gpuInfo()).selftest).toBe('');
  });

  it('decideDevice: gpu refuses with the self-test line, auto falls back with it; the passing reference is used', () => {
    withEnv(INJECT, () => {
      const line = gpuInfo().selftest;
      expect(() => decideDevice('gpu')).toThrow(`--device gpu: ${gpuInfo().device}: ${line}`);
      expect(decideDevice('auto')).toEqual({ device: 'cpu', note: `--device auto: running on the CPU: ${gpuInfo().device}: ${line}`, check: null });
    });
    withEnv(REF, () => {
      const d = decideDevice('gpu');
      expect(d).toMatchObject({ device: 'gpu', note: null, check: { ok: true } });
      expect(decideDevice('auto').device).toBe('gpu');
    });
  });
});

describe.skipIf(!HAS_LIB)('egogeo run --device gpu on the host reference', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'egogeo-gpuref-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  let ds = '';
  beforeAll(() => {
    ensureDist();
    ds = syntheticDataset(join(tmp, 'synth'), [
      { id: 'left', speed: 8, yawRate: 0.3, seed: 3, frames: 8 },
      { id: 'straight', speed: 10, yawRate: 0, seed: 4, frames: 8 },
    ]);
  });
  const out = (name: string) => join(tmp, name, 'preds.jsonl');
  const run = (name: string, env: Record<string, string | undefined>, ...args: string[]) => {
    mkdirSync(join(tmp, name), { recursive: true });
    return cli(['run', '--dataset', ds, '-o', out(name), '--workers', '1', '--no-progress', ...args], { env });
  };
  /** A copy of a finished output, its record marked interrupted (so a rerun would resume it). */
  const interruptedCopy = (from: string, to: string) => {
    mkdirSync(join(tmp, to), { recursive: true });
    for (const f of ['', '.errors.jsonl', '.manifest.json']) writeFileSync(`${out(to)}${f}`, readFileSync(`${out(from)}${f}`));
    writeFileSync(`${out(to)}.run.json`, JSON.stringify({ ...json(`${out(from)}.run.json`), status: 'interrupted' }));
  };

  it('the record and manifest name the device and the GPU library; --device cpu says cpu and no library', () => {
    const g = run('gpu', REF, '--device', 'gpu');
    expect(g.code, g.stderr).toBe(0);
    const rec = json(`${out('gpu')}.run.json`);
    const device = withEnv(REF, () => gpuInfo().device);
    expect(rec.key.engine).toEqual({ egogeo: expect.any(String), addon: expect.stringMatching(/^[0-9a-f]{16}$/), device: 'gpu', gpu_device: device, gpu_library: id16(LIB) });
    expect(rec.device).toBe('gpu');
    expect(json(`${out('gpu')}.manifest.json`).settings).toMatchObject({ device: 'gpu', gpu_device: device, gpu_library: id16(LIB) });
    expect(readFileSync(out('gpu'), 'utf8').split('\n').filter(Boolean).length).toBeGreaterThan(0);

    const c = run('cpu', CPU, '--device', 'cpu');
    expect(c.code, c.stderr).toBe(0);
    const crec = json(`${out('cpu')}.run.json`);
    expect(crec.key.engine).toEqual({ egogeo: rec.key.engine.egogeo, addon: rec.key.engine.addon, device: 'cpu' });
    expect(json(`${out('cpu')}.manifest.json`).settings).not.toHaveProperty('gpu_library');

    // The same device and library resume (a finished run: nothing left to do).
    const again = run('gpu', REF, '--device', 'gpu');
    expect(again.code, again.stderr).toBe(0);
  });

  it('a resume across devices refuses with one line naming both, either way round', () => {
    const device = withEnv(REF, () => gpuInfo().device);
    const gpuLine = `gpu ${device} with libegogeo_gpu.so ${id16(LIB)}`;
    interruptedCopy('cpu', 'cpu-then-gpu');
    const r = run('cpu-then-gpu', REF, '--device', 'gpu');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`egogeo: ${out('cpu-then-gpu')} holds a run with other options (device: cpu then, ${gpuLine} now); rerun with the same options to resume, or use another -o\n`);
    interruptedCopy('gpu', 'gpu-then-cpu');
    const s = run('gpu-then-cpu', CPU, '--device', 'cpu');
    expect(s.code).toBe(1);
    expect(s.stderr).toBe(`egogeo: ${out('gpu-then-cpu')} holds a run with other options (device: ${gpuLine} then, cpu now); rerun with the same options to resume, or use another -o\n`);
    // Nothing was appended to either output.
    expect(readFileSync(out('cpu-then-gpu'))).toEqual(readFileSync(out('cpu')));
    // A record from before the device was recorded is a CPU run: the CPU resumes it.
    const rec = json(`${out('cpu-then-gpu')}.run.json`);
    const { device: _, ...engine } = rec.key.engine;
    writeFileSync(`${out('cpu-then-gpu')}.run.json`, JSON.stringify({ ...rec, key: { ...rec.key, engine } }));
    expect(run('cpu-then-gpu', CPU, '--device', 'cpu').code).toBe(0);
  });

  it('a resume with another GPU library file (another hash) refuses naming both hashes', () => {
    const other = join(tmp, 'other-lib', 'libegogeo_gpu.so');
    mkdirSync(join(tmp, 'other-lib'), { recursive: true });
    copyFileSync(LIB, other);
    appendFileSync(other, 'another build'); // trailing bytes: it still loads, its hash differs
    expect(id16(other)).not.toBe(id16(LIB));
    interruptedCopy('gpu', 'gpu-other-lib');
    const device = withEnv(REF, () => gpuInfo().device);
    const r = run('gpu-other-lib', { ...REF, EGOGEO_GPU_LIB: other }, '--device', 'gpu');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `egogeo: ${out('gpu-other-lib')} holds a run with other options (device: gpu ${device} with libegogeo_gpu.so ${id16(LIB)} then, gpu ${device} with libegogeo_gpu.so ${id16(other)} now); rerun with the same options to resume, or use another -o\n`,
    );
  });

  it('shards answered on different devices do not merge: one line naming both', () => {
    expect(run('s0', CPU, '--device', 'cpu', '--shard', '0/2').code).toBe(0);
    expect(run('s1', REF, '--device', 'gpu', '--shard', '1/2').code).toBe(0);
    const device = withEnv(REF, () => gpuInfo().device);
    const m = cli(['merge', out('s0'), out('s1'), '-o', join(tmp, 'merged.jsonl')]);
    expect(m.code).toBe(1);
    expect(m.stderr).toBe(`egogeo: ${out('s1')}: comes from a run with other options than ${out('s0')} (device: cpu in ${out('s0')}, gpu ${device} with libegogeo_gpu.so ${id16(LIB)} here)\n`);
    expect(existsSync(join(tmp, 'merged.jsonl'))).toBe(false);
    // The same shard on the same device as the other merges.
    expect(run('s1cpu', CPU, '--device', 'cpu', '--shard', '1/2').code).toBe(0);
    expect(cli(['merge', out('s0'), out('s1cpu'), '-o', join(tmp, 'merged.jsonl')]).code).toBe(0);
  });

  it('a failing device self-test: --device gpu stops with its line (exit 1, no output); auto falls back with it, printed once', () => {
    const line = withEnv(INJECT, () => `${gpuInfo().device}: ${gpuInfo().selftest}`);
    expect(line).toMatch(/: device self-test failed \(/);
    const g = run('inject-gpu', INJECT, '--device', 'gpu');
    expect(g.code).toBe(1);
    expect(g.stdout).toBe('');
    expect(g.stderr).toBe(`egogeo: --device gpu: ${line}\n`);
    expect(readdirSync(join(tmp, 'inject-gpu'))).toEqual([]);

    const a = run('inject-auto', INJECT, '--device', 'auto');
    expect(a.code, a.stderr).toBe(0);
    const note = `egogeo: --device auto: running on the CPU: ${line}\n`;
    expect(a.stderr.startsWith(note)).toBe(true);
    expect(a.stderr.split(note)).toHaveLength(2); // once
    expect(json(`${out('inject-auto')}.run.json`).key.engine.device).toBe('cpu');
    // ... and answers as the CPU does.
    expect(readFileSync(out('inject-auto'), 'utf8')).toBe(readFileSync(out('cpu'), 'utf8'));
  });

  it('egogeo doctor shows the device self-test: ok, or the library\'s line', () => {
    const ok = cli(['doctor'], { env: REF });
    expect(ok.stdout).toMatch(/^OK +cuda +.*device host reference \(.*\); device self-test ok; self-check passed/m);
    const bad = cli(['doctor'], { env: INJECT });
    const line = withEnv(INJECT, () => gpuInfo().selftest);
    expect(bad.stdout).toMatch(/^WARN +cuda +/m);
    expect(bad.stdout).toContain(`device self-test FAILED: ${line}: --device auto runs on the CPU, --device gpu refuses`);
  });
});
