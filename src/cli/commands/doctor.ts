/** `egogeo doctor`: what is installed and working, with the fix for anything missing (exit 1 when a required check fails). */
import type { Command } from 'commander';
import { formatChecks, runChecks } from '../../doctor/index.js';

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check the installation: Node, OpenCV, the native addon, video decoding, @u4/opencv4nodejs, CUDA, ../shared (exit 1 when a required check fails)')
    .option('--json', 'print the checks as JSON')
    .action((o: { json?: boolean }) => {
      const checks = runChecks();
      const { text, ok } = formatChecks(checks);
      process.stdout.write(o.json ? `${JSON.stringify({ ok, checks }, null, 2)}\n` : text);
      if (!ok) process.exitCode = 1;
    });
}
