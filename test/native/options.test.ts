/**
 * The engine's options are written once, in the addon's reader (native/vo/binding.cc
 * parse_options): its exported table must name exactly the keys and kinds of the TS VoOptions
 * (VO_OPTION_KINDS, which the compiler holds equal to the interface), and any other key is refused
 * at the boundary with one line naming it — a typo never falls back to a default silently.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEVICES, optionTable, PHOTOMETRIC, processClip, processClipAsync, VO_OPTION_KINDS, type VoOptions } from '../../src/native/index.js';
import { drivingClip } from '../helpers/render.js';
import { thrown } from '../helpers/throws.js';

const ADDON = process.env.EGOGEO_NATIVE ?? fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));
const BUILT = existsSync(ADDON);

describe.skipIf(!BUILT)('engine options: one table', () => {
  const clip = drivingClip({ frames: 3, speed: 8, yawRate: 0, seed: 2 });
  const input = { frames: clip.frames, timestamps: clip.timestamps };

  it('the addon reads exactly the VoOptions keys, with the same kinds', () => {
    const table = optionTable();
    expect(table.map((o) => o.name).sort()).toEqual(Object.keys(VO_OPTION_KINDS).sort());
    for (const o of table) expect(o.kind, o.name).toBe(VO_OPTION_KINDS[o.name as keyof typeof VO_OPTION_KINDS]);
    expect(new Set(table.map((o) => o.name)).size).toBe(table.length); // each read once
  });

  it("the TS lists of choices are the addon's: photometric modes, devices (auto aside: the caller resolves it)", () => {
    const choices = (name: string) => [...(optionTable().find((o) => o.name === name)?.choices ?? [])].sort();
    expect(choices('photometric')).toEqual([...PHOTOMETRIC].sort());
    expect(choices('device')).toEqual(DEVICES.filter((d) => d !== 'auto').sort());
  });

  it("the defaults VoOptions' doc comments state are the addon's (kltIterations was documented as 30 and is 10)", () => {
    const src = readFileSync(new URL('../../src/native/index.ts', import.meta.url), 'utf8');
    const body = src.slice(src.indexOf('export interface VoOptions'), src.indexOf('\n}\n', src.indexOf('export interface VoOptions')));
    const table = new Map(optionTable().map((o) => [o.name, o.default]));
    const stated: [string, string][] = [];
    for (const m of body.matchAll(/\/\*\*([\s\S]*?)\*\/\s*(\w+)\?:/g)) {
      const doc = m[1].replace(/\s*\*\s*/g, ' ');
      // "default 10", "default: 0.2", "default true", "default 'none'" (not "default 8 px"-style prose with units).
      const d = /\bdefault:? (-?[0-9][0-9.]*)(?![0-9.]*\s*[a-zA-Z%°×])/i.exec(doc) ?? /\bdefault:? (true|false|'\w+')/i.exec(doc);
      if (d) stated.push([m[2], d[1].replace(/\.$/, '').replace(/'/g, '')]);
    }
    expect(stated.length).toBeGreaterThan(10);
    for (const [name, v] of stated) expect(v, name).toBe(String(table.get(name)));
  });

  it('every option has its default, range or choices in the table, and the defaults are what the engine uses', () => {
    for (const o of optionTable()) {
      if (o.kind === 'choice') expect(o.choices, o.name).toContain(o.default);
      else if (o.kind === 'number' || o.kind === 'integer') {
        expect(o.default, o.name).toBeTypeOf('number');
        expect(o.default as number, o.name).toBeGreaterThanOrEqual(o.min ?? -Infinity);
        expect(o.default as number, o.name).toBeLessThanOrEqual(o.max ?? Infinity);
      } else if (o.kind === 'boolean') expect(o.default, o.name).toBeTypeOf('boolean');
      else expect(o.default, o.name).toBeUndefined();
    }
    // Passing every default explicitly gives the result of passing none.
    const defaults = Object.fromEntries(optionTable().filter((o) => o.default !== undefined).map((o) => [o.name, o.default])) as VoOptions;
    const a = processClip(input, {}), b = processClip(input, defaults);
    expect(Array.from(b.positions)).toEqual(Array.from(a.positions));
    expect(Array.from(b.rotations)).toEqual(Array.from(a.rotations));
  });

  it('an unknown key is one TypeError naming it, sync and async', async () => {
    const e = thrown(() => processClip(input, { cameraheight: 1.5 } as unknown as VoOptions));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.message).toBe('processClip: unknown option options.cameraheight (see optionTable() for the 45 options)');
    await expect(processClipAsync(input, { frames: 10 } as unknown as VoOptions)).rejects.toThrow(/^processClip: unknown option options\.frames /);
    // Known keys with undefined values are fine (callers spread optional settings).
    expect(processClip(input, { cameraHeight: undefined, scale: 'none' }).pairs).toHaveLength(2);
  });
});
