/**
 * `egogeo bench` in-process: one-line errors for bad flags, the figures' arithmetic, and a small
 * real run (2 rendered clips, 10 frames, 1 worker) whose JSON, table and plots are checked for
 * structure and consistency — never for how fast anything was.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { ratios, scaling } from '../../src/throughput/bench.js';
import { figures, type RunFigures, stageMeans } from '../../src/throughput/measure.js';

const READY = existsSync(fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url)));
const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bench-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const timing = (total: number) => ({ decode: 1, detect: 2, track: 3, pose: 4, scale: 5, total });

describe('figures', () => {
  it('rates, core-seconds and per-size stage means from the clips answered', () => {
    const outputs = [
      { framesUsed: 10, ms: { load: 1, vo: 100, total: 110 }, engineRuns: [{ downsample: 1, timing: timing(60) }, { downsample: 2, timing: timing(20) }] },
      { framesUsed: 10, ms: { load: 3, vo: 60, total: 70 }, engineRuns: [{ downsample: 1, timing: timing(40) }] },
    ];
    const r = figures(outputs, [{ clip_id: 'bad', reason: 'missing frame' }], { method: 'egogeo', device: 'cpu', workers: 1, wallSeconds: 4, cpuSeconds: 3 });
    expect(r).toMatchObject({ clips: 2, frames: 20, framesPerClip: 10, clipsPerSecond: 0.5, framesPerSecond: 5, coreSecondsPerClip: 1.5, coresBusy: 0.75, taskMs: { load: 2, vo: 80, total: 90 } });
    expect(r.failed).toHaveLength(1);
    // Means over every answered clip: half size ran on one of the two.
    expect(r.stages).toEqual([
      { size: 'full', clips: 2, ms: { decode: 1, detect: 2, track: 3, pose: 4, scale: 5, total: 50 } },
      { size: 'half', clips: 1, ms: { decode: 0.5, detect: 1, track: 1.5, pose: 2, scale: 2.5, total: 10 } },
    ]);
    expect(figures(outputs, [], { method: 'vo-proxy', device: null, workers: 1, wallSeconds: 1, cpuSeconds: 1 }).stages).toEqual([]);
    expect(stageMeans([])).toEqual([]);
  });

  it('ratios pair egogeo with the proxy at the same worker count; scaling is against the fewest workers', () => {
    const run = (method: 'egogeo' | 'vo-proxy', workers: number, clipsPerSecond: number, coreSecondsPerClip: number) =>
      ({ method, device: method === 'egogeo' ? 'cpu' : null, workers, clips: 10, clipsPerSecond, coreSecondsPerClip }) as RunFigures;
    const runs = [run('egogeo', 1, 2, 0.5), run('vo-proxy', 1, 1, 1), run('vo-proxy', 2, 1.5, 1.2), run('egogeo', 2, 3, 0.6)];
    expect(ratios(runs)).toEqual([
      { device: 'cpu', workers: 1, speedup: 2, coreSecondsSpeedup: 2 },
      { device: 'cpu', workers: 2, speedup: 2, coreSecondsSpeedup: 2 },
    ]);
    const s = scaling(runs);
    expect(s.map((x) => [x.method, x.points.map((p) => [p.workers, p.speedup, p.ideal])])).toEqual([
      ['egogeo', [[1, 1, 2], [2, 1.5, 4]]],
      ['vo-proxy', [[1, 1, 1], [2, 1.5, 2]]],
    ]);
  });
});

describe('egogeo bench option errors', () => {
  it.each([
    [[], /give one of --dataset DIR or --synth N/],
    [['--synth', '2', '--dataset', tmp], /give one of --dataset DIR or --synth N/],
    [['--synth', '0'], /--synth must be an integer in \[1, 10000\], got '0'/],
    [['--synth', '2', '--frames', '1'], /--frames must be 'all' or an integer >= 2, got '1'/],
    [['--synth', '2', '--workers', '1,,2'], /--workers must be a comma-separated list of worker counts/],
    [['--synth', '2', '--workers', '0'], /--workers must be an integer in \[1, \d+\]/],
    [['--synth', '2', '--device', 'tpu'], /--device must be a comma-separated list of cpu, gpu, got 'tpu'/],
    [['--synth', '2', '--plot', join(tmp, 'curve.pdf')], /--plot must name an \.svg or \.png file/],
    [['--synth', '2', '--limit', 'x'], /--limit must be an integer/],
    [['--dataset', join(tmp, 'nowhere')], /nowhere: no such dataset directory/],
    [['--synth', '2', '--bogus'], /unknown option '--bogus'/],
  ])('%j → exit 1 with one line', async (args, msg) => {
    const r = await cli('bench', ...(args as string[]));
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(msg);
  });

  it.skipIf(!READY || existsSync('/dev/nvidiactl') || existsSync('/dev/dxg'))('--device gpu without a GPU: one line naming it, exit 1', async () => {
    const r = await cli('bench', '--synth', '2', '--device', 'gpu');
    expect(r.code).toBe(1);
    expect(r.err.trim().split('\n')).toEqual([expect.stringMatching(/--device gpu: .*; no other device to measure on$/)]);
  });

  it('--help documents every flag', async () => {
    const r = await cli('bench', '--help');
    for (const flag of ['--dataset', '--synth', '--frames', '--workers', '--device', '--json', '--plot', '--limit', '--no-progress']) expect(r.out).toContain(flag);
  });
});

describe.skipIf(!READY)('egogeo bench on 2 rendered clips', () => {
  const json = join(tmp, 'bench.json');
  const svg = join(tmp, 'curve.svg');
  let run: Awaited<ReturnType<typeof cli>>;
  // The command's own temporary folders (the rendered clips), not this test's.
  const renders = () => readdirSync(tmpdir()).filter((f) => f.startsWith('egogeo-bench-') && !f.startsWith('egogeo-bench-cli-'));
  let before: string[];
  beforeAll(async () => {
    const { ensureDist } = await import('../run/fixtures.js');
    ensureDist(); // the pool's worker module is the compiled one
    before = renders();
    run = await cli('bench', '--synth', '2', '--frames', '10', '--workers', '1', '--json', json, '--plot', svg, '--no-progress');
  });

  it('exits 0 and prints the table, the ratio and the stages', () => {
    expect(run.err).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^egogeo bench: 2 synthetic clips, 10 frames per clip/);
    expect(run.out).toMatch(/^egogeo \(cpu\)\s+1\s+2\s+10\.0\s/m);
    expect(run.out).toMatch(/^vo-proxy\s+1\s+2\s+10\.0\s/m);
    expect(run.out).toMatch(/egogeo \(cpu\), 1 worker: \d+\.\d\dx by wall time, \d+\.\d\dx by core-seconds/);
    expect(run.out).toMatch(/^cpu\s+1\s+full\s+2\s/m);
  });

  it('writes JSON naming what measured it, with consistent positive figures', () => {
    const j = JSON.parse(readFileSync(json, 'utf8'));
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(j.egogeo).toBe(pkg.version);
    expect(j.engine).toEqual({ egogeo: pkg.version, addon: expect.stringMatching(/^[0-9a-f]{16}$/), device: 'cpu' });
    expect(j.gitCommit === null || /^[0-9a-f]{40}(-dirty)?$/.test(j.gitCommit)).toBe(true);
    expect(j.machine.cpus).toBeGreaterThan(0);
    expect(j.node).toBe(process.version);
    expect(j.config).toMatchObject({ input: { synth: 2 }, clips: 2, frames: 10, workers: [1], devices: ['cpu'], skippedDevices: [] });
    expect(j.config.egogeo).toMatchObject({ method: 'egogeo', resolution: 'auto', frames: 10 });
    expect(j.config.proxy).toMatchObject({ method: 'vo-proxy', frames: 10 });
    expect(j.runs.map((r: RunFigures) => [r.method, r.device, r.workers])).toEqual([['egogeo', 'cpu', 1], ['vo-proxy', null, 1]]);
    const close = (a: number, b: number) => expect(Math.abs(a - b)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(b)));
    for (const r of j.runs as RunFigures[]) {
      expect(r).toMatchObject({ clips: 2, failed: [], frames: 20, framesPerClip: 10 });
      for (const v of [r.wallSeconds, r.clipsPerSecond, r.framesPerSecond, r.cpuSeconds, r.coreSecondsPerClip, r.coresBusy, r.taskMs.total]) expect(v).toBeGreaterThan(0);
      close(r.clipsPerSecond * r.wallSeconds, r.clips);
      close(r.framesPerSecond, r.clipsPerSecond * r.framesPerClip);
      close(r.coreSecondsPerClip * r.clips, r.cpuSeconds);
      close(r.coresBusy, r.cpuSeconds / r.wallSeconds);
    }
    // 10 frames of 3-s clips are far apart: resolution auto tracks every clip at full size, and at
    // half size those whose full-size verdict is not ok.
    const e = j.runs[0] as RunFigures;
    expect(e.stages[0]).toMatchObject({ size: 'full', clips: 2 });
    expect(e.stages.slice(1).map((s) => s.size)).toEqual(e.stages.length > 1 ? ['half'] : []);
    expect(e.stages.slice(1).every((s) => s.clips <= 2)).toBe(true);
    for (const s of e.stages) for (const v of Object.values(s.ms)) expect(v).toBeGreaterThanOrEqual(0);
    for (const s of e.stages) expect(s.ms.total).toBeGreaterThan(0);
    expect(j.runs[1].stages).toEqual([]);
    expect(j.ratios).toHaveLength(1);
    expect(j.ratios[0]).toMatchObject({ device: 'cpu', workers: 1 });
    close(j.ratios[0].speedup, j.runs[0].clipsPerSecond / j.runs[1].clipsPerSecond);
    close(j.ratios[0].coreSecondsSpeedup, j.runs[1].coreSecondsPerClip / j.runs[0].coreSecondsPerClip);
    expect(j.scaling.map((s: { method: string; points: unknown[] }) => [s.method, s.points.length])).toEqual([['egogeo', 1], ['vo-proxy', 1]]);
  });

  it('draws the scaling curve as SVG and removes the rendered clips', () => {
    const text = readFileSync(svg, 'utf8');
    expect(text).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="\d+" height="\d+"/);
    expect(text.trim().endsWith('</svg>')).toBe(true);
    expect((text.match(/<circle /g) ?? []).length).toBe(2); // one point per method at 1 worker
    expect(text).toContain('egogeo (cpu)');
    expect(text).toContain('vo-proxy');
    expect(run.err).toMatch(/rendering 2 synthetic clips/);
    expect(renders().filter((f) => !before.includes(f))).toEqual([]);
  });

  it('--plot FILE.png writes a PNG', async () => {
    const png = join(tmp, 'curve.png');
    const r = await cli('bench', '--synth', '1', '--workers', '1', '--plot', png, '--no-progress');
    expect(r.code).toBe(0);
    const bytes = readFileSync(png);
    expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(bytes.readUInt32BE(16)).toBeGreaterThan(100); // IHDR width
  });
});
