/**
 * Every command that reads a dataset takes `--dataset DIR` (issue 52). oracle, calibrate and
 * sensitivity keep the positional FILE as its shorthand, audit shortcut keeps --clips: each form
 * gives the same output, on a benchmark folder written here and on the published root (../shared).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { needsShared, sharedPath } from '../helpers/shared.js';
import { syntheticDataset } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-dataset-flag-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Each command, its long form and its shorthand (the dataset folder spliced in for DS). */
const FORMS: [string, string[], string[]][] = [
  ['oracle', ['oracle', '--dataset', 'DS'], ['oracle', 'DS']],
  ['calibrate', ['calibrate', '--dataset', 'DS'], ['calibrate', 'DS']],
  ['sensitivity', ['sensitivity', '--dataset', 'DS', '--from', '0.9', '--to', '1.1', '--step', '0.1'], ['sensitivity', 'DS', '--from', '0.9', '--to', '1.1', '--step', '0.1']],
  ['audit shortcut', ['audit', 'shortcut', '--dataset', 'DS', '--by', 'source'], ['audit', 'shortcut', '--clips', 'DS', '--by', 'source']],
];
const at = (args: string[], ds: string) => args.map((a) => (a === 'DS' ? ds : a));

function sameEitherWay(ds: string) {
  for (const [name, long, short] of FORMS) {
    it(`${name}: --dataset DIR gives what the shorthand gives`, async () => {
      const a = await cli(...at(long, ds));
      expect(a.code, `${name}: ${a.err}`).toBe(0);
      expect(a.out.length).toBeGreaterThan(0);
      const b = await cli(...at(short, ds));
      expect(b.code, b.err).toBe(0);
      expect(a.out).toBe(b.out);
    });
  }
}

describe('--dataset on a benchmark folder written here', () => {
  let ds = '';
  beforeAll(() => {
    ds = syntheticDataset(join(tmp, 'bench'), [
      { id: 'straight', speed: 8, yawRate: 0, frames: 31 },
      { id: 'left', speed: 6, yawRate: 0.3, frames: 31 },
    ], { arrays: true });
  });
  describe('each form', () => sameEitherWay(join(tmp, 'bench')));

  it('validate, prompts, run and view take --dataset too (their help names it)', async () => {
    for (const c of ['validate', 'prompts', 'run', 'view']) expect((await cli(c, '--help')).out, c).toMatch(/--dataset <dir>/);
    const v = await cli('validate', '--dataset', ds);
    expect(v.err).not.toMatch(/unknown option/);
  });

  it('both forms at once, a file as --dataset, or no input: one line each, exit 1', async () => {
    const f = join(tmp, 'traj.jsonl');
    writeFileSync(f, '');
    const cases: [string[], RegExp][] = [
      [['oracle', ds, '--dataset', ds], /^egogeo: give the input once: FILE '.*' or --dataset '.*'\n$/],
      [['calibrate', '--dataset', f], /^egogeo: --dataset .*traj\.jsonl: not a folder/],
      [['sensitivity'], /^egogeo: missing input: a trajectory FILE or --dataset DIR\n$/],
      [['audit', 'shortcut', '--dataset', ds, '--clips', ds, '--by', 'source'], /^egogeo: --dataset and --clips name the clips twice: give one\n$/],
      [['audit', 'shortcut', '--by', 'source'], /^egogeo: missing the clips: --dataset DIR \(or --clips FILES\)\n$/],
    ];
    for (const [args, msg] of cases) {
      const r = await cli(...args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.err, args.join(' ')).toMatch(msg);
    }
  });
});

const PUBLISHED = 'data/published/egodyn-bench';
describe.skipIf(!needsShared('--dataset on the published root', `${PUBLISHED}/selected_clips.json`, `${PUBLISHED}/carla_clips`, `${PUBLISHED}/nuscenes_clips`))('--dataset on the published root (../shared)', () => {
  sameEitherWay(sharedPath(PUBLISHED));
});
