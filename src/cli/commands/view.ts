/**
 * `egogeo view --dataset DIR [--predictions preds.jsonl …]`: a local web page over a dataset's
 * clips — list with filters, frames with the engine's tracks and inliers, trajectories, dynamics,
 * the QA table (src/view/). Serves until interrupted.
 */
import type { Command } from 'commander';
import { NEAR_THRESHOLD } from '../../report/margins.js';
import { InputError } from '../../core/errors.js';
import { parseCarlaDomain, parseLimit } from '../options.js';
import { startViewServer } from '../../view/server.js';

interface Opts {
  dataset: string;
  nuscenesRoot?: string;
  carlaDomain?: string;
  cameras?: string;
  limit?: string;
  predictions?: string[];
  port: string;
  host: string;
  near: string;
}

export function registerView(program: Command): void {
  program
    .command('view')
    .description("browse a dataset's clips in the browser: frames with the engine's tracked features and inliers, trajectories, dynamics against the oracle's thresholds, the questions per predictions file")
    .requiredOption('--dataset <dir>', 'any layout egogeo run reads: EgoDyn-Bench as published, a benchmark-layout folder, or a KITTI sequence')
    .option('--nuscenes-root <dir>', "published layout: the nuScenes data root (without it nuScenes clips are listed but have no frames)")
    .option('--carla-domain <domain>', "published layout: the CARLA videos to show, 'simulation' or 'transferred'", 'simulation')
    .option('--cameras <json>', 'per-source cameras over what the dataset says (as egogeo run)')
    .option('--limit <n>', 'only the first n clips')
    .option('--predictions <file...>', 'predictions JSONL files (egogeo run -o; their .trajectories/ folders give the estimates)')
    .option('--port <n>', 'port (0: any free one)', '8421')
    .option('--host <host>', 'address to bind (default loopback only)', '127.0.0.1')
    .option('--near <fraction>', 'a disagreement within this relative distance of the threshold is near-threshold (as egogeo report)', String(NEAR_THRESHOLD))
    .action(async (o: Opts) => {
      const port = Number(o.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InputError(`--port must be an integer 0..65535, got '${o.port}'`);
      const near = Number(o.near);
      if (!(near >= 0) || !Number.isFinite(near)) throw new InputError(`--near must be a non-negative fraction, got '${o.near}'`);
      let v;
      try {
        v = await startViewServer({
          dataset: o.dataset,
          nuscenesRoot: o.nuscenesRoot,
          carlaDomain: parseCarlaDomain(o.carlaDomain ?? 'simulation'),
          cameras: o.cameras,
          limit: parseLimit(o.limit),
          predictions: o.predictions,
          port,
          host: o.host,
          near,
        });
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        if (err.code === 'EADDRINUSE') throw new InputError(`--port ${port}: address ${o.host}:${port} is in use (give another --port, or 0 for any free one)`);
        if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') throw new InputError(`--host ${o.host}: cannot bind this address (${err.code})`);
        throw e;
      }
      process.stderr.write(`egogeo view: ${v.data.clips.length} clips from ${v.data.root}${v.data.runs.length ? `, ${v.data.runs.length} predictions file(s)` : ''}\n`);
      process.stdout.write(`${v.url}\n`);
      // The first SIGINT/SIGTERM stops the server (connections closed); a second one, or a close that
      // has not finished within 2 s, ends the process at once: a signal always stops the viewer.
      await new Promise<void>((done) => {
        let stopping = false;
        const onSignal = (sig: NodeJS.Signals) => {
          if (stopping) process.exit(sig === 'SIGTERM' ? 143 : 130);
          stopping = true;
          setTimeout(() => process.exit(0), 2000).unref();
          void v.close().then(done);
        };
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
      });
    });
}
