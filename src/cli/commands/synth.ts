/**
 * `egogeo synth --clips N --seed S --out DIR`: synthetic driving clips with exact ground truth in
 * the benchmark's on-disk layout (src/synth/dataset.ts), rendered on the worker pool.
 */
import type { Command } from 'commander';
import { InputError } from '../../core/errors.js';
import { guardOutputs } from '../../io/safety.js';
import { intIn, numIn, parsePreset, parseSpeedRange, parseWorkers } from '../options.js';
import { formatDistribution } from '../format.js';
import { DEFAULT_QUESTIONS_PATH } from '../../oracle/index.js';
import { defaultWorkers } from '../../pool/index.js';
import { PRESET_NAMES } from '../../synth/presets.js';
import { isProfileName, PROFILE_NAMES } from '../../synth/profiles.js';
import { synthesize } from '../../synth/index.js';

interface Opts {
  clips: string;
  seed: string;
  out: string;
  profile?: string;
  speed?: string;
  preset: string;
  video?: boolean;
  workers?: string;
  jpegQuality: string;
  encoder: string;
  noise?: string;
  exposure?: string;
  blur?: string;
  force?: boolean;
  config: string;
  progress?: boolean;
}

export function registerSynth(program: Command): void {
  program
    .command('synth')
    .description('render synthetic driving clips with exact ground truth in the benchmark layout (frames or mp4, arrays, QA)')
    .requiredOption('--out <dir>', 'output folder (must be absent or empty; written atomically)')
    .option('--clips <n>', 'number of clips', '100')
    .option('--seed <s>', 'seed: the same seed gives the same bytes', '0')
    .option('--profile <name>', `one behaviour profile for every clip (${PROFILE_NAMES.join(', ')}); default: mixed`)
    .option('--preset <name>', `camera and timing: ${PRESET_NAMES.join(', ')} or mixed (alternating)`, 'carla')
    .option('--video', 'one mp4 per clip (videos/<clip_id>.mp4, field video_path) instead of JPEG frames')
    .option('--workers <n>', `render workers (default: the machine's cores, here ${defaultWorkers()})`)
    .option('--jpeg-quality <q>', 'JPEG quality', '90')
    .option('--encoder <name>', "JPEG encoder: opencv (libjpeg in the render call, cv::imencode's bytes; faster) or sharp", 'opencv')
    .option('--noise <sigma>', "per-pixel noise std in grey levels (default: the preset's)")
    .option('--exposure <sigma>', "per-frame log-gain drift std (default: the preset's)")
    .option('--blur <samples>', 'motion blur: sub-frame renders averaged per frame (default 1 = off)')
    .option('--speed <min:max>', 'cruise speeds in m/s (e.g. 20:33 for highway sets): only the scenarios driven at a free speed (cruise, accelerate, brake, emergency brake, evasive, curve, lane change, speed change), their speed drawn from this range')
    .option('--force', 'replace a non-empty output folder')
    .option('--config <yaml>', 'question file', DEFAULT_QUESTIONS_PATH)
    .option('--no-progress', 'no progress bar')
    .action(async (o: Opts) => {
      guardOutputs([{ path: o.out, flag: '--out', kind: 'dir' }], [o.config]);
      const clips = intIn('--clips', o.clips, 1, 1_000_000);
      const seed = intIn('--seed', o.seed, 0, 2 ** 31 - 1);
      if (o.profile !== undefined && !isProfileName(o.profile)) {
        throw new InputError(`--profile must be one of ${PROFILE_NAMES.join(', ')}, got '${o.profile}'`);
      }
      const preset = parsePreset(o.preset, true);
      if (o.encoder !== 'opencv' && o.encoder !== 'sharp') throw new InputError(`--encoder must be opencv or sharp, got '${o.encoder}'`);
      const photometric: Record<string, number> = {};
      const noise = numIn('--noise', o.noise, 0, 50);
      const exposure = numIn('--exposure', o.exposure, 0, 1);
      if (noise !== undefined) photometric.noise = noise;
      if (exposure !== undefined) photometric.exposure = exposure;
      if (o.blur !== undefined) photometric.blurSamples = intIn('--blur', o.blur, 1, 16);
      const s = await synthesize({
        out: o.out,
        clips,
        seed,
        preset,
        profile: o.profile as never,
        speed: o.speed === undefined ? undefined : parseSpeedRange(o.speed),
        video: !!o.video,
        workers: o.workers === undefined ? undefined : parseWorkers(o.workers),
        jpegQuality: intIn('--jpeg-quality', o.jpegQuality, 1, 100),
        encoder: o.encoder,
        photometric,
        force: !!o.force,
        questionsPath: o.config,
        progress: o.progress === false ? false : undefined,
      });
      const fps = s.frames / s.seconds;
      process.stdout.write(
        `wrote ${s.clips.length} clips (${s.frames} frames${o.video ? ', mp4' : `, ${(s.bytes / 1e6).toFixed(1)} MB JPEG`}) to ${s.dir} ` +
          `in ${s.seconds.toFixed(1)} s (${fps.toFixed(1)} frames/s)\nanswer distribution:\n${formatDistribution(s)}\n`,
      );
    });
}
