/**
 * The answer-parsing cascade on hand-written cases (no ../shared needed): the reference's own
 * parser tests, plus the Python-vs-JavaScript string pitfalls the port must get right.
 */
import { describe, expect, it } from 'vitest';
import {
  AnswerParser,
  extractLastLine,
  isPyWordChar,
  normalizeNumeric,
  normalizeText,
  parseAnswer,
  parseAnswerFor,
  pyFloat,
  pyFloatRepr,
  pyFormatG,
  pyLower,
  pyStr,
  pyStrip,
  searchWord,
  wordPattern,
} from '../../src/grade/index.js';
import { loadQuestions } from '../../src/oracle/questions.js';

const YN = ['yes', 'no'];
const TURN = ['left', 'right', 'straight'];
const HALF = ['first_half', 'second_half', 'no_peak'];

describe('normalizeText (reference normalize_text)', () => {
  it('lower-cases, strips, collapses whitespace and strips trailing punctuation', () => {
    expect(normalizeText('  Hello World  ')).toBe('hello world');
    expect(normalizeText('a   b\t\nc')).toBe('a b c');
    expect(normalizeText('yes.')).toBe('yes');
    expect(normalizeText('No!')).toBe('no');
    expect(normalizeText('smooth;')).toBe('smooth');
    expect(normalizeText('')).toBe('');
    expect(normalizeText('**Left**')).toBe('left');
    expect(normalizeText('`no`?!')).toBe('no');
  });

  it('does not strip again after removing markdown (as the reference)', () => {
    expect(normalizeText('** yes **')).toBe(' yes ');
  });

  it("uses Python's whitespace set, not JavaScript's", () => {
    // \x1c-\x1f and \x85 are whitespace to Python (JS trim keeps them) ...
    expect(normalizeText('\x1f No. \x85')).toBe('no');
    expect(pyStrip('\x1c\x1dyes\x1e\x1f')).toBe('yes');
    expect(normalizeText('a\x1c\x85b')).toBe('a b');
    // ... and U+FEFF is not (JS trim strips it).
    expect(normalizeText('\ufeffyes')).toBe('\ufeffyes');
    expect(pyStrip('\ufeff')).toBe('\ufeff');
    expect(normalizeText('\u2003yes\u3000')).toBe('yes');
  });

  it("lower-cases as Python's str.lower", () => {
    expect(pyLower('ΑΣ')).toBe('ας'); // final sigma
    expect(pyLower('İ')).toBe('i\u0307');
    // Letters added after Unicode 14 (Python 3.11) stay as they are.
    expect(pyLower('\u{a7cb}')).toBe('\u{a7cb}');
    expect(pyLower('A\u{10d50}B')).toBe('a\u{10d50}b');
  });
});

describe('extractLastLine (str.strip().splitlines())', () => {
  it('returns the last non-empty stripped line', () => {
    expect(extractLastLine('a\nb\n\n  \n')).toBe('b');
    expect(extractLastLine('one\r\ntwo\r\n')).toBe('two');
    expect(extractLastLine('   ')).toBeNull();
  });
  it("splits on all of Python's line boundaries", () => {
    for (const sep of ['\n', '\r', '\v', '\f', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029']) {
      expect(extractLastLine(`yes${sep}no`)).toBe('no');
    }
    expect(extractLastLine('yes\x1fno')).toBe('yes\x1fno'); // \x1f is whitespace but not a line break
  });
});

describe('word boundaries (Python re \\b, Unicode-aware)', () => {
  it('treats Unicode letters and digits as word characters', () => {
    expect(isPyWordChar('é'.codePointAt(0)!)).toBe(true);
    expect(isPyWordChar('_'.codePointAt(0)!)).toBe(true);
    expect(isPyWordChar('٣'.codePointAt(0)!)).toBe(true);
    expect(isPyWordChar('𝐚'.codePointAt(0)!)).toBe(true);
    expect(isPyWordChar('\u0301'.codePointAt(0)!)).toBe(false); // combining mark: not \w in Python
    expect(isPyWordChar('-'.codePointAt(0)!)).toBe(false);
  });
  it('does not match a choice inside a longer Unicode word', () => {
    expect(parseAnswer('noé', YN, 'binary')).toBeNull();
    expect(parseAnswer('éno', YN, 'binary')).toBeNull();
    expect(parseAnswer('I said noé twice', YN, 'binary')).toBeNull();
    expect(parseAnswer('𝐚no', YN, 'binary')).toBeNull();
    expect(parseAnswer('no\u0301', YN, 'binary')).toBe('no'); // a combining mark is a boundary
    expect(parseAnswer('answer: no-é', YN, 'binary')).toBe('no');
  });
  it('needs a word character before a choice that starts with a non-word character', () => {
    expect(searchWord('x -1 y', wordPattern('-1'))).toBe(false);
    expect(searchWord('x-1 y', wordPattern('-1'))).toBe(true);
    expect(searchWord('', wordPattern(''))).toBe(false);
    expect(searchWord('a', wordPattern(''))).toBe(true);
  });
  it('never matches "no" inside "cannot"', () => {
    expect(parseAnswer('I cannot determine this from the video.', YN, 'binary')).toBeNull();
  });
});

describe('parseAnswer cascade (reference parse_answer)', () => {
  it('maps exact, case-insensitive and punctuated answers', () => {
    expect(parseAnswer('yes', YN, 'binary')).toBe('yes');
    expect(parseAnswer('YES', YN, 'binary')).toBe('yes');
    expect(parseAnswer('No.', YN, 'binary')).toBe('no');
    expect(parseAnswer('Yes, the vehicle brakes hard during the clip.', YN, 'binary')).toBe('yes');
    expect(parseAnswer('No, there is no hard braking event visible.', YN, 'binary')).toBe('no');
  });
  it('returns null for empty, whitespace-only or non-string answers', () => {
    expect(parseAnswer('', YN, 'binary')).toBeNull();
    expect(parseAnswer('   ', YN, 'binary')).toBeNull();
    expect(parseAnswer('\x1c\x85', YN, 'binary')).toBeNull();
    expect(parseAnswer(null, YN, 'binary')).toBeNull();
    expect(parseAnswer(42, YN, 'binary')).toBeNull();
    expect(parseAnswer('yes', null, 'multiclass')).toBeNull();
  });
  it('matches choices with underscores or spaces either way', () => {
    expect(parseAnswer('first half', HALF, 'multiclass')).toBe('first_half');
    expect(parseAnswer('Second Half.', HALF, 'multiclass')).toBe('second_half');
    expect(parseAnswer('first_half', HALF, 'multiclass')).toBe('first_half');
    expect(parseAnswer('a_b', ['a b', 'c'], 'multiclass')).toBe('a b');
    expect(parseAnswer('There is no peak, the speed is constant.', HALF, 'multiclass')).toBe('no_peak');
  });
  it('prefers the last line over the full text', () => {
    // Full-text search would find "right" (longer choices first); the last line says "left".
    expect(parseAnswer('Right at the start it looked like a turn.\nleft', TURN, 'multiclass')).toBe('left');
    expect(parseAnswer('Looking at the frames carefully.\nThe vehicle seems fine.\nno', YN, 'binary')).toBe('no');
    expect(parseAnswer('The car turned right.\nFinal answer: **straight**', TURN, 'multiclass')).toBe('straight');
    // \x85 is a line break to Python: the last line is "no".
    expect(parseAnswer('yes\x85no', YN, 'binary')).toBe('no');
    // No choice on the last line: fall back to the full text.
    expect(parseAnswer('It goes left.\nI am fairly sure.', TURN, 'multiclass')).toBe('left');
  });
  it('searches longest choices first, each with its "_"→space variant', () => {
    expect(parseAnswer('yes or maybe no', YN, 'binary')).toBe('yes');
    expect(parseAnswer('stopped or maybe highway', ['stopped', 'slow', 'urban', 'highway'], 'multiclass')).toBe('stopped');
    expect(parseAnswer('the first half and the second half', HALF, 'multiclass')).toBe('second_half');
  });
  it('keeps the first of duplicate choices', () => {
    const p = new AnswerParser(['yes', 'yes', 'no'], 'binary');
    expect(p.matchIndex('yes')).toBe(0);
    expect(p.parse('Yes!')).toBe('yes');
  });
  it('parses with a loaded question', () => {
    const q = loadQuestions().byId.get('speed_peak_half')!;
    expect(parseAnswerFor(q, 'The peak is in the First Half.')).toBe('first_half');
  });
});

describe('numeric answers', () => {
  it("takes the first number, formatted as Python's f\"{float(v):g}\"", () => {
    expect(parseAnswer('42.5', null, 'numeric')).toBe('42.5');
    expect(parseAnswer('The maximum speed is 65.3 km/h.', null, 'numeric')).toBe('65.3');
    expect(parseAnswer('-3.5 m/s²', null, 'numeric')).toBe('-3.5');
    expect(parseAnswer('42.0', null, 'numeric')).toBe('42');
    expect(parseAnswer('3.50 m/s', null, 'numeric')).toBe('3.5');
    expect(parseAnswer('I cannot determine the speed.', null, 'numeric')).toBeNull();
    expect(parseAnswer('about ٣٤ km/h', null, 'numeric')).toBe('34'); // \d matches any Unicode digit
    expect(parseAnswer('v = 1234567', null, 'numeric')).toBe('1.23457e+06');
    expect(parseAnswer('x-7.', null, 'numeric')).toBe('-7');
    expect(parseAnswer('0.0000123', null, 'numeric')).toBe('1.23e-05');
  });
  it('normalizeNumeric follows Python float() and :g', () => {
    expect(normalizeNumeric('42')).toBe('42');
    expect(normalizeNumeric('3.500')).toBe('3.5');
    expect(normalizeNumeric('-5.0')).toBe('-5');
    expect(normalizeNumeric('0.0')).toBe('0');
    expect(normalizeNumeric('-0')).toBe('-0');
    expect(normalizeNumeric('hello')).toBe('hello');
    expect(normalizeNumeric('1_000')).toBe('1000');
    expect(normalizeNumeric('1__0')).toBe('1__0');
    expect(normalizeNumeric('1e999')).toBe('inf');
    expect(normalizeNumeric('NaN')).toBe('nan');
    expect(normalizeNumeric('١٢.٥')).toBe('12.5');
    expect(normalizeNumeric('100000')).toBe('100000');
    expect(normalizeNumeric('1000000')).toBe('1e+06');
    // :g rounds half to even on the exact binary value (1234565 is exact: a tie).
    expect(pyFormatG(1234565)).toBe('1.23456e+06');
    expect(pyFormatG(1234575)).toBe('1.23458e+06');
    expect(pyFormatG(0.000123456789)).toBe('0.000123457');
    expect(pyFloat('.5')).toBe(0.5);
    expect(pyFloat('1.')).toBe(1);
    expect(pyFloat('.')).toBeNull();
    expect(pyFloat('0x10')).toBeNull();
  });
  it("writes floats and values as Python's repr/str", () => {
    expect(pyFloatRepr(1)).toBe('1.0');
    expect(pyFloatRepr(1e16)).toBe('1e+16');
    expect(pyFloatRepr(1e15)).toBe('1000000000000000.0');
    expect(pyFloatRepr(0.0001)).toBe('0.0001');
    expect(pyFloatRepr(0.00001)).toBe('1e-05');
    expect(pyFloatRepr(-0)).toBe('-0.0');
    expect(pyStr(true)).toBe('True');
    expect(pyStr(5)).toBe('5');
    expect(pyStr(2.5)).toBe('2.5');
    expect(pyStr(['a', 1])).toBe("['a', 1]");
  });
});
