/**
 * `egogeo bench`: a throughput figure for this machine — egogeo's default engine (the path `egogeo
 * run` takes: its engine defaults, its worker pool) and the published VO proxy computed natively,
 * over the same clips at each worker count, in one process (src/throughput/). Clips from any
 * layout `egogeo run --dataset` reads, or rendered here (`--synth N`, removed afterwards).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../core/errors.js';
import { parseCarlaDomain, parseFrames, parseWorkers } from '../options.js';
import { readDataset } from '../../datasets/benchmark.js';
import { writeFileAtomic } from '../../io/atomic.js';
import { guardOutputs } from '../../io/safety.js';
import { decideDevice } from '../../native/device.js';
import type { Device } from '../../native/index.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions, type QuestionSet } from '../../oracle/index.js';
import { defaultWorkers } from '../../pool/index.js';
import { svgToPng } from '../../report/svg.js';
import { synthesize } from '../../synth/index.js';
import { measureThroughput } from '../../throughput/bench.js';
import { formatThroughput, scalingPlot } from '../../throughput/format.js';
import { provenance } from '../../throughput/provenance.js';
import { engineRecord } from '../../vo/config.js';
import { intIn } from '../options.js';

interface Opts {
  dataset?: string;
  synth?: string;
  frames: string;
  workers?: string;
  device: string;
  json?: string;
  plot?: string;
  limit?: string;
  nuscenesRoot?: string;
  carlaDomain: string;
  cameras?: string;
  progress?: boolean;
}

/** The rendered set's seed and preset (fixed: the same clips on every machine). */
const SYNTH = { seed: 1, preset: 'mixed' } as const;

/** `--workers 1,2,4`: each a worker count as `run --workers` takes it; ascending, each once. */
export function parseWorkerList(s: string): number[] {
  const parts = s.split(',').map((p) => p.trim());
  if (parts.some((p) => p === '')) throw new InputError(`--workers must be a comma-separated list of worker counts (e.g. 1,2,4), got '${s}'`);
  return [...new Set(parts.map((p) => parseWorkers(p, '--workers')))].sort((a, b) => a - b);
}

/** `--device cpu,gpu`: each once, in the order given. */
export function parseDeviceList(s: string): Device[] {
  const parts = s.split(',').map((p) => p.trim());
  for (const p of parts) if (p !== 'cpu' && p !== 'gpu') throw new InputError(`--device must be a comma-separated list of cpu, gpu, got '${s}'`);
  return [...new Set(parts as Device[])];
}

export function registerBench(program: Command): void {
  program
    .command('bench')
    .description("this machine's throughput: egogeo's default engine and the published VO proxy (natively) over the same clips at each worker count; clips/s, frames/s, core-seconds per clip, the engine's stage times, the ratio between the two")
    .option('--dataset <dir>', 'clips from any layout `egogeo run --dataset` reads: EgoDyn-Bench as published, the benchmark layout, a KITTI sequence (its 31-frame windows)')
    .option('--synth <n>', `render n synthetic clips here instead (egogeo's renderer, seed ${SYNTH.seed}, CARLA- and nuScenes-like alternating, 31 frames each; a temporary folder, removed afterwards; rendering is not timed)`)
    .option('--frames <n>', "frames per clip the engine sees: an evenly spaced count (10: the published protocol) or 'all'; the proxy reads 10 with 'all', as the reference does", '10')
    .option('--workers <list>', `worker counts to measure, comma-separated (default: 1 and this machine's ${defaultWorkers()})`)
    .option('--device <list>', "where egogeo's engine tracks: cpu, gpu or cpu,gpu (gpu only where its self-check passes, else one line and it is skipped; the proxy always runs on the CPU)", 'cpu')
    .option('--limit <n>', 'only the first n clips of the dataset')
    .option('--json <file>', 'also write every figure as JSON, with the egogeo version, engine build, git commit, machine, Node and the configuration')
    .option('--plot <file>', 'draw the scaling curve (clips/s against workers, both methods, linear scaling from the fewest workers): SVG, or PNG when the name ends in .png')
    .option('--nuscenes-root <dir>', 'published layout: the nuScenes data root (as for egogeo run)')
    .option('--carla-domain <domain>', "published layout: 'simulation' or 'transferred' (as for egogeo run)", 'simulation')
    .option('--cameras <json>', 'per-source cameras over what the dataset says (as for egogeo run)')
    .option('--no-progress', 'no progress bars (default: shown on a terminal)')
    .action(async (o: Opts) => {
      // Every flag is checked before anything is read, rendered or measured.
      if ((o.dataset === undefined) === (o.synth === undefined)) throw new InputError('give one of --dataset DIR or --synth N');
      const synth = o.synth === undefined ? undefined : intIn('--synth', o.synth, 1, 10_000);
      const frames = parseFrames(o.frames);
      const workers = o.workers === undefined ? [...new Set([1, defaultWorkers()])] : parseWorkerList(o.workers);
      const wanted = parseDeviceList(o.device);
      const limit = o.limit === undefined ? undefined : intIn('--limit', o.limit, 1, 10_000_000);
      const carlaDomain = parseCarlaDomain(o.carlaDomain);
      if (o.plot !== undefined && !/\.(svg|png)$/i.test(o.plot)) throw new InputError(`--plot must name an .svg or .png file, got '${o.plot}'`);
      guardOutputs([o.json === undefined ? undefined : { path: o.json, flag: '--json' }, o.plot === undefined ? undefined : { path: o.plot, flag: '--plot' }], [o.dataset, o.cameras]);
      const log = (line: string) => process.stderr.write(`egogeo bench: ${line}\n`);
      const progress = o.progress === false ? false : undefined;

      const devices: Device[] = [];
      const skipped: { device: Device; reason: string }[] = [];
      for (const d of wanted) {
        if (d === 'cpu') devices.push(d);
        else {
          try {
            devices.push(decideDevice('gpu').device);
          } catch (e) {
            if (!(e instanceof InputError)) throw e;
            skipped.push({ device: d, reason: e.message });
          }
        }
      }
      // The GPU alone and unavailable: its reason is the error; beside the CPU, a note and the CPU's figures.
      if (devices.length === 0) throw new InputError(`${skipped[0].reason}; no other device to measure on`);
      for (const s of skipped) log(`${s.reason}; skipped`);

      const tmp = synth === undefined ? undefined : mkdtempSync(join(tmpdir(), 'egogeo-bench-'));
      let stopListening = () => {};
      try {
        let dir: string, questionSet: QuestionSet, input: string;
        if (synth !== undefined) {
          log(`rendering ${synth} synthetic clip${synth === 1 ? '' : 's'} (not timed)`);
          const s = await synthesize({ out: join(tmp!, 'data'), clips: synth, seed: SYNTH.seed, preset: SYNTH.preset, questionsPath: DEFAULT_QUESTIONS_PATH, progress });
          dir = s.dir;
          questionSet = s.questions;
          // Interrupted while measuring: remove the rendered clips, then let the signal do what it would have done.
          const onSignal = (sig: NodeJS.Signals) => {
            rmSync(tmp!, { recursive: true, force: true });
            process.kill(process.pid, sig);
          };
          process.once('SIGINT', onSignal);
          process.once('SIGTERM', onSignal);
          stopListening = () => {
            process.off('SIGINT', onSignal);
            process.off('SIGTERM', onSignal);
          };
          input = `${synth} synthetic clip${synth === 1 ? '' : 's'}`;
        } else {
          dir = o.dataset!;
          questionSet = loadQuestions(DEFAULT_QUESTIONS_PATH);
          input = resolve(o.dataset!);
        }
        let { clips } = readDataset(dir, { nuscenesRoot: o.nuscenesRoot, carlaDomain, cameras: o.cameras, log });
        if (limit !== undefined) clips = clips.slice(0, limit);
        if (clips.length === 0) throw new InputError(`${dir}: no clips to measure`);
        if (synth === undefined) input = `${clips.length} clip${clips.length === 1 ? '' : 's'} of ${input}`;

        const r = await measureThroughput({ clips, frames, workers, devices, config: DEFAULT_QUESTIONS_PATH, questionSet, progress, log });
        const unanswered = r.runs.find((x) => x.clips === 0);
        if (unanswered) throw new InputError(`no clip could be answered by ${unanswered.method} (e.g. ${unanswered.failed[0]?.clip_id}: ${unanswered.failed[0]?.reason})`);
        const p = provenance();
        process.stdout.write(`${formatThroughput(r, p, input)}\n`);

        if (o.json !== undefined) {
          const doc = {
            egogeoBench: 1,
            date: new Date().toISOString(),
            ...p,
            config: {
              input: synth !== undefined ? { synth, ...SYNTH } : { dataset: resolve(o.dataset!), limit: limit ?? null },
              clips: clips.length,
              frames,
              workers,
              devices,
              skippedDevices: skipped,
              egogeo: { ...engineRecord(r.engine), device: devices },
              proxy: engineRecord(r.proxy),
              timing: 'wall: the whole answerClips call (pool start and stop included); CPU: process.cpuUsage() over it, every thread; one clip per method answered before, not counted',
            },
            runs: r.runs,
            ratios: r.ratios,
            scaling: r.scaling,
            maxRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
          };
          writeFileAtomic(o.json, `${JSON.stringify(doc, null, 2)}\n`);
        }
        if (o.plot !== undefined) {
          const svg = scalingPlot(r, p, input);
          if (/\.png$/i.test(o.plot)) {
            const png = await svgToPng(svg);
            if (!png) throw new InputError(`--plot ${o.plot}: a PNG needs the sharp package (npm install sharp), or name an .svg file`);
            writeFileAtomic(o.plot, png);
          } else writeFileAtomic(o.plot, svg);
        }
      } finally {
        stopListening();
        if (tmp) rmSync(tmp, { recursive: true, force: true });
      }
    });
}
