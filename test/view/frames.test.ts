/**
 * Frames browsers cannot show: `egogeo synth` writes PGM/PPM frames, which the viewer serves as JPEG
 * (decoded by parsePnm, encoded by sharp), so a rendered set's clips show their frames.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePnm, startViewServer, type ViewServer } from '../../src/view/server.js';
import { NATIVE_BUILT, syntheticDataset } from '../run/fixtures.js';

function get(url: string, path: string): Promise<{ status: number; type: string; body: Buffer }> {
  const u = new URL(url);
  return new Promise((ok, fail) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => ok({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: Buffer.concat(chunks) }));
    });
    req.on('error', fail);
    req.end();
  });
}

describe('parsePnm', () => {
  it('reads P5 and P6 with comments, and their pixels', () => {
    const g = parsePnm(Buffer.concat([Buffer.from('P5\n# made by a test\n3 2\n255\n'), Buffer.from([1, 2, 3, 4, 5, 6])]))!;
    expect(g).toMatchObject({ width: 3, height: 2, channels: 1 });
    expect([...g.pixels]).toEqual([1, 2, 3, 4, 5, 6]);
    const c = parsePnm(Buffer.concat([Buffer.from('P6 1 2 255\n'), Buffer.from([9, 8, 7, 6, 5, 4])]))!;
    expect(c).toMatchObject({ width: 1, height: 2, channels: 3 });
    expect([...c.pixels]).toEqual([9, 8, 7, 6, 5, 4]);
  });
  it('is null for what it cannot show: 16-bit, ASCII PNM, truncated pixels, not a PNM', () => {
    expect(parsePnm(Buffer.concat([Buffer.from('P5 2 1 65535\n'), Buffer.alloc(4)]))).toBeNull();
    expect(parsePnm(Buffer.from('P2 2 1 255\n1 2\n'))).toBeNull();
    expect(parsePnm(Buffer.concat([Buffer.from('P5 4 4 255\n'), Buffer.alloc(15)]))).toBeNull();
    expect(parsePnm(Buffer.from('\x89PNG\r\n\x1a\n'))).toBeNull();
  });
});

describe.skipIf(!NATIVE_BUILT)('egogeo view: a rendered set (PGM frames)', () => {
  let dir = '';
  let v: ViewServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'egogeo-view-pnm-'));
    const ds = syntheticDataset(join(dir, 'ds'), [{ id: 'straight', speed: 8, yawRate: 0, seed: 4, frames: 12 }]);
    expect(readdirSync(join(ds, 'frames', 'straight')).some((f) => /\.p[gp]m$/.test(f))).toBe(true);
    v = await startViewServer({ dataset: ds, port: 0, log: () => {} });
  }, 120_000);
  afterAll(async () => {
    await v?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves each frame as a JPEG the browser can show', async () => {
    const r = await get(v.url, '/frame/straight/0');
    expect(r.status).toBe(200);
    expect(r.type).toBe('image/jpeg');
    expect([...r.body.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
  });
});
