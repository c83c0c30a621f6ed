/** Runs the CLI in-process (`main` from src/cli/main.ts) and captures stdout, stderr and the exit code. */
import { vi } from 'vitest';
import { main } from '../../src/cli/main.js';

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

export async function cli(...args: string[]): Promise<CliResult> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
  // A command reports failure through process.exitCode: each call starts from none and leaves none.
  process.exitCode = undefined;
  try {
    return { code: await main(['node', 'egogeo', ...args]), out, err };
  } finally {
    process.exitCode = undefined;
    o.mockRestore();
    e.mockRestore();
  }
}
