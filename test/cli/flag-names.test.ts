/**
 * One meaning per flag name across commands (issue 53): oracle's threshold multiplier is
 * --threshold-scale (run's --scale is the metric-scale mode), prompts' OpenAI model is
 * --openai-model (run's --model names the leaderboard entry), frames per clip are --frames
 * everywhere; the old names still work with one deprecation line. --limit and several CARLA
 * domains wherever a dataset is read. All on datasets written here.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ViewData } from '../../src/view/data.js';
import { cli } from '../helpers/cli.js';
import { publishedDataset } from '../helpers/published.js';
import { syntheticDataset } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-flag-names-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SPECS = [
  { id: 'straight', speed: 8, yawRate: 0, frames: 31 },
  { id: 'left', speed: 6, yawRate: 0.3, frames: 31 },
  { id: 'right', speed: 5, yawRate: -0.25, frames: 31 },
];
let ds3 = '', ds2 = '';
beforeAll(() => {
  ds3 = syntheticDataset(join(tmp, 'ds3'), SPECS, { arrays: true });
  ds2 = syntheticDataset(join(tmp, 'ds2'), SPECS.slice(0, 2), { arrays: true });
});

const DEPRECATED = /^egogeo: (--[a-z-]+) is deprecated here; use (--[a-z-]+)$/m;

describe('renamed flags: the old name works the same, with one deprecation line', () => {
  it('oracle --scale → --threshold-scale', async () => {
    const base = await cli('oracle', '--dataset', ds3);
    const now = await cli('oracle', '--dataset', ds3, '--threshold-scale', '10');
    expect(now.code, now.err).toBe(0);
    expect(now.err).toBe('');
    expect(now.out).not.toBe(base.out); // thresholds ×10 change labels
    const old = await cli('oracle', '--dataset', ds3, '--scale', '10');
    expect(old.code, old.err).toBe(0);
    expect(old.out).toBe(now.out);
    expect(old.err.match(DEPRECATED)?.slice(1)).toEqual(['--scale', '--threshold-scale']);
    expect(old.err.trim().split('\n')).toHaveLength(1);
    const both = await cli('oracle', '--dataset', ds3, '--scale', '10', '--threshold-scale', '10');
    expect(both.code).toBe(1);
    expect(both.err).toMatch(/--scale is the deprecated name of --threshold-scale: give --threshold-scale only/);
    // --help shows the new name only.
    expect((await cli('oracle', '--help')).out).toMatch(/--threshold-scale <alpha>/);
    expect((await cli('oracle', '--help')).out).not.toMatch(/--scale\b/);
  });

  it('prompts --model → --openai-model, --num-frames → --frames', async () => {
    const at = (n: string) => join(tmp, n);
    const now = await cli('prompts', '--dataset', ds3, '--embedding', 'summary', '--format', 'openai-batch', '--frame-urls', 'file', '--openai-model', 'm-test', '--frames', '2', '-o', at('p-now.jsonl'));
    expect(now.code, now.err).toBe(0);
    expect(now.err).not.toMatch(/deprecated/);
    const body = JSON.parse(readFileSync(at('p-now.jsonl'), 'utf8').split('\n')[0]).body;
    expect(body.model).toBe('m-test');
    const old = await cli('prompts', '--dataset', ds3, '--embedding', 'summary', '--format', 'openai-batch', '--frame-urls', 'file', '--model', 'm-test', '--num-frames', '2', '-o', at('p-old.jsonl'));
    expect(old.code, old.err).toBe(0);
    expect(readFileSync(at('p-old.jsonl'), 'utf8')).toBe(readFileSync(at('p-now.jsonl'), 'utf8'));
    const lines = old.err.split('\n').filter((l) => DEPRECATED.test(l));
    expect(lines.map((l) => l.match(DEPRECATED)!.slice(1))).toEqual([['--num-frames', '--frames'], ['--model', '--openai-model']]);
    // Defaults unchanged: 10 frames, gpt-4o-mini.
    const dflt = await cli('prompts', '--dataset', ds3, '--embedding', 'none', '--format', 'openai-batch', '--frame-urls', 'file', '-o', at('p-default.jsonl'));
    expect(dflt.code, dflt.err).toBe(0);
    const b = JSON.parse(readFileSync(at('p-default.jsonl'), 'utf8').split('\n')[0]).body;
    expect(b.model).toBe('gpt-4o-mini');
    expect(b.messages[0].content.filter((c: { type: string }) => c.type === 'image_url')).toHaveLength(10);
  });
});

describe('--limit wherever a dataset is read: the first n clips, as if the dataset held only them', () => {
  const same = (name: string, args: string[]) =>
    it(`${name}: --limit 2 on three clips gives what the first two alone give`, async () => {
      const put = (ds: string) => args.map((a) => (a === 'DS' ? ds : a));
      const a = await cli(...put(ds3), '--limit', '2');
      expect(a.code, a.err).toBe(0);
      const b = await cli(...put(ds2));
      expect(b.code, b.err).toBe(0);
      const all = await cli(...put(ds3));
      expect(a.out.replaceAll(ds3, 'DS')).toBe(b.out.replaceAll(ds2, 'DS'));
      expect(all.out.replaceAll(ds3, 'DS')).not.toBe(a.out.replaceAll(ds3, 'DS')); // the third clip counts without --limit
    });
  same('oracle', ['oracle', '--dataset', 'DS']);
  same('calibrate', ['calibrate', '--dataset', 'DS']);
  same('sensitivity', ['sensitivity', '--dataset', 'DS', '--from', '0.9', '--to', '1.1', '--step', '0.1']);
  same('audit shortcut', ['audit', 'shortcut', '--dataset', 'DS', '--by', 'source']);

  it('prompts: --limit 2 writes the first two clips\' requests', async () => {
    const run = async (ds: string, out: string, ...more: string[]) => {
      const r = await cli('prompts', '--dataset', ds, '--embedding', 'summary', '--frames', '0', '-o', join(tmp, out), ...more);
      expect(r.code, r.err).toBe(0);
      return readFileSync(join(tmp, out), 'utf8');
    };
    const a = await run(ds3, 'lim.jsonl', '--limit', '2');
    expect(a).toBe(await run(ds2, 'two.jsonl'));
    expect(new Set(a.trim().split('\n').map((l) => JSON.parse(l).clip_id))).toEqual(new Set(['straight', 'left']));
  });

  it('validate: --limit 2 checks the first two clips (a broken third clip is not reported) and says so', async () => {
    const broken = join(tmp, 'broken');
    cpSync(ds3, broken, { recursive: true });
    const frames = join(broken, 'frames', 'right');
    writeFileSync(join(frames, readdirSync(frames).sort()[3]), 'not an image');
    const all = await cli('validate', '--dataset', broken);
    expect(all.out).toMatch(/right/);
    const lim = await cli('validate', '--dataset', broken, '--limit', '2');
    expect(lim.out).not.toMatch(/right/);
    expect(lim.err).toMatch(/clip-by-clip checks on the first 2 of 3 clips \(--limit\)/);
  });

  it('view: the first n clips (the options the CLI builds)', () => {
    expect(new ViewData({ dataset: ds3, limit: 2 }).clips.map((c) => c.id)).toEqual(['straight', 'left']);
    expect(new ViewData({ dataset: ds3 }).clips).toHaveLength(3);
  });

  it('a bad --limit is one line naming it', async () => {
    for (const cmd of [['oracle', '--dataset', ds3], ['validate', '--dataset', ds3], ['audit', 'shortcut', '--dataset', ds3, '--by', 'source']]) {
      const r = await cli(...cmd, '--limit', '0');
      expect(r.code).toBe(1);
      expect(r.err).toBe("egogeo: --limit must be a positive integer, got '0'\n");
    }
  });
});

describe('several CARLA domains (published layout written here)', () => {
  it('prompts --carla-domain simulation,transferred: one output per domain, each what that domain alone writes', async () => {
    const pub = publishedDataset(join(tmp, 'pub'), [
      { id: 'Town01__Default__w0', source: 'carla', speed: 7, yawRate: -0.2, seed: 4, frames: 31 },
    ]);
    if (!pub.videos) return void process.stderr.write('skip: no mp4 writer here (the addon is not built): the CARLA domains have no videos\n');
    const base = ['prompts', '--dataset', pub.root, '--embedding', 'none', '--frames', '3', '--format', 'openai-batch'];
    const at = (n: string) => join(tmp, n);
    expect((await cli(...base, '--carla-domain', 'simulation', '-o', at('sim.jsonl'))).code).toBe(0);
    expect((await cli(...base, '--carla-domain', 'transferred', '-o', at('tr.jsonl'))).code).toBe(0);
    const both = await cli(...base, '--carla-domain', 'simulation,transferred', '-o', at('both.{domain}.jsonl'));
    expect(both.code, both.err).toBe(0);
    const text = (n: string) => readFileSync(at(n), 'utf8');
    expect(text('both.simulation.jsonl')).toBe(text('sim.jsonl'));
    expect(text('both.transferred.jsonl')).toBe(text('tr.jsonl'));
    expect(text('sim.jsonl')).not.toBe(text('tr.jsonl')); // the restyled videos' frames
    const noDomain = await cli(...base, '--carla-domain', 'simulation,transferred', '-o', at('x.jsonl'));
    expect(noDomain.err).toMatch(/-o: with two CARLA domains, name both outputs with \{domain\}/);
  });

  it('validate --carla-domain: only the named domains\' videos are checked', async () => {
    const pub = publishedDataset(join(tmp, 'pub-v'), [
      { id: 'Town01__Default__w0', source: 'carla', speed: 7, yawRate: -0.2, seed: 4, frames: 31 },
    ]);
    if (!pub.videos) return void process.stderr.write('skip: no mp4 writer here (the addon is not built)\n');
    writeFileSync(join(pub.root, 'carla_videos_transferred', 'Town01__Default__w0.mp4'), 'not a video');
    const all = await cli('validate', '--dataset', pub.root);
    expect(all.out).toMatch(/carla_videos_transferred/);
    const sim = await cli('validate', '--dataset', pub.root, '--carla-domain', 'simulation');
    expect(sim.out).not.toMatch(/carla_videos_transferred/);
    const both = await cli('validate', '--dataset', pub.root, '--carla-domain', 'simulation,transferred');
    expect(both.out).toBe(all.out);
    expect((await cli('validate', '--dataset', pub.root, '--carla-domain', 'sim')).err).toBe("egogeo: --carla-domain must be simulation or transferred, got 'sim'\n");
  });
});
