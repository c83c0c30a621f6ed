/**
 * cli/ — thin commands over the library: each file in commands/ parses its own options, calls
 * src/, and formats output. Errors from bad input become one line on stderr and exit code 1.
 */
import { Command, CommanderError } from 'commander';
import { InputError } from '../core/trajectory.js';
import { errnoText, isErrnoError } from '../io/safety.js';
import { registerOracle } from './commands/oracle.js';
import { registerGrade } from './commands/grade.js';
import { registerCalibrate } from './commands/calibrate.js';
import { registerSensitivity } from './commands/sensitivity.js';
import { registerBaseline } from './commands/baseline.js';
import { registerRun } from './commands/run.js';
import { registerMerge } from './commands/merge.js';
import { registerReport } from './commands/report.js';
import { registerSynth } from './commands/synth.js';
import { registerDemo } from './commands/demo.js';
import { registerDoctor } from './commands/doctor.js';
import { registerAudit } from './commands/audit.js';
import { registerEgogears } from './commands/egogears.js';
import { registerView } from './commands/view.js';
import { registerWorker } from './commands/worker.js';

export function buildProgram(): Command {
  const program = new Command('egogeo')
    .description('Geometric baseline engine for ego-motion benchmarks (EgoDyn-Bench oracle, grader, visual odometry)')
    .exitOverride()
    .configureOutput({ outputError: (s, write) => write(s) });
  registerOracle(program);
  registerGrade(program);
  registerCalibrate(program);
  registerSensitivity(program);
  registerBaseline(program);
  registerRun(program);
  registerMerge(program);
  registerReport(program);
  registerSynth(program);
  registerDemo(program);
  registerDoctor(program);
  registerAudit(program);
  registerEgogears(program);
  registerView(program);
  registerWorker(program);
  return program;
}

/** Runs the CLI; returns the exit code instead of exiting so tests can call it in-process. */
export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode;
    if (e instanceof InputError) {
      process.stderr.write(`egogeo: ${e.message}\n`);
      return 1;
    }
    // A file-system failure (full disk, read-only, permissions) is one line naming the path.
    if (isErrnoError(e)) {
      process.stderr.write(`egogeo: ${e.path ?? e.syscall}: ${e.syscall === 'open' || e.syscall === 'read' || e.syscall === 'scandir' || e.syscall === 'stat' ? 'cannot read' : 'cannot write'} (${errnoText(e)})\n`);
      return 1;
    }
    // The same, passed through a worker thread (only the message survives).
    const m = /^(E[A-Z]+): ([^,]+), (\w+)(?: '(.*)')?/.exec((e as Error)?.message ?? '');
    if (m) {
      process.stderr.write(`egogeo: ${m[4] ?? m[3]}: ${m[3] === 'open' && m[1] === 'ENOENT' ? 'cannot read' : 'cannot write'} (${m[1]}: ${m[2]})\n`);
      return 1;
    }
    // Anything else is a bug: one line (the stack only with EGOGEO_DEBUG=1).
    process.stderr.write(process.env.EGOGEO_DEBUG ? `egogeo: ${(e as Error).stack ?? e}\n` : `egogeo: internal error: ${errnoText(e)} (EGOGEO_DEBUG=1 shows the stack)\n`);
    return 2;
  }
}
