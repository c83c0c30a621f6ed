/**
 * core/pystring — Python 3.11 string and number semantics the benchmark's reference code relies on:
 * `str.strip`, `str.lower`, `str.isspace`, `re`'s `\w` and `\d` (Unicode 14.0, independent of the
 * ICU Node was built with), `float()`, `f"{x:g}"`, `repr(float)` and `str()`. The grader's parsing
 * cascade (grade/parse.ts) and the prediction reader (io/predictions.ts) both use them.
 */
// ---------------------------------------------------------------------------------------------
// Python 3.11 character classes (Unicode 14.0), independent of the ICU that Node was built with
// ---------------------------------------------------------------------------------------------

/** Decodes a range table: hex pairs (start − previous end, end − start) → flat [start, end, …]. */
function decodeRanges(s: string): Int32Array {
  const parts = s.split(',');
  const out = new Int32Array(parts.length);
  let prev = 0;
  for (let i = 0; i < parts.length; i += 2) {
    const start = prev + parseInt(parts[i], 16);
    const end = start + parseInt(parts[i + 1], 16);
    out[i] = start;
    out[i + 1] = end;
    prev = end;
  }
  return out;
}

/** Non-ASCII code points that Python 3.11's `re` counts as `\w` (`str.isalnum()` or `_`). */
const WORD_TABLE =
  'aa,0,8,1,2,0,4,1,2,2,2,16,2,1e,2,1c9,5,b,f,4,8,0,2,0,82,4,2,1,3,3,2,0,7,0,2,2,2,0,2,13,2,52,' +
  '2,8a,9,a5,2,25,3,0,7,28,48,1a,5,3,2e,2a,16,9,5,1,2,62,2,0,10,1,8,e,3,0,11,0,2,1d,1e,58,c,0,f,' +
  '2a,a,1,5,0,6,15,5,0,a,0,4,0,18,18,8,a,6,17,2,5,12,29,3b,35,4,0,13,0,8,9,5,9,2,f,5,7,3,1,3,15,' +
  '2,6,2,0,4,3,4,0,11,0,e,1,2,2,5,b,3,5,3,0,9,5,5,1,3,15,2,6,2,1,2,1,2,1,20,3,2,0,8,9,3,2,11,8,' +
  '2,2,2,15,2,6,2,1,2,4,4,0,13,0,10,1,5,9,a,0,c,7,3,1,3,15,2,6,2,1,2,4,4,0,1f,1,2,2,5,9,2,6,c,0,' +
  '2,5,4,2,2,3,4,1,2,0,2,1,4,1,4,2,4,b,17,0,16,c,13,7,2,2,2,16,2,f,4,0,1b,2,3,0,3,1,5,9,9,6,2,0,' +
  '5,7,2,2,2,16,2,9,2,4,4,0,20,1,2,1,5,9,2,1,12,8,2,2,2,28,3,0,11,0,6,2,2,9,5,12,2,5,6,11,4,17,' +
  '2,8,2,0,3,6,20,9,12,2f,2,1,d,6,a,9,28,1,2,0,2,4,2,17,2,0,2,9,2,1,a,0,3,4,2,0,a,9,3,3,21,0,20,' +
  '13,d,7,2,23,1c,4,74,2a,15,a,7,5,5,3,4,0,4,1,8,2,5,c,d,0,2,9,7,25,2,0,6,0,3,2a,2,14c,2,3,3,6,' +
  '2,0,2,3,3,28,2,3,3,20,2,3,3,6,2,0,2,3,3,e,2,38,2,3,3,42,f,13,4,f,11,55,3,5,4,26b,3,10,2,19,6,' +
  '4a,4,a,8,11,e,12,f,11,f,c,2,2,10,33,24,0,5,0,4,9,7,9,17,9,7,58,8,4,3,21,2,0,6,45,b,1e,28,27,' +
  '3,4,c,2b,5,19,7,a,26,16,a,34,2c,9,7,9,e,0,5e,2e,12,7,4,9,2a,1d,e,37,1b,23,1d,9,4,30,3,8,8,2a,' +
  '3,2,2a,3,2,5,2,1,4,0,6,bf,41,115,3,5,3,25,3,5,3,7,2,0,2,0,2,0,2,1e,3,34,2,6,2,0,4,2,2,6,4,3,' +
  '3,5,5,c,6,2,2,6,74,1,3,5,6,a,7,c,66,0,5,0,3,9,2,0,4,4,7,0,2,0,2,0,2,3,2,a,3,3,6,4,5,0,2,39,' +
  '2d7,3b,4f,15,277,1d,46d,e4,7,3,4,1,a,0,3,25,2,0,6,0,3,37,8,0,11,16,a,6,2,6,2,6,2,6,2,6,2,6,2,' +
  '6,2,6,51,0,1d6,2,1a,8,8,4,3,4,5,55,7,2,2,59,2,3,6,2a,2,5d,4,3,b,1f,31,f,21,9,1f,7,2,e,21,9,' +
  '28,e,141,19bf,41,568c,44,2d,3,10c,4,1b,15,2e,11,1e,3,4f,28,8,3,66,3,3f,6,1,2,0,2,4,19,f,2,2,' +
  '2,3,2,16,e,5,b,33,f,31,1d,9,19,5,4,0,2,1,2,25,b,16,1a,1c,8,2e,1d,a,7,4,2,18,2,28,18,2,2,7,5,' +
  '9,7,16,4,0,4,31,2,0,4,1,3,4,3,0,2,0,19,2,3,a,8,2,d,5,3,5,3,5,a,6,2,6,2,2a,2,d,7,72,e,9,7,' +
  '2ba3,d,16,5,30,2105,16d,3,69,27,6,d,4,6,0,2,9,2,c,2,4,2,0,2,1,2,1,2,6b,22,16a,13,3f,3,35,29,' +
  'b,75,4,2,86,14,9,8,19,7,19,c,58,4,5,3,5,3,5,3,2,24,b,2,19,2,12,2,1,2,e,3,d,23,7a,d,2c,d,38,' +
  '12,1,f5,1c,4,30,11,1a,5,23,a,1d,6,25,b,1d,3,23,5,7,2,4,2b,9d,3,9,7,23,5,23,5,27,9,33,d,a,2,e,' +
  '2,6,2,1,2,a,2,e,2,6,2,1,44,136,a,15,b,7,19,5,2,29,2,8,46,5,3,0,2,2b,2,1,4,0,3,16,3,1e,3,25,9,' +
  '8,31,12,2,1,6,20,5,19,47,37,5,13,3,2e,10,3,2,2,2,1c,b,8,18,1e,2,1f,21,7,2,1b,7,4,11,35,b,15,' +
  '3,1a,6,19,18,6,51,48,38,32,e,32,8,29,d,9,127,1e,2,29,7,1,4f,27,9,15,c,3,1c,11,2f,1b,15,16,d,' +
  '34,1b,1d,2,1,3,0,e,2c,21,18,8,9,a,23,10,9,5,0,3,0,9,22,4,0,d,2f,f,3,c,a,2,0,5,13,c,11,2,18,' +
  '55,6,2,0,2,3,2,e,2,9,8,2e,12,9,c,7,3,1,3,15,2,6,2,1,2,4,4,0,13,0,d,4,9f,34,13,3,6,9,6,2,1f,' +
  '2f,15,1,2,0,9,9,a7,2e,2a,3,25,2f,15,0,c,9,27,2a,e,0,8,9,37,1a,16,b,5,6,ba,2b,75,52,d,7,3,0,3,' +
  '7,2,1,2,17,10,0,2,0,f,9,47,7,3,26,11,0,2,0,1d,0,b,27,8,0,16,0,c,2d,14,0,13,48,108,8,2,24,12,' +
  '0,10,1c,6,1d,71,6,2,1,2,25,16,0,a,9,7,5,2,1,2,1f,f,0,8,9,137,12,be,0,10,14,2c,399,67,6e,12,' +
  'c3,a4d,60,10,42e,fd2,246,21ba,238,8,1e,2,9,7,4e,2,9,7,1d,13,2f,11,3,d,9,2,6,2,14,6,12,2b1,56,' +
  '6a,4a,6,0,43,c,41,1,2,0,1d,17f7,9,4d5,2b,8,22e8,3,2,6,2,1,2,122,2e,2,12,3,9,18b,905,6a,6,c,4,' +
  '8,8,9,1647,13,6d,18,88,54,2,46,2,1,3,0,3,1,3,3,2,b,2,0,2,6,2,40,2,3,3,7,2,6,2,1b,2,3,2,4,2,0,' +
  '4,6,2,153,3,18,2,18,2,1e,2,18,2,1e,2,18,2,1e,2,18,2,1e,2,18,2,7,3,31,701,1e,1e2,2c,b,6,3,9,5,' +
  '0,142,1d,13,2b,5,9,4e7,6,2,3,2,1,2,e,2,c4,3,8,31,43,8,0,5,9,318,3a,2,2,2,3,4d,2c,2,e,c3,3,2,' +
  '1a,2,1,2,0,3,0,2,9,2,3,2,0,2,0,7,0,5,0,2,0,2,0,2,2,2,1,2,0,3,0,2,0,2,0,2,0,2,0,2,1,2,0,3,3,2,' +
  '6,2,3,2,3,2,0,2,9,2,10,6,2,2,4,2,10,245,c,ae4,9,407,a6df,21,1038,8,dd,3,1681,f,1d30,c20,21d,' +
  '5e3,134a';

/** Python 3.11's `\d`: every Unicode decimal digit (category Nd), in runs of 0..9. */
const DIGIT_TABLE =
  '30,9,627,9,87,9,c7,9,19d,9,77,9,77,9,77,9,77,9,77,9,77,9,77,9,77,9,77,9,61,9,77,9,47,9,117,9,' +
  '47,9,747,9,27,9,12d,9,81,9,a7,9,7,9,b7,9,57,9,87,9,7,9,89c7,9,2a7,9,27,9,c7,9,17,9,57,9,197,9,' +
  '5317,9,587,9,887,9,32d,9,81,9,3d,9,91,9,117,9,157,9,77,9,177,9,67,9,67,9,1a7,9,67,9,2f7,9,f7,9,' +
  '47,9,4cb7,9,57,9,87,9,6c75,31,941,9,1a7,9,657,9,1297,9';

const WORD_RANGES = decodeRanges(WORD_TABLE);
const DIGIT_RANGES = decodeRanges(DIGIT_TABLE);

/** Index of the range holding `cp` in a flat [start, end, …] table, or -1. */
function rangeIndex(tbl: Int32Array, cp: number): number {
  let lo = 0;
  let hi = (tbl.length >> 1) - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < tbl[mid << 1]) hi = mid - 1;
    else if (cp > tbl[(mid << 1) + 1]) lo = mid + 1;
    else return mid;
  }
  return -1;
}

const ASCII_WORD = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  ASCII_WORD[c] = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 ? 1 : 0;
}

/** Python `re` `\w` for one code point (`cp` < 0 — "no character" — is not a word character). */
export function isPyWordChar(cp: number): boolean {
  if (cp < 128) return cp >= 0 && ASCII_WORD[cp] === 1;
  return rangeIndex(WORD_RANGES, cp) >= 0;
}

/** Python `re` `\d` (any Unicode decimal digit) for one code point. */
export function isPyDigit(cp: number): boolean {
  if (cp < 128) return cp >= 48 && cp <= 57;
  return rangeIndex(DIGIT_RANGES, cp) >= 0;
}

/** The value 0..9 of a Unicode decimal digit, or -1. */
export function digitValue(cp: number): number {
  if (cp < 128) return cp >= 48 && cp <= 57 ? cp - 48 : -1;
  const k = rangeIndex(DIGIT_RANGES, cp);
  return k < 0 ? -1 : (cp - DIGIT_RANGES[k << 1]) % 10;
}

/**
 * Python's `str.isspace()` / `str.strip()` / `re` `\s` set: \t \n \v \f \r, \x1c–\x1f, space, \x85,
 * \xa0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000. (JavaScript's `trim()` also
 * strips U+FEFF and keeps \x1c–\x1f and \x85.)
 */
export function isPySpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x85) return false;
  return (
    c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}


/** Python's `str.strip()` (no arguments). */
export function pyStrip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isPySpace(s.charCodeAt(a))) a++;
  while (b > a && isPySpace(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

/**
 * Python's `str.splitlines()`: breaks at \n, \r, \r\n, \v, \f, \x1c, \x1d, \x1e, \x85, U+2028 and
 * U+2029 (not \x1f, which is whitespace but no line break); no empty last line after a final break.
 */
export function pySplitlines(s: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!isPyLineBreak(c)) continue;
    out.push(s.slice(start, i));
    if (c === 0x0d && s.charCodeAt(i + 1) === 0x0a) i++;
    start = i + 1;
  }
  if (start < s.length) out.push(s.slice(start));
  return out;
}

function isPyLineBreak(c: number): boolean {
  return (c >= 0x0a && c <= 0x0d) || (c >= 0x1c && c <= 0x1e) || c === 0x85 || c === 0x2028 || c === 0x2029;
}

/** True when `s` is empty or all Python whitespace (`not s.strip()`). */
export function isPyBlank(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isPySpace(s.charCodeAt(i))) return false;
  return true;
}

/**
 * Code points that newer Unicode versions lower-case but Python 3.11 (Unicode 14.0) leaves alone
 * (letters added in Unicode 15–17); everything else of `toLowerCase()` matches `str.lower()`,
 * including the final-sigma rule and İ → i̇.
 */
const LOWER_KEEP = /[\u{1c89}\u{a7cb}-\u{a7cc}\u{a7ce}\u{a7d2}\u{a7d4}\u{a7da}\u{a7dc}\u{10d50}-\u{10d65}\u{16ea0}-\u{16eb8}]/u;
const LOWER_KEEP_G = new RegExp(LOWER_KEEP.source, 'gu');

/** Any code unit at or above the first LOWER_KEEP code point (cheap pre-test, no `u` flag). */
const MAY_KEEP = /[\u1c89-\uffff]/;

/** Python's `str.lower()`. */
export function pyLower(s: string): string {
  const low = s.toLowerCase();
  if (low === s || !MAY_KEEP.test(s) || !LOWER_KEEP.test(s)) return low;
  let out = '';
  let seg = 0;
  for (const m of s.matchAll(LOWER_KEEP_G)) {
    out += s.slice(seg, m.index).toLowerCase() + m[0];
    seg = m.index + m[0].length;
  }
  return out + s.slice(seg).toLowerCase();
}

// ---------------------------------------------------------------------------------------------
// Numbers: Python float(), f"{x:g}", repr(float), str()
// ---------------------------------------------------------------------------------------------

const NON_ASCII = /[^\x00-\x7f]/;
const FLOAT_SYNTAX = /^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)$/i;
const ASCII_WS_EDGES = /^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g;

/**
 * Python's `float(s)` for a str: Unicode digits and spaces allowed, `_` between digits, inf/nan.
 * Returns null where Python raises ValueError (overflow gives ±Infinity, as in Python).
 */
export function pyFloat(s: string): number | null {
  let t = s;
  if (NON_ASCII.test(t)) {
    let out = '';
    for (const ch of t) {
      const cp = ch.codePointAt(0)!;
      if (cp < 128) out += ch;
      else if (isPySpace(cp)) out += ' ';
      else {
        const d = digitValue(cp);
        out += d >= 0 ? String.fromCharCode(48 + d) : '?';
      }
    }
    t = out;
  }
  if (t.indexOf('\0') >= 0) return null;
  if (t.indexOf('_') >= 0) {
    let out = '';
    let prev = '';
    for (const ch of t) {
      if (ch === '_') {
        if (!(prev >= '0' && prev <= '9')) return null;
      } else {
        if (prev === '_' && !(ch >= '0' && ch <= '9')) return null;
        out += ch;
      }
      prev = ch;
    }
    if (prev === '_') return null;
    t = out;
  }
  t = t.replace(ASCII_WS_EDGES, '');
  if (!FLOAT_SYNTAX.test(t)) return null;
  const body = t.charCodeAt(0) === 43 || t.charCodeAt(0) === 45 ? t.slice(1) : t;
  const c0 = body.charCodeAt(0) | 0x20;
  if (c0 === 0x69 /* i */) return t.charCodeAt(0) === 45 ? -Infinity : Infinity;
  if (c0 === 0x6e /* n */) return NaN;
  return Number(t);
}

/** |x| = mant · 2^exp exactly (x finite, non-zero). */
function decompose(x: number): [bigint, number] {
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, Math.abs(x));
  const hi = buf.getUint32(0);
  const lo = buf.getUint32(4);
  const e = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (e === 0) return [m, -1074];
  m |= 1n << 52n;
  return [m, e - 1075];
}

/** |x| rounded to `p` significant digits, half to even on the exact binary value: [digits, exponent]. */
function roundSignificant(x: number, p: number): [string, number] {
  const [m, e2] = decompose(x);
  let k = Math.floor(Math.log10(Math.abs(x)));
  const lo = 10n ** BigInt(p - 1);
  const hi = lo * 10n;
  for (;;) {
    let num = m;
    let den = 1n;
    if (e2 >= 0) num <<= BigInt(e2);
    else den <<= BigInt(-e2);
    const shift = p - 1 - k;
    if (shift >= 0) num *= 10n ** BigInt(shift);
    else den *= 10n ** BigInt(-shift);
    let q = num / den;
    if (q >= hi) {
      k++;
      continue;
    }
    if (q < lo) {
      k--;
      continue;
    }
    const r2 = 2n * (num - q * den);
    if (r2 > den || (r2 === den && (q & 1n) === 1n)) q++;
    if (q === hi) {
      q = lo;
      k++;
    }
    return [q.toString(), k];
  }
}

function expSuffix(e: number): string {
  return `e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
}

/** Python's `f"{x:g}"` (6 significant digits, trailing zeros dropped, exponent outside [-4, 6)). */
export function pyFormatG(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const sign = x < 0 ? '-' : '';
  if (Number.isInteger(x) && Math.abs(x) < 1e6) return String(x);
  const p = 6;
  const [digits, exp] = roundSignificant(x, p);
  let s: string;
  if (exp >= -4 && exp < p) {
    let intPart: string;
    let frac: string;
    if (exp >= 0) {
      intPart = digits.slice(0, exp + 1);
      frac = digits.slice(exp + 1);
    } else {
      intPart = '0';
      frac = '0'.repeat(-exp - 1) + digits;
    }
    frac = frac.replace(/0+$/, '');
    s = frac ? `${intPart}.${frac}` : intPart;
  } else {
    const frac = digits.slice(1).replace(/0+$/, '');
    s = digits[0] + (frac ? `.${frac}` : '') + expSuffix(exp);
  }
  return sign + s;
}

/** Python's `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const e = Math.abs(x).toExponential();
  const k = e.indexOf('e');
  const digits = e.slice(0, k).replace('.', '');
  const decpt = Number(e.slice(k + 1)) + 1;
  let body: string;
  if (decpt <= -4 || decpt > 16) {
    body = digits[0] + (digits.length > 1 ? `.${digits.slice(1)}` : '') + expSuffix(decpt - 1);
  } else if (decpt <= 0) {
    body = `0.${'0'.repeat(-decpt)}${digits}`;
  } else if (decpt >= digits.length) {
    body = `${digits}${'0'.repeat(decpt - digits.length)}.0`;
  } else {
    body = `${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
  }
  return sign + body;
}

/** Python's `str()` of a JSON number token as `json.loads` would type it (int unless `.`/`e`). */
export function pyNumberTokenStr(token: string): string {
  if (/[.eE]/.test(token)) return pyFloatRepr(Number(token));
  try {
    return BigInt(token).toString();
  } catch {
    return pyFloatRepr(Number(token));
  }
}

/** Python `repr()` of a str (quote choice and escapes as CPython). */
function pyStrRepr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = q;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === q || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp >= 0x80 && /^[\p{C}\p{Z}]$/u.test(ch)) {
      out += cp <= 0xff ? `\\x${cp.toString(16).padStart(2, '0')}` : cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`;
    } else out += ch;
  }
  return out + q;
}

function pyRepr(v: unknown): string {
  if (typeof v === 'string') return pyStrRepr(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v).map(([k, x]) => `${pyStrRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
  }
  return pyStr(v);
}

/**
 * Python's `str(x)` for a value as `json.loads` produces it. A JavaScript number cannot say whether
 * the JSON had `1` or `1.0`: integral values are written as Python ints; readers that keep the
 * token should use `pyNumberTokenStr`.
 */
export function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (Number.isInteger(v) && !Object.is(v, -0)) return BigInt(v).toString();
    return pyFloatRepr(v);
  }
  return pyRepr(v);
}
