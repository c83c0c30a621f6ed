// bin/egogeo.js runs the CLI from dist/bundle/ (scripts/bundle.mjs) when it is fresh: the same
// commands, byte for byte, as the unbundled dist/cli/ (EGOGEO_NO_BUNDLE=1), the pool workers
// bundled too, and the bundle really is what loads.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cli, ensureDist, NATIVE_BUILT, ROOT, syntheticDataset } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bundle-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A preload that appends every egogeo module a process (and its worker threads) loads to `log`. */
function loadLog(log: string): string {
  const hook = join(tmp, 'hook.mjs');
  writeFileSync(hook, `import { appendFileSync } from 'node:fs';\nexport async function load(url, ctx, next) {\n  if (url.startsWith(${JSON.stringify(pathToFileURL(ROOT).href)}) && !url.includes('/node_modules/')) appendFileSync(${JSON.stringify(log)}, url + '\\n');\n  return next(url, ctx);\n}\n`);
  const preload = join(tmp, 'preload.mjs');
  writeFileSync(preload, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hook).href)});\n`);
  return preload;
}

describe('the bundled CLI', () => {
  beforeAll(() => ensureDist());

  it('answers --help and --version as the unbundled modules do, and loads only bundle files', () => {
    const log = join(tmp, 'help.log');
    const a = cli(['--help'], { env: { NODE_OPTIONS: `--import=${loadLog(log)}` } });
    const b = cli(['--help'], { env: { EGOGEO_NO_BUNDLE: '1' } });
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(cli(['--version']).stdout).toBe(cli(['--version'], { env: { EGOGEO_NO_BUNDLE: '1' } }).stdout);
    const loaded = readFileSync(log, 'utf8').trim().split('\n');
    expect(loaded.some((u) => u.includes('/dist/bundle/main.js'))).toBe(true);
    expect(loaded.filter((u) => u.includes('/dist/') && !u.includes('/dist/bundle/'))).toEqual([]);
  });

  it.skipIf(!NATIVE_BUILT)('writes the same predictions as the unbundled modules, in-process and on worker threads', () => {
    const ds = syntheticDataset(join(tmp, 'synth'), [
      { id: 'left', speed: 8, yawRate: 0.3, seed: 2 },
      { id: 'straight', speed: 6, yawRate: 0, seed: 3 },
    ]);
    const run = (name: string, workers: string, env: Record<string, string> = {}, nodeFlags: string[] = []) => {
      mkdirSync(join(tmp, name), { recursive: true });
      const out = join(tmp, name, 'preds.jsonl');
      const r = spawnSync(process.execPath, [...nodeFlags, BIN, 'run', '--dataset', ds, '-o', out, '--workers', workers, '--no-progress'], { encoding: 'utf8', env: { ...process.env, ...env } });
      expect(r.status, r.stderr).toBe(0);
      return readFileSync(out, 'utf8');
    };
    // Every thread's CPU profile names the scripts it ran: the worker threads' too.
    const profiles = join(tmp, 'profiles');
    const bundled = run('b2', '2', {}, ['--cpu-prof', `--cpu-prof-dir=${profiles}`]);
    expect(bundled.split('\n').filter(Boolean).length).toBeGreaterThan(0);
    expect(run('u2', '2', { EGOGEO_NO_BUNDLE: '1' })).toBe(bundled);
    expect(run('b1', '1')).toBe(bundled);
    const files = readdirSync(profiles);
    expect(files.length).toBeGreaterThanOrEqual(2); // the main thread and at least one worker
    const urls = new Set(files.flatMap((f) => (JSON.parse(readFileSync(join(profiles, f), 'utf8')) as { nodes: { callFrame: { url: string } }[] }).nodes.map((n) => n.callFrame.url)));
    expect([...urls].some((u) => u.endsWith('/dist/bundle/run-worker.js'))).toBe(true);
    expect([...urls].filter((u) => u.includes('/dist/') && !u.includes('/dist/bundle/') && !u.includes('/node_modules/'))).toEqual([]);
  });
});
