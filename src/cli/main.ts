/**
 * cli/ — thin commands over the library: each file in commands/ parses its own options, calls
 * src/, and formats output. Errors from bad input become one line on stderr and exit code 1.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { InputError } from '../core/errors.js';
import { errnoText, isErrnoError } from '../io/safety.js';
type Register = (program: Command) => void;

/**
 * Every command, by name, loaded on demand: a run imports only its own command's modules (each
 * command pulls in its own part of the library; all of them together took ~80 ms more at every
 * start). Help, an unknown name or no name loads them all.
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  oracle: async () => (await import('./commands/oracle.js')).registerOracle,
  grade: async () => (await import('./commands/grade.js')).registerGrade,
  calibrate: async () => (await import('./commands/calibrate.js')).registerCalibrate,
  sensitivity: async () => (await import('./commands/sensitivity.js')).registerSensitivity,
  baseline: async () => (await import('./commands/baseline.js')).registerBaseline,
  run: async () => (await import('./commands/run.js')).registerRun,
  merge: async () => (await import('./commands/merge.js')).registerMerge,
  report: async () => (await import('./commands/report.js')).registerReport,
  synth: async () => (await import('./commands/synth.js')).registerSynth,
  demo: async () => (await import('./commands/demo.js')).registerDemo,
  doctor: async () => (await import('./commands/doctor.js')).registerDoctor,
  audit: async () => (await import('./commands/audit.js')).registerAudit,
  egogears: async () => (await import('./commands/egogears.js')).registerEgogears,
  view: async () => (await import('./commands/view.js')).registerView,
  prompts: async () => (await import('./commands/prompts.js')).registerPrompts,
  answers: async () => (await import('./commands/answers.js')).registerAnswers,
  validate: async () => (await import('./commands/validate.js')).registerValidate,
  worker: async () => (await import('./commands/worker.js')).registerWorker,
  bench: async () => (await import('./commands/bench.js')).registerBench,
};

/** egogeo's package version (package.json beside dist/ and src/). */
function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** The CLI with every command (`only`: just that one, when it names a command). */
export async function buildProgram(only?: string): Promise<Command> {
  const program = new Command('egogeo')
    .description('Geometric baseline engine for ego-motion benchmarks (EgoDyn-Bench oracle, grader, visual odometry)')
    .version(packageVersion(), '-V, --version', "egogeo's version (the package's; `egogeo doctor` names the addon build too)")
    .exitOverride()
    .configureOutput({ outputError: (s, write) => write(s) });
  const names = only !== undefined && Object.hasOwn(COMMANDS, only) ? [only] : Object.keys(COMMANDS);
  for (const register of await Promise.all(names.map((n) => COMMANDS[n]()))) register(program);
  return program;
}

/** Runs the CLI; returns the exit code instead of exiting so tests can call it in-process. */
/**
 * For the `egogeo` process (bin/egogeo.js), once: standard output that cannot be written (a full
 * disk, /dev/full) is one line and exit 1; a reader that closed the pipe (`| head`) ends the command.
 */
export function guardStdout(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    process.stderr.write(`egogeo: standard output: cannot write (${errnoText(e)})\n`);
    process.exit(1);
  });
}

export async function main(argv: string[]): Promise<number> {
  try {
    // argv[2] is the command's name unless it is an option (--help, --version): then all commands.
    await (await buildProgram(argv[2])).parseAsync(argv);
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
    // Anything else is a bug: one line (the stack only with EGOGEO_DEBUG=1).
    process.stderr.write(process.env.EGOGEO_DEBUG ? `egogeo: ${(e as Error).stack ?? e}\n` : `egogeo: internal error: ${errnoText(e)} (EGOGEO_DEBUG=1 shows the stack)\n`);
    return 2;
  }
}
