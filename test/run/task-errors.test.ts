/**
 * How a clip task classifies the engine's failures (native/napi_util.h tags each error's `code`):
 * bad input is the clip's (ClipDataError: the errors file, the run goes on); the engine's own
 * failure is a bug (InternalError: the run stops, exit 2); an interrupted run's task is cancelled.
 * The engine is stubbed here to throw each kind; the real tags are checked on the addon below.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CancelledError, ClipDataError, InternalError } from '../../src/core/errors.js';
import type { ClipTask } from '../../src/run/task.js';
import { engineConfig } from '../../src/vo/config.js';

const thrown = { current: null as Error | null };
vi.mock('../../src/vo/estimate.js', async (orig) => ({
  ...(await orig<typeof import('../../src/vo/estimate.js')>()),
  estimateClip: () => {
    throw thrown.current;
  },
}));
const { runClipTask } = await import('../../src/run/task.js');
const { processClip } = await import('../../src/native/index.js');
const { NATIVE_BUILT } = await import('./fixtures.js');

const dir = mkdtempSync(join(tmpdir(), 'egogeo-task-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const frames = [0, 1, 2].map((i) => join(dir, `${i}.pgm`));
for (const f of frames) writeFileSync(f, Buffer.concat([Buffer.from('P5\n64 64\n255\n'), Buffer.alloc(64 * 64, 128)]));
const task = (cancel?: Int32Array): ClipTask => ({
  clip: { index: 0, id: 'c', source: 'synthetic', frames, timestamps: [0, 0.1, 0.2], camera: {}, qa: [] },
  qa: [],
  engine: engineConfig(),
  config: '',
  questionIds: ['speed_trend'],
  qaBase: 0,
  cancel,
});

describe('clip task failures', () => {
  it("the engine's bad-input error fails the clip; its internal error stops the run; a cancelled run cancels", async () => {
    thrown.current = Object.assign(new Error('processClip: frame 1: unreadable image'), { code: 'EGOGEO_INPUT' });
    await expect(runClipTask(task())).rejects.toThrow(ClipDataError);
    await expect(runClipTask(task())).rejects.toThrow('VO failed: processClip: frame 1: unreadable image');
    thrown.current = Object.assign(new Error('processClip: OpenCV error: (-215:Assertion failed) npoints >= 0'), { code: 'EGOGEO_INTERNAL' });
    await expect(runClipTask(task())).rejects.toThrow(InternalError);
    await expect(runClipTask(task())).rejects.toThrow('clip c: the engine failed: processClip: OpenCV error: (-215:Assertion failed) npoints >= 0');
    await expect(runClipTask(task(Int32Array.of(1)))).rejects.toThrow(CancelledError);
  });

  it.skipIf(!NATIVE_BUILT)("the addon tags bad input 'EGOGEO_INPUT', sync and async", async () => {
    const missing = { frames: [frames[0], join(dir, 'nowhere.pgm')], timestamps: [0, 0.1] };
    let e: unknown;
    try {
      processClip(missing);
    } catch (x) {
      e = x;
    }
    expect(e).toMatchObject({ code: 'EGOGEO_INPUT', message: expect.stringContaining('nowhere.pgm') });
    const { processClipAsync } = await import('../../src/native/index.js');
    await expect(processClipAsync(missing)).rejects.toMatchObject({ code: 'EGOGEO_INPUT' });
  });
});
