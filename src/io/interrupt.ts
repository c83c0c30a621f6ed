/**
 * What an interrupted command leaves behind, in one place: a command registers the cleanup of what
 * it has half written (a staging folder, side files without their output, its lock) while it is
 * at risk, and the first SIGINT or SIGTERM runs every registered cleanup, newest first, then lets the
 * signal do what it would have done (exit status 128 + signal, as a shell reports it). With nothing
 * registered, no listener is installed and signals keep their default action. `egogeo run` has its
 * own two-step listener (finish the clips in flight, then stop): see src/run/run.ts.
 *
 * Also here: the pid test used to tell a killed command's leftovers (SIGKILL runs no cleanup) from a
 * running one's, so the next run can remove them.
 */

const cleanups = new Set<() => void>();

function onSignal(sig: NodeJS.Signals): void {
  for (const c of [...cleanups].reverse()) {
    try {
      c();
    } catch {
      /* the next cleanup still runs */
    }
  }
  cleanups.clear();
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  process.kill(process.pid, sig);
}

/** Runs `cleanup` if the process is interrupted before the returned function is called. */
export function onInterrupt(cleanup: () => void): () => void {
  if (cleanups.size === 0) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  cleanups.add(cleanup);
  return () => {
    if (!cleanups.delete(cleanup) || cleanups.size > 0) return;
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}

/** Whether a process with this pid runs on this machine (EPERM: it does, as another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
