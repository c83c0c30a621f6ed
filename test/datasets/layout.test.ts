/** The one layout detector (datasets/layout.ts): every layout, the precedence, and what is none. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectLayout, requireLayout } from '../../src/datasets/layout.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-layout-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A folder holding `files` (paths ending in / are folders). */
function folder(name: string, files: string[]): string {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  for (const f of files) {
    if (f.endsWith('/')) mkdirSync(join(dir, f), { recursive: true });
    else {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), '');
    }
  }
  return dir;
}

describe('detectLayout', () => {
  it('names each layout', () => {
    expect(detectLayout(folder('pub-nus', ['nuscenes_clips/clips_index.jsonl', 'selected_clips.json']))).toBe('published');
    expect(detectLayout(folder('pub-carla', ['carla_clips/clips_index.jsonl']))).toBe('published');
    expect(detectLayout(folder('bench', ['clips_index.jsonl', 'qa.jsonl']))).toBe('benchmark');
    expect(detectLayout(folder('kitti-frames', ['image_0/', 'times.txt', 'calib.txt']))).toBe('kitti');
    expect(detectLayout(folder('kitti-poses', ['poses.txt', 'times.txt']))).toBe('kitti');
  });

  it('in order: published over benchmark over KITTI', () => {
    expect(detectLayout(folder('both', ['clips_index.jsonl', 'carla_clips/clips_index.jsonl']))).toBe('published');
    expect(detectLayout(folder('bench-with-frames', ['clips_index.jsonl', 'image_0/', 'poses.txt']))).toBe('benchmark');
    // a part folder without its index is not the published layout
    expect(detectLayout(folder('half', ['nuscenes_clips/', 'image_0/']))).toBe('kitti');
  });

  it('none: an empty folder, a file, a missing path; requireLayout says what was expected', () => {
    expect(detectLayout(folder('empty', []))).toBeNull();
    expect(detectLayout(join(folder('f', ['clips_index.jsonl']), 'clips_index.jsonl'))).toBeNull();
    expect(detectLayout(join(tmp, 'nope'))).toBeNull();
    expect(() => requireLayout(join(tmp, 'empty'))).toThrow(/empty: not a dataset folder: expected EgoDyn-Bench as published .*, the benchmark layout \(clips_index\.jsonl\) or a KITTI sequence/);
  });
});
