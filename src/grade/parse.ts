/**
 * grade/parse — the reference grader's answer-parsing cascade (`evaluation/parsers.py` of
 * EgoDyn-Bench), reproduced for Python 3.11 string semantics: `str.lower`, `str.strip` and `re`'s
 * `\s` (Python's whitespace set, not JavaScript's), `str.splitlines`, Unicode-aware `\b` (word
 * characters = Python's `\w`, Unicode 14.0 as in Python 3.11), `\d` = any Unicode decimal digit,
 * `float()` and `f"{x:g}"`.
 *
 * Cascade for a choice question (`parseAnswer`): empty/whitespace → null; normalise (lower, strip,
 * drop `*` and backticks, collapse whitespace, strip trailing `.,;:!?`); 1) exact choice; 2) the
 * choice with `_`↔space; 3) the last non-empty line: exact, `_`↔space, then whole-word substring;
 * 4) whole-word substring of the full text, longest choice first (and each choice with `_`→space).
 * Numeric questions: the first number (`-?\d+(\.\d+)?`), written as Python's `f"{float(v):g}"`.
 */

import { isPyBlank, isPyDigit, isPySpace, isPyWordChar, pyFloat, pyFormatG, pyLower, pyStrip } from '../core/pystring.js';

/** Python's `str.splitlines()` boundaries: \n \v \f \r \x1c \x1d \x1e \x85 U+2028 U+2029. */
function isLineBreak(c: number): boolean {
  return (c >= 0x0a && c <= 0x0d) || (c >= 0x1c && c <= 0x1e) || c === 0x85 || c === 0x2028 || c === 0x2029;
}

const HAS_LINE_BREAK = /[\n-\r\x1c-\x1e\x85\u2028\u2029]/;
const STARS = /[*`]/g;

/** A whitespace character other than a single space between non-spaces: something to collapse. */
const NEEDS_COLLAPSE = /[\t-\r\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]| {2}/;

/** `re.sub(r"\s+", " ", t)` with Python's `\s` (a hand loop: several times faster than the regex). */
function collapseSpace(t: string): string {
  if (!NEEDS_COLLAPSE.test(t)) return t;
  const n = t.length;
  let out = '';
  let seg = 0;
  let i = 0;
  while (i < n) {
    const c = t.charCodeAt(i);
    if (isPySpace(c)) {
      let j = i + 1;
      while (j < n && isPySpace(t.charCodeAt(j))) j++;
      if (j - i > 1 || c !== 32) {
        out += `${t.slice(seg, i)} `;
        seg = j;
      }
      i = j;
    } else i++;
  }
  return seg === 0 ? t : out + t.slice(seg);
}

/** The reference's `normalize_text`: lower, strip, drop `*` and backticks, collapse whitespace, rstrip ".,;:!?". */
export function normalizeText(raw: string): string {
  let t = pyStrip(pyLower(raw));
  if (t.indexOf('*') >= 0 || t.indexOf('`') >= 0) t = t.replace(STARS, '');
  t = collapseSpace(t);
  let end = t.length;
  while (end > 0) {
    const c = t.charCodeAt(end - 1);
    if (c === 46 || c === 44 || c === 59 || c === 58 || c === 33 || c === 63) end--;
    else break;
  }
  return end === t.length ? t : t.slice(0, end);
}

/** The reference's `_extract_last_line`: last non-empty line of `text.strip().splitlines()`, stripped. */
export function extractLastLine(text: string): string | null {
  const t = pyStrip(text);
  let end = t.length;
  while (end > 0) {
    let start = end;
    while (start > 0 && !isLineBreak(t.charCodeAt(start - 1))) start--;
    const line = pyStrip(t.slice(start, end));
    if (line) return line;
    end = start - 1;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Whole-word search with Python's Unicode `\b`
// ---------------------------------------------------------------------------------------------

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}
function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** The code point that ends just before UTF-16 index `i` (> 0). */
function codePointBefore(s: string, i: number): number {
  const c = s.charCodeAt(i - 1);
  if (isLow(c) && i >= 2) {
    const h = s.charCodeAt(i - 2);
    if (isHigh(h)) return ((h - 0xd800) << 10) + (c - 0xdc00) + 0x10000;
  }
  return c;
}

/** Python string length (code points). */
function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 0; i + 1 < s.length; i++) {
    if (isHigh(s.charCodeAt(i)) && isLow(s.charCodeAt(i + 1))) {
      n--;
      i++;
    }
  }
  return n;
}

/** A string searched for as `re.search(r"\b" + re.escape(text) + r"\b", hay)`. */
export interface WordPattern {
  readonly text: string;
  readonly firstWord: boolean;
  readonly lastWord: boolean;
  /** The text starts with a low or ends with a high surrogate: a match must not split a pair. */
  readonly edgeSurrogate: boolean;
}

export function wordPattern(text: string): WordPattern {
  const n = text.length;
  return {
    text,
    firstWord: n > 0 && isPyWordChar(text.codePointAt(0)!),
    lastWord: n > 0 && isPyWordChar(codePointBefore(text, n)),
    edgeSurrogate: n > 0 && (isLow(text.charCodeAt(0)) || isHigh(text.charCodeAt(n - 1))),
  };
}

/** `\b\b`: is there any word boundary in `hay`? */
function hasBoundary(hay: string): boolean {
  let prev = false;
  for (const ch of hay) {
    const w = isPyWordChar(ch.codePointAt(0)!);
    if (w !== prev) return true;
    prev = w;
  }
  return prev;
}

/** Python `re.search(r"\b" + re.escape(p.text) + r"\b", hay) is not None`. */
export function searchWord(hay: string, p: WordPattern): boolean {
  const t = p.text;
  const len = t.length;
  if (len === 0) return hasBoundary(hay);
  const hn = hay.length;
  let i = hay.indexOf(t);
  while (i >= 0) {
    const end = i + len;
    const before = i > 0 && isPyWordChar(codePointBefore(hay, i));
    const after = end < hn && isPyWordChar(hay.codePointAt(end)!);
    if (before !== p.firstWord && after !== p.lastWord) {
      if (
        !p.edgeSurrogate ||
        !((i > 0 && isHigh(hay.charCodeAt(i - 1)) && isLow(hay.charCodeAt(i))) ||
          (end < hn && isHigh(hay.charCodeAt(end - 1)) && isLow(hay.charCodeAt(end))))
      ) {
        return true;
      }
    }
    i = hay.indexOf(t, i + 1);
  }
  return false;
}

/** The reference's `normalize_numeric`: `f"{float(v):g}"`, or `v` unchanged if it is not a number. */
export function normalizeNumeric(value: string): string {
  const f = pyFloat(value);
  return f === null ? value : pyFormatG(f);
}

/** The reference's `_parse_numeric`: the first `-?\d+(?:\.\d+)?` (Unicode digits), normalised. */
export function parseNumeric(text: string): string | null {
  const n = text.length;
  let start = -1;
  let j = 0;
  for (let i = 0; i < n; ) {
    const cp = text.codePointAt(i)!;
    const w = cp > 0xffff ? 2 : 1;
    if (cp === 45 && i + 1 < n && isPyDigit(text.codePointAt(i + 1)!)) {
      start = i;
      j = i + 1;
      break;
    }
    if (isPyDigit(cp)) {
      start = i;
      j = i;
      break;
    }
    i += w;
  }
  if (start < 0) return null;
  j = skipDigits(text, j);
  if (j < n && text.charCodeAt(j) === 46 && j + 1 < n && isPyDigit(text.codePointAt(j + 1)!)) {
    j = skipDigits(text, j + 1);
  }
  return normalizeNumeric(text.slice(start, j));
}

function skipDigits(s: string, i: number): number {
  while (i < s.length) {
    const cp = s.codePointAt(i)!;
    if (!isPyDigit(cp)) break;
    i += cp > 0xffff ? 2 : 1;
  }
  return i;
}

// ---------------------------------------------------------------------------------------------
// The cascade
// ---------------------------------------------------------------------------------------------

interface Variant extends WordPattern {
  readonly choice: number;
}

/**
 * The parsing cascade compiled for one question's choices: exact and `_`↔space lookups become
 * hash maps, and the whole-word search order (longest choice first, each with its `_`→space
 * variant) is fixed once.
 */
export class AnswerParser {
  readonly choices: readonly string[] | null;
  readonly numeric: boolean;
  private readonly exact = new Map<string, number>();
  private readonly equiv = new Map<string, number>();
  private readonly variants: Variant[] = [];
  /** Choices that normalise to themselves: an answer equal to one needs no normalisation. */
  private readonly identity = new Map<string, number>();
  /** Longest key of `exact` / `equiv` (UTF-16 units): longer normalised texts skip both lookups. */
  private readonly maxKey: number = -1;

  constructor(choices: readonly string[] | null, answerType: string) {
    this.choices = choices ? [...choices] : null;
    this.numeric = answerType === 'numeric';
    const cs = this.choices;
    if (!cs) return;
    cs.forEach((c, i) => {
      if (!this.exact.has(c)) this.exact.set(c, i);
    });
    cs.forEach((c, i) => {
      if (c.includes('_')) {
        const v = c.replaceAll('_', ' ');
        if (!this.equiv.has(v)) this.equiv.set(v, i);
      }
      if (c.includes(' ')) {
        const v = c.replaceAll(' ', '_');
        if (!this.equiv.has(v)) this.equiv.set(v, i);
      }
    });
    for (const [c, i] of this.exact) if (normalizeText(c) === c) this.identity.set(c, i);
    for (const k of [...this.exact.keys(), ...this.equiv.keys()]) this.maxKey = Math.max(this.maxKey, k.length);
    const order = cs.map((c, i) => ({ i, len: codePointLength(c) }));
    order.sort((a, b) => b.len - a.len); // stable: equal lengths keep their order (Python's reverse sort too)
    for (const { i } of order) {
      const c = cs[i];
      this.variants.push({ ...wordPattern(c), choice: i });
      if (c.includes('_')) this.variants.push({ ...wordPattern(c.replaceAll('_', ' ')), choice: i });
    }
  }

  /** The reference's `parse_answer` for this question: a canonical label or null. */
  parse(modelAnswer: unknown): string | null {
    if (typeof modelAnswer !== 'string' || isPyBlank(modelAnswer)) return null;
    if (this.numeric) return parseNumeric(modelAnswer);
    if (this.choices === null) return null;
    const k = this.matchIndex(modelAnswer);
    return k < 0 ? null : this.choices[k];
  }

  /**
   * Index in `choices` of the label the cascade picks, or -1. `answer` must be a non-blank string
   * and the question a choice question (the hot path of `evaluate`).
   */
  matchIndex(answer: string): number {
    let k = answer.length <= this.maxKey ? this.identity.get(answer) : undefined;
    if (k !== undefined) return k;
    const norm = normalizeText(answer);
    if (norm.length <= this.maxKey) {
      k = this.exact.get(norm);
      if (k !== undefined) return k;
      k = this.equiv.get(norm);
      if (k !== undefined) return k;
    }
    // One line: the last line normalises to `norm` itself, so steps 3 and 4 are one search.
    if (!HAS_LINE_BREAK.test(answer)) return this.substring(norm);
    const last = extractLastLine(answer);
    if (last !== null) {
      const lastNorm = normalizeText(last);
      if (lastNorm === norm) return this.substring(norm);
      if (lastNorm.length <= this.maxKey) {
        k = this.exact.get(lastNorm);
        if (k !== undefined) return k;
        k = this.equiv.get(lastNorm);
        if (k !== undefined) return k;
      }
      const m = this.substring(lastNorm);
      if (m >= 0) return m;
    }
    return this.substring(norm);
  }

  /** The reference's `_substring_match`: first choice (longest first) found as a whole word. */
  private substring(norm: string): number {
    const vs = this.variants;
    for (let i = 0; i < vs.length; i++) if (searchWord(norm, vs[i])) return vs[i].choice;
    return -1;
  }
}

const parserCache = new WeakMap<readonly string[], AnswerParser>();
const numericParser = new AnswerParser(null, 'numeric');
const noChoiceParser = new AnswerParser(null, 'multiclass');

/** The parser for a choice list, cached per array (do not mutate a list after parsing with it). */
export function parserFor(choices: readonly string[] | null, answerType: string): AnswerParser {
  if (answerType === 'numeric') return numericParser;
  if (choices === null) return noChoiceParser;
  let p = parserCache.get(choices);
  if (!p) {
    p = new AnswerParser(choices, answerType);
    parserCache.set(choices, p);
  }
  return p;
}

/**
 * The reference's `parse_answer(model_answer, choices, answer_type)`: the canonical label the
 * model's free text maps to, or null when unparsable. Non-string answers give null.
 */
export function parseAnswer(modelAnswer: unknown, choices: readonly string[] | null, answerType: string): string | null {
  return parserFor(choices, answerType).parse(modelAnswer);
}
