/**
 * Options are parsed once, at the CLI's edge (issue 52): below src/cli/ nothing parses a flag
 * string. The flags are every long option the commands declare (read from commander, so a new
 * flag is covered by itself); the library's modules are scanned for the shapes flag parsing takes.
 * Each detector is first shown to find the parsers that lived below cli/ before (kept here as
 * they were), so a check that silently matches nothing would fail.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';

const SRC = join(import.meta.dirname, '../../src');

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Code without comments (block comments, whole-line and trailing `// …`), line numbers kept. */
function code(text: string): string[] {
  const noBlocks = text.replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' '));
  return noBlocks.split('\n').map((l) => l.replace(/(^|\s)\/\/\s.*$/, ''));
}

function longOptions(cmd: Command): string[] {
  return [...cmd.options.map((o) => o.long).filter((l): l is string => !!l), ...cmd.commands.flatMap(longOptions)];
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What flag parsing looks like; each finding is `why: line`. */
function detectors(flags: readonly string[], cliFunctions: readonly string[]) {
  const flag = new RegExp(`(?:${flags.map(esc).join('|')})(?![\\w-])`);
  return [
    // A message quoting the raw value it could not read ("--shard must be i/n, got '${s}'"): a string was parsed.
    { why: 'a flag named with the raw string it was given', test: (l: string) => flag.test(l) && /got '\$\{/.test(l) },
    // An option object's string split into a list, or read as a number.
    { why: 'an option string split', test: (l: string) => /\b(?:o|opts|options|flags|args)\.\w+\??\.split\(/.test(l) },
    { why: 'an option string read as a number', test: (l: string) => /\b(?:Number|parseInt|parseFloat)\(\s*(?:o|opts|options|flags|args)\.\w+/.test(l) },
    // A second definition of one of the edge's parsers.
    { why: "a parser cli/options.ts defines", test: (l: string) => cliFunctions.some((f) => new RegExp(`\\bfunction ${f}\\b`).test(l)) },
    // The command line itself.
    { why: 'the command line read', test: (l: string) => /process\.argv|from 'commander'/.test(l) },
  ];
}

function findings(text: string, ds: ReturnType<typeof detectors>): string[] {
  return code(text).flatMap((l, i) => ds.filter((d) => d.test(l)).map((d) => `${d.why}: line ${i + 1}: ${l.trim().slice(0, 120)}`));
}

/** Parsers as they were below cli/ before issue 52 (run/run.ts, datasets/published.ts, io/safety.ts, queue/, audit/load.ts). */
const BEFORE = {
  'run/run.ts': "export function parseShard(s: string): Shard {\n  if (!m) throw new InputError(`--shard must be i/n (e.g. 0/4), got '${s}'`);",
  'datasets/published.ts': "export function parseCarlaDomain(s: string): CarlaDomain {\n  if (!(CARLA_DOMAINS as readonly string[]).includes(s)) throw new InputError(`--carla-domain must be ${CARLA_DOMAINS.join(' or ')}, got '${s}'`);",
  'io/safety.ts': 'export function parseWorkers(s: string, flag = \'--workers\'): number {',
  'queue/connection.ts': "  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new InputError(`--queue must be a redis:// or rediss:// URL, got '${url}'`);",
  'audit/load.ts': "export function loadAuditClips(opts: { clips: string }) {\n  const paths = opts.clips.split(',').map((s) => s.trim());",
  'synth/x.ts': 'const n = parseInt(opts.clips, 10);',
  'x/argv.ts': 'const args = process.argv.slice(2);',
};

describe('nothing below src/cli/ parses a flag string', () => {
  let ds: ReturnType<typeof detectors>;
  let flags: string[];
  beforeAll(async () => {
    flags = [...new Set(longOptions(await buildProgram()))];
    const cliFunctions = [...readFileSync(join(SRC, 'cli/options.ts'), 'utf8').matchAll(/export function (\w+)/g)].map((m) => m[1]);
    ds = detectors(flags, cliFunctions);
  });

  it('the flags are every command\'s (read from commander)', () => {
    for (const f of ['--shard', '--carla-domain', '--workers', '--queue', '--path-map', '--frames', '--limit', '--device', '--threshold-scale', '--openai-model']) expect(flags).toContain(f);
  });

  it('each detector finds the parsers that lived below cli/ before', () => {
    for (const [file, text] of Object.entries(BEFORE)) expect(findings(text, ds), file).not.toEqual([]);
    // …and not the comments that name them, nor a library check of a typed value.
    expect(findings("/** `--shard i/n` parsed at got '${s}' */\n// --queue got '${x}'\nif (n < 1) throw new InputError(`--clips must be a positive integer, got ${n}`);", ds)).toEqual([]);
  });

  it('src/ outside cli/ has none of them', () => {
    const found = walk(SRC)
      .filter((f) => !relative(SRC, f).startsWith('cli/'))
      .flatMap((f) => findings(readFileSync(f, 'utf8'), ds).map((x) => `${relative(SRC, f)}: ${x}`));
    expect(found).toEqual([]);
  });
});
