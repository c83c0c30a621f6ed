/**
 * NumPy `.npy` / `.npz` files, as the benchmark stores each clip's arrays
 * (`arrays/<clip_id>.npz`, written by the reference with `np.savez_compressed`): an npz is a zip of
 * `<key>.npy` members; an npy is a magic string, a version, a Python-dict header
 * `{'descr': '<f8', 'fortran_order': False, 'shape': (31, 2), }` padded to a multiple of 64 bytes,
 * then the raw little-endian data in C order.
 *
 * Reading accepts npy versions 1–3, float (f2 is not), signed/unsigned integer and bool dtypes of
 * either byte order, C or Fortran order (Fortran data is reordered to C order), stored or
 * deflated members; every array comes back as float64. Writing produces what
 * `np.savez_compressed` does for float64 arrays (version 1.0 headers, deflated members), with a
 * fixed timestamp so the same arrays always give the same bytes. May import: core/.
 */
import { MAX_INPUT_BYTES, readInputBytes } from './safety.js';
import { createRequire } from 'node:module';
import type { Zippable } from 'fflate';

// fflate is required on first use: most commands never read or write an npz, and loading it costs
// a one-clip run ~25 ms of its start-up.
let zip: typeof import('fflate') | null = null;
const fflate = (): typeof import('fflate') => (zip ??= createRequire(import.meta.url)('fflate') as typeof import('fflate'));
import { InputError } from '../core/errors.js';
import { writeFileAtomic } from './atomic.js';

/** One array: its shape and its values in C (row-major) order. */
export interface NpyArray {
  shape: number[];
  data: Float64Array;
}

/** What `writeNpz` accepts per key: an array with a shape, or a flat vector (shape [n]). */
export type NpyInput = NpyArray | Float64Array | readonly number[];

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

/** What reading an npz inflates: only the `keys` asked for (all by default), each at most `maxBytes` inflated. */
export interface NpzReadOptions {
  keys?: readonly string[];
  /** Largest inflated member (default MAX_INPUT_BYTES): a bigger one is refused before it is inflated. */
  maxBytes?: number;
}

/** Reads the arrays of an `.npz` file (see NpzReadOptions). Errors name the file and the member. */
export function readNpz(path: string, o: NpzReadOptions = {}): Record<string, NpyArray> {
  return decodeNpz(readInputBytes(path, 'NumPy file'), path, o);
}

/** One member of a zip, from its central directory. */
interface ZipEntry {
  name: string;
  method: number;
  compressed: number;
  size: number;
  /** Offset of its local header. */
  offset: number;
}

/**
 * The members of a zip, read from its central directory (zip64 included) without inflating any:
 * a member nobody asks for is never inflated, whatever its size.
 */
function zipEntries(b: Uint8Array): ZipEntry[] {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let e = b.length - 22;
  while (e >= 0 && dv.getUint32(e, true) !== 0x06054b50) {
    if (b.length - e > 65557) e = -1;
    else e--;
  }
  if (e < 0) throw new Error('no end of central directory');
  let count = dv.getUint16(e + 10, true);
  let cd = dv.getUint32(e + 16, true);
  if (e >= 20 && dv.getUint32(e - 20, true) === 0x07064b50) {
    const z = Number(dv.getBigUint64(e - 12, true));
    if (z + 56 > b.length || dv.getUint32(z, true) !== 0x06064b50) throw new Error('bad zip64 end of central directory');
    count = Number(dv.getBigUint64(z + 32, true));
    cd = Number(dv.getBigUint64(z + 48, true));
  }
  const out: ZipEntry[] = [];
  for (let i = 0, p = cd; i < count; i++) {
    if (p + 46 > b.length || dv.getUint32(p, true) !== 0x02014b50) throw new Error('bad central directory entry');
    const nameLen = dv.getUint16(p + 28, true), extraLen = dv.getUint16(p + 30, true), commentLen = dv.getUint16(p + 32, true);
    const entry: ZipEntry = {
      name: new TextDecoder().decode(b.subarray(p + 46, p + 46 + nameLen)),
      method: dv.getUint16(p + 10, true),
      compressed: dv.getUint32(p + 20, true),
      size: dv.getUint32(p + 24, true),
      offset: dv.getUint32(p + 42, true),
    };
    // zip64: the fields at 0xFFFFFFFF are in the extra field 0x0001, in this order.
    for (let x = p + 46 + nameLen; x + 4 <= p + 46 + nameLen + extraLen; ) {
      const id = dv.getUint16(x, true), len = dv.getUint16(x + 2, true);
      if (id === 1) {
        let q = x + 4;
        const next = () => ((q += 8), Number(dv.getBigUint64(q - 8, true)));
        if (entry.size === 0xffffffff) entry.size = next();
        if (entry.compressed === 0xffffffff) entry.compressed = next();
        if (entry.offset === 0xffffffff) entry.offset = next();
      }
      x += 4 + len;
    }
    out.push(entry);
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

/**
 * A member's bytes: stored ones as they are, deflated ones inflated in steps, stopping as soon as
 * the output would pass the declared size (a member that lies about it cannot take more memory
 * or time than it declared).
 */
function inflateMember(b: Uint8Array, m: ZipEntry): Uint8Array {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (m.offset + 30 > b.length || dv.getUint32(m.offset, true) !== 0x04034b50) throw new Error(`${m.name}: bad local header`);
  const start = m.offset + 30 + dv.getUint16(m.offset + 26, true) + dv.getUint16(m.offset + 28, true);
  if (start + m.compressed > b.length) throw new Error(`${m.name}: truncated`);
  const data = b.subarray(start, start + m.compressed);
  if (m.method === 0) {
    if (m.compressed !== m.size) throw new Error(`${m.name}: stored size ${m.compressed} but declared ${m.size}`);
    return data.slice();
  }
  if (m.method !== 8) throw new Error(`${m.name}: unknown compression method ${m.method}`);
  const out = new Uint8Array(m.size);
  let n = 0;
  const inf = new (fflate().Inflate)((chunk) => {
    if (n + chunk.length > m.size) throw new Error(`${m.name}: inflates past its declared ${m.size} bytes`);
    out.set(chunk, n);
    n += chunk.length;
  });
  const STEP = 1 << 14; // at most ~16 MiB out per step (deflate's 1032:1), checked after each
  for (let i = 0; i < data.length; i += STEP) inf.push(data.subarray(i, Math.min(i + STEP, data.length)), i + STEP >= data.length);
  if (data.length === 0) inf.push(data, true);
  if (n !== m.size) throw new Error(`${m.name}: inflates to ${n} bytes, declared ${m.size}`);
  return out;
}

/** Decodes npz bytes (see NpzReadOptions); `where` prefixes error messages. */
export function decodeNpz(bytes: Uint8Array, where = 'npz', o: NpzReadOptions = {}): Record<string, NpyArray> {
  const max = o.maxBytes ?? MAX_INPUT_BYTES;
  const want = o.keys ? new Set(o.keys) : null;
  let entries: ZipEntry[];
  try {
    entries = zipEntries(bytes);
  } catch (e) {
    throw new InputError(`${where}: not a valid npz (zip) file (${(e as Error).message})`);
  }
  const out: Record<string, NpyArray> = {};
  for (const m of entries) {
    if (!m.name.endsWith('.npy')) continue;
    const key = m.name.slice(0, -4);
    if (want && !want.has(key)) continue;
    if (m.size > max) throw new InputError(`${where}: ${m.name} declares ${m.size} bytes inflated, more than the ${max} an array may take (not inflated)`);
    let data: Uint8Array;
    try {
      data = inflateMember(bytes, m);
    } catch (e) {
      throw new InputError(`${where}: not a valid npz (zip) file (${(e as Error).message})`);
    }
    out[key] = decodeNpy(data, `${where}: ${m.name}`);
  }
  return out;
}

/** Reads one `.npy` file. */
export function readNpy(path: string): NpyArray {
  return decodeNpy(readInputBytes(path, 'NumPy file'), path);
}

interface Dtype {
  kind: 'f' | 'i' | 'u' | 'b';
  size: number;
  little: boolean;
}

function parseDescr(descr: string, where: string): Dtype {
  const m = /^([<>|=]?)([fiub])(\d+)$/.exec(descr);
  if (!m) throw new InputError(`${where}: unsupported dtype '${descr}' (numeric dtypes only)`);
  const kind = m[2] as Dtype['kind'];
  const size = Number(m[3]);
  const ok = kind === 'f' ? size === 4 || size === 8 : kind === 'b' ? size === 1 : [1, 2, 4, 8].includes(size);
  if (!ok) throw new InputError(`${where}: unsupported dtype '${descr}'`);
  return { kind, size, little: m[1] !== '>' };
}

/** Decodes npy bytes into float64 values in C order. */
export function decodeNpy(bytes: Uint8Array, where = 'npy'): NpyArray {
  if (bytes.length < 10 || MAGIC.some((b, i) => bytes[i] !== b)) throw new InputError(`${where}: not an npy file (bad magic)`);
  const major = bytes[6];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let headerLen: number;
  let offset: number;
  if (major === 1) {
    headerLen = view.getUint16(8, true);
    offset = 10;
  } else if (major === 2 || major === 3) {
    if (bytes.length < 12) throw new InputError(`${where}: truncated header`);
    headerLen = view.getUint32(8, true);
    offset = 12;
  } else {
    throw new InputError(`${where}: unsupported npy version ${major}.${bytes[7]}`);
  }
  if (offset + headerLen > bytes.length) throw new InputError(`${where}: truncated header`);
  const header = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(bytes.subarray(offset, offset + headerLen));
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header)?.[1];
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr === undefined || fortran === undefined || shapeText === undefined) {
    throw new InputError(`${where}: malformed header ${JSON.stringify(header.trim())}`);
  }
  const dtype = parseDescr(descr, where);
  const shape = shapeText
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      const n = Number(s.replace(/L$/, ''));
      if (!Number.isInteger(n) || n < 0) throw new InputError(`${where}: bad shape (${shapeText})`);
      return n;
    });
  const count = shape.reduce((a, b) => a * b, 1);
  const start = offset + headerLen;
  if (bytes.length - start < count * dtype.size) {
    throw new InputError(`${where}: data has ${bytes.length - start} bytes, shape (${shape.join(', ')}) needs ${count * dtype.size}`);
  }
  const data = new Float64Array(count);
  const dv = new DataView(bytes.buffer, bytes.byteOffset + start, count * dtype.size);
  const le = dtype.little;
  for (let i = 0; i < count; i++) {
    const o = i * dtype.size;
    let v: number;
    switch (dtype.kind) {
      case 'f':
        v = dtype.size === 8 ? dv.getFloat64(o, le) : dv.getFloat32(o, le);
        break;
      case 'b':
        v = dv.getUint8(o) ? 1 : 0;
        break;
      case 'i':
        v = dtype.size === 1 ? dv.getInt8(o) : dtype.size === 2 ? dv.getInt16(o, le) : dtype.size === 4 ? dv.getInt32(o, le) : Number(dv.getBigInt64(o, le));
        break;
      default:
        v = dtype.size === 1 ? dv.getUint8(o) : dtype.size === 2 ? dv.getUint16(o, le) : dtype.size === 4 ? dv.getUint32(o, le) : Number(dv.getBigUint64(o, le));
    }
    data[i] = v;
  }
  return { shape, data: fortran === 'True' && shape.length > 1 ? fortranToC(data, shape) : data };
}

function fortranToC(f: Float64Array, shape: number[]): Float64Array {
  const n = f.length;
  const out = new Float64Array(n);
  const nd = shape.length;
  const idx = new Array<number>(nd).fill(0);
  // Walk C order; compute the Fortran offset of each multi-index.
  for (let c = 0; c < n; c++) {
    let off = 0;
    let stride = 1;
    for (let d = 0; d < nd; d++) {
      off += idx[d] * stride;
      stride *= shape[d];
    }
    out[c] = f[off];
    for (let d = nd - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

function asArray(key: string, v: NpyInput): NpyArray {
  if (v instanceof Float64Array) return { shape: [v.length], data: v };
  if (Array.isArray(v)) return { shape: [v.length], data: Float64Array.from(v as number[]) };
  const a = v as NpyArray;
  const count = a.shape.reduce((x, y) => x * y, 1);
  if (!a.shape.every((s) => Number.isInteger(s) && s >= 0) || count !== a.data.length) {
    throw new InputError(`npz: array '${key}' has ${a.data.length} values for shape (${a.shape.join(', ')})`);
  }
  return a;
}

/** npy bytes (version 1.0, '<f8', C order) for one array, exactly as numpy writes them. */
export function encodeNpy(a: NpyArray): Uint8Array {
  const shape = a.shape.length === 1 ? `(${a.shape[0]},)` : `(${a.shape.join(', ')})`;
  let header = `{'descr': '<f8', 'fortran_order': False, 'shape': ${shape}, }`;
  // numpy pads with spaces so that magic + version + length + header (with its '\n') is a multiple of 64.
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const out = new Uint8Array(10 + header.length + a.data.length * 8);
  out.set(MAGIC, 0);
  out[6] = 1;
  out[7] = 0;
  const dv = new DataView(out.buffer);
  dv.setUint16(8, header.length, true);
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  const base = 10 + header.length;
  for (let i = 0; i < a.data.length; i++) dv.setFloat64(base + i * 8, a.data[i], true);
  return out;
}

/** npz bytes: one deflated `<key>.npy` member per key, in the given key order. */
export function encodeNpz(arrays: Record<string, NpyInput>, opts: { compress?: boolean } = {}): Uint8Array {
  const level = opts.compress === false ? 0 : 6;
  const files: Zippable = {};
  for (const [key, v] of Object.entries(arrays)) {
    if (!key || key.includes('/')) throw new InputError(`npz: invalid array name '${key}'`);
    // A fixed timestamp (the zip epoch, as numpy's savez writes) keeps the bytes reproducible.
    files[`${key}.npy`] = [encodeNpy(asArray(key, v)), { level, mtime: new Date(1980, 0, 1, 0, 0, 0) }];
  }
  return fflate().zipSync(files);
}

/**
 * Writes an `.npz` atomically (temp file in the same folder, then rename). Keys keep their order;
 * values are written as float64.
 */
export function writeNpz(path: string, arrays: Record<string, NpyInput>, opts: { compress?: boolean } = {}): void {
  writeFileAtomic(path, encodeNpz(arrays, opts));
}
