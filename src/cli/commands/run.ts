/**
 * `egogeo run --dataset DIR -o preds.jsonl`: the geometric baseline over a dataset in the
 * benchmark's layout, one clip per pool worker task; resumable, interruptible, shardable
 * (src/run/run.ts has the files it writes and the guarantees).
 */
import type { Command } from 'commander';
import { DEFAULT_QUESTIONS_PATH } from '../../oracle/index.js';
import { defaultWorkers } from '../../pool/index.js';
import { DEFAULT_MODEL } from '../../run/manifest.js';
import { DEFAULT_QUEUE_NAME } from '../../queue/connection.js';
import { runCommand } from '../running.js';
import { ABSTAIN_HELP, addEngineOptions, DEVICE_HELP, PROTOCOL_HELP } from '../options.js';

export function registerRun(program: Command): void {
  const cmd = program
    .command('run')
    .description('answer the benchmark questions for every clip of a dataset (benchmark layout) on a worker pool; resumable')
    .requiredOption('--dataset <dir>', 'EgoDyn-Bench as published (selected_clips.json, nuscenes_clips/, carla_clips/, carla_videos_*/), a folder in the benchmark layout (clips_index.jsonl, qa.jsonl, arrays/, frames or mp4 videos), or a KITTI sequence (its 31-frame windows)')
    .option('--nuscenes-root <dir>', 'published layout: the nuScenes data root (samples/, sweeps/, v1.0-trainval/ tables) for the nuScenes clips')
    .option('--carla-domain <domain>', "published layout: the CARLA videos to read, 'simulation' or 'transferred' (one leaderboard entry each), or 'simulation,transferred': both, one output each (-o with {domain}), the nuScenes clips computed once", 'simulation')
    .option('--cameras <json>', 'per-source cameras over what the dataset says: {"carla": {"hfov_deg": 90, "height": 1.65}} or {"<source>": {fx, fy, cx, cy, height}}')
    .option('--cache <dir>', 'where the nuScenes table join is cached (default: $EGOGEO_CACHE_DIR or ~/.cache/egogeo)')
    .option('--no-cache', 'do not cache the nuScenes table join');
  // The engine's flags and defaults: cli/options.ts ENGINE_OPTIONS, the library's defaults.
  addEngineOptions(cmd)
    .option('--protocol <p>', PROTOCOL_HELP)
    .option('--abstain', ABSTAIN_HELP)
    .option('--device <mode>', DEVICE_HELP)
    .requiredOption('-o, --output <path>', 'predictions JSONL (appended per clip while running, canonical order when complete)')
    .option('--source-label <label>', 'source recorded on every prediction (default: the record\'s source, else inferred from the clip id)')
    .option('--clips <json>', 'selected_clips.json-style list: run only these clips, in this order')
    .option('--limit <n>', 'only the first n clips')
    .option('--workers <n>', `worker threads (default: the machine's cores, here ${defaultWorkers()})`)
    .option('--questions <set>', "'subset' (the 6 geometric questions) or 'all' (14)", 'all')
    .option('--shard <i/n>', 'run only the clips whose index % n == i (merge the shards with egogeo merge)')
    .option('--config <yaml>', 'question file', DEFAULT_QUESTIONS_PATH)
    .option('--model <name>', `model name in the results manifest, {domain} standing for the run's CARLA domain (e.g. mine_{domain}; default: <method>_<carla domain> on the published layout, as the leaderboard names its rows: egogeo_simulation, vo_proxy_transferred; else ${DEFAULT_MODEL}, vo_proxy, flow_heuristic)`)
    .option('--no-progress', 'no progress bar (default: shown on a terminal)')
    .option('--queue <url>', 'hand the clips to `egogeo worker` processes through Redis (redis://HOST:PORT[/db]) instead of answering them here; the same files as a local run')
    .option('--queue-name <name>', 'with --queue: the BullMQ queue (the workers\' --queue-name)', DEFAULT_QUEUE_NAME)
    .option('--attempts <n>', 'with --queue: attempts per clip before it goes to the errors file', '3')
    .action(runCommand);
}
