/**
 * One option table (cli/options.ts ENGINE_OPTIONS, issue 52): `run`, `baseline` and `demo` take
 * the engine's flags from it, each defaulting to the library's value (vo/config.ts
 * ENGINE_DEFAULTS), and a run with no engine flag records those values in its run key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { ENGINE_OPTIONS, engineFromFlags, flagValue } from '../../src/cli/options.js';
import { keyEngine, readRunRecord } from '../../src/run/record.js';
import { ENGINE_DEFAULTS, engineConfig } from '../../src/vo/config.js';
import { cli } from '../helpers/cli.js';
import { syntheticDataset } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-engine-options-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const FIELDS = Object.keys(ENGINE_OPTIONS) as (keyof typeof ENGINE_OPTIONS)[];

async function command(name: string): Promise<Command> {
  const c = (await buildProgram(name)).commands.find((x) => x.name() === name);
  if (!c) throw new Error(`no command ${name}`);
  return c;
}

/** A command's engine-flag defaults, by field. */
function defaults(c: Command): Record<string, unknown> {
  return Object.fromEntries(c.options.filter((o) => (FIELDS as string[]).includes(o.attributeName())).map((o) => [o.attributeName(), o.defaultValue]));
}

describe('the engine flags come from one table', () => {
  for (const name of ['run', 'baseline', 'demo']) {
    it(`${name}: every engine flag, defaulting to the library's value`, async () => {
      const d = defaults(await command(name));
      expect(Object.keys(d).sort()).toEqual([...FIELDS].sort());
      for (const f of FIELDS) expect(d[f], `${name} --${f}`).toBe(flagValue(f, ENGINE_DEFAULTS[f]));
      // The defaults read back through the edge's parser are the library's configuration.
      expect(engineFromFlags(d as Record<string, string>, 'cpu')).toEqual(engineConfig({ device: 'cpu' }));
    });
  }

  it('frames null is spelled all, and a flag outside its list is one line naming it', () => {
    expect(flagValue('frames', null)).toBe('all');
    expect(() => engineFromFlags({ photometric: 'bogus' })).toThrow(/^--photometric must be one of none, /);
  });

  it('a run given no engine flag records the library defaults in its run key', async () => {
    const ds = syntheticDataset(join(tmp, 'ds'), [{ id: 'straight', speed: 8, yawRate: 0, frames: 16 }]);
    const out = join(tmp, 'preds.jsonl');
    const r = await cli('run', '--dataset', ds, '-o', out, '--device', 'cpu', '--workers', '1', '--no-progress');
    expect(r.code, r.err).toBe(0);
    const key = readRunRecord(out)!.key;
    // The key as a resume or merge reads it (an absent resolution is 'auto', the default).
    expect(keyEngine(key)).toEqual(engineConfig({ device: 'cpu' }));
    expect(key.photometric).toBe(ENGINE_DEFAULTS.photometric);
  });
});
