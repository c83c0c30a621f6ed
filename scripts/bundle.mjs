#!/usr/bin/env node
// `npm run build`, after tsc: the CLI's compiled modules bundled into dist/bundle/ (esbuild, code
// split by command), which bin/egogeo.js loads when it is at least as new as dist/cli/main.js.
// Node's ES module loader costs ~0.6 ms a module (resolution, a read, a compile each): a KITTI
// baseline run loads 74 of them, `--version` and `--help` 149; bundled, 32 and ~60 chunks. The
// npm packages stay outside (loaded from node_modules as before), as does the native addon.
// Entry points sit directly in dist/bundle/, two levels below the package root like dist/*/, so
// every `new URL('../../…', import.meta.url)` in the sources resolves as it does unbundled.
import { build } from 'esbuild';
import { renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = `${root}dist/bundle`;
const tmp = `${out}.tmp`;
rmSync(tmp, { recursive: true, force: true });
try {
  await build({
    absWorkingDir: root,
    // The pool workers are entry points too, so a bundled run imports the bundled worker
    // (src/run/clips.ts, src/synth/dataset.ts workerUrl) and not a second copy of the modules.
    entryPoints: { main: 'dist/cli/main.js', 'run-worker': 'dist/run/worker.js', 'synth-worker': 'dist/synth/worker.js' },
    outdir: tmp,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  rmSync(out, { recursive: true, force: true });
  renameSync(tmp, out);
} catch (e) {
  rmSync(tmp, { recursive: true, force: true });
  console.error(`scripts/bundle.mjs: ${e.message.split('\n')[0]}`);
  process.exit(1);
}
