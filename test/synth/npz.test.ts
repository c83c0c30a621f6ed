/** src/io/npz.ts: numpy-exact writing, reading of every numeric dtype/order/version, clear errors. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync, zipSync } from 'fflate';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeNpy, encodeNpy, encodeNpz, readNpz, writeNpz } from '../../src/io/npz.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-npz-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A hand-built npy (any header text, any payload). */
function npy(header: string, payload: Uint8Array, major = 1): Uint8Array {
  const pre = major === 1 ? 10 : 12;
  let h = header;
  h += ' '.repeat((64 - ((pre + h.length + 1) % 64)) % 64) + '\n';
  const out = new Uint8Array(pre + h.length + payload.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, major, 0]);
  const dv = new DataView(out.buffer);
  if (major === 1) dv.setUint16(8, h.length, true);
  else dv.setUint32(8, h.length, true);
  for (let i = 0; i < h.length; i++) out[pre + i] = h.charCodeAt(i);
  out.set(payload, pre + h.length);
  return out;
}

describe('npz', () => {
  it('round-trips float64 arrays of any shape, keys in order', () => {
    const p = join(tmp, 'a.npz');
    const pos = Float64Array.from([1, 2, 3, 4, 5, 6]);
    writeNpz(p, { timestamps: [0, 0.1, 0.2], position: { shape: [3, 2], data: pos }, empty: new Float64Array(0) });
    const r = readNpz(p);
    expect(Object.keys(r)).toEqual(['timestamps', 'position', 'empty']);
    expect(r.position.shape).toEqual([3, 2]);
    expect(Array.from(r.position.data)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(r.timestamps.shape).toEqual([3]);
    expect(r.empty.shape).toEqual([0]);
  });

  it('writes the same bytes every time (fixed zip timestamps)', () => {
    const a = encodeNpz({ x: [1, 2, 3] });
    const b = encodeNpz({ x: [1, 2, 3] });
    expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).toBe(0);
  });

  it('writes npy headers exactly as numpy does (64-byte aligned, trailing newline)', () => {
    const b = encodeNpy({ shape: [31, 2], data: new Float64Array(62) });
    const header = new TextDecoder().decode(b.subarray(10, 10 + new DataView(b.buffer).getUint16(8, true)));
    expect(header).toMatch(/^\{'descr': '<f8', 'fortran_order': False, 'shape': \(31, 2\), \} +\n$/);
    expect((10 + header.length) % 64).toBe(0);
    const one = encodeNpy({ shape: [31], data: new Float64Array(31) });
    expect(new TextDecoder().decode(one.subarray(10, 70))).toContain("'shape': (31,), }");
  });

  it.skipIf(!needsShared("npz re-encoding of the reference's own file", 'data/egodyn_kitti/arrays/kitti00_000000.npz'))("re-encodes the reference's own npz members byte for byte", () => {
    const p = sharedPath('data/egodyn_kitti/arrays/kitti00_000000.npz');
    const files = unzipSync(readFileSync(p));
    const arrays = readNpz(p);
    expect(Object.keys(arrays)).toEqual(['timestamps', 'position', 'yaw', 'speed', 'accel', 'yaw_rate', 'jerk']);
    for (const [k, v] of Object.entries(arrays)) expect(Buffer.compare(Buffer.from(encodeNpy(v)), Buffer.from(files[`${k}.npy`]))).toBe(0);
  });

  it('reads other dtypes, byte orders, Fortran order and npy version 2', () => {
    const i4 = new Uint8Array(new Int32Array([-1, 2, 3]).buffer);
    expect(Array.from(decodeNpy(npy("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", i4)).data)).toEqual([-1, 2, 3]);
    const be = new Uint8Array(8);
    new DataView(be.buffer).setFloat64(0, 2.5, false);
    expect(decodeNpy(npy("{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }", be)).data[0]).toBe(2.5);
    const f4 = new Uint8Array(new Float32Array([0.5, 1.5]).buffer);
    expect(Array.from(decodeNpy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f4, 2)).data)).toEqual([0.5, 1.5]);
    const b1 = Uint8Array.from([1, 0, 1]);
    expect(Array.from(decodeNpy(npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", b1)).data)).toEqual([1, 0, 1]);
    // Fortran order 2x3: memory holds columns.
    const f = new Uint8Array(new Float64Array([1, 4, 2, 5, 3, 6]).buffer);
    const r = decodeNpy(npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", f));
    expect(Array.from(r.data)).toEqual([1, 2, 3, 4, 5, 6]);
    // stored (not deflated) zip members read too
    const z = zipSync({ 'k.npy': [encodeNpy({ shape: [2], data: Float64Array.from([7, 8]) }), { level: 0 }] });
    writeFileSync(join(tmp, 'stored.npz'), z);
    expect(Array.from(readNpz(join(tmp, 'stored.npz')).k.data)).toEqual([7, 8]);
  });

  it('names the file and member in errors', () => {
    writeFileSync(join(tmp, 'bad.npz'), 'not a zip');
    expect(() => readNpz(join(tmp, 'bad.npz'))).toThrow(/bad\.npz: not a valid npz/);
    expect(() => readNpz(join(tmp, 'missing.npz'))).toThrow(/missing\.npz: cannot read \(no such file\)/);
    writeFileSync(join(tmp, 'obj.npz'), zipSync({ 'o.npy': npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", new Uint8Array(8)) }));
    expect(() => readNpz(join(tmp, 'obj.npz'))).toThrow(/obj\.npz: o\.npy: unsupported dtype '\|O'/);
    writeFileSync(join(tmp, 'short.npz'), zipSync({ 's.npy': npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", new Uint8Array(8)) }));
    expect(() => readNpz(join(tmp, 'short.npz'))).toThrow(/s\.npy: data has 8 bytes, shape \(4\) needs 32/);
    expect(() => encodeNpz({ x: { shape: [2, 2], data: new Float64Array(3) } })).toThrow(/'x' has 3 values for shape \(2, 2\)/);
  });
});
