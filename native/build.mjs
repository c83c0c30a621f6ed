#!/usr/bin/env node
// Builds the native engine (npm install runs this through the package's `install` script).
//   node native/build.mjs              cmake-js -> build/Release/egogeo_native.node (all cores)
//   node native/build.mjs --sanitize   ASan+UBSan build into build-asan/ (leaves build/ alone)
//   node native/build.mjs --gyp        node-gyp build of binding.gyp in a temporary copy, then a load
//                                      check (CI runs it so CMakeLists.txt and binding.gyp cannot drift)
// OpenCV 4 and FFmpeg come from the system: installed with apt-get when we are root, else one line says how.
// EGOGEO_SKIP_NATIVE=1 skips the build (the oracle and grader need no native code).
// Test hooks: EGOGEO_PRETEND_NO_OPENCV=1 (pkg-config "fails"), EGOGEO_PRETEND_NOT_ROOT=1.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, constants, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGES as SYSTEM_PACKAGES } from '../scripts/setup.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const args = new Set(process.argv.slice(2));
const PACKAGES = SYSTEM_PACKAGES.map(([p]) => p).join(' '); // one list, with npm run setup's
const require = createRequire(import.meta.url);

const fail = (line) => {
  console.error(`egogeo: ${line}`);
  process.exit(1);
};
const quiet = (cmd, argv) => spawnSync(cmd, argv, { stdio: 'ignore' }).status === 0;
const onPath = (cmd) => (process.env.PATH ?? '').split(delimiter).some((d) => d && existsSync(join(d, cmd)));
function run(cmd, argv, opts = {}) {
  console.log(`[egogeo] $ ${[cmd, ...argv].join(' ')}`);
  const r = spawnSync(cmd, argv, { stdio: 'inherit', cwd: ROOT, ...opts });
  if (r.status !== 0) fail(`\`${[cmd, ...argv].join(' ')}\` failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`})`);
}

function toolchainReady() {
  if (process.env.EGOGEO_PRETEND_NO_OPENCV) return false;
  const modules = ['opencv4', 'libavformat', 'libavcodec', 'libavutil', 'libswscale'];
  return quiet('pkg-config', ['--exists', ...modules]) && onPath('cmake') && (onPath('g++') || onPath('c++'));
}

if (process.env.EGOGEO_SKIP_NATIVE) {
  console.log('[egogeo] EGOGEO_SKIP_NATIVE is set: not building the native engine');
  process.exit(0);
}

if (!toolchainReady()) {
  const root = process.getuid?.() === 0 && !process.env.EGOGEO_PRETEND_NOT_ROOT;
  if (!root || !onPath('apt-get')) {
    fail(`OpenCV 4 / FFmpeg dev files or the C++ toolchain are missing; install them with: sudo apt-get install -y ${PACKAGES}`);
  }
  console.log(`[egogeo] OpenCV 4 / FFmpeg / toolchain missing: installing ${PACKAGES} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update'], { env });
  run('apt-get', ['install', '-y', ...PACKAGES.split(' ')], { env });
  if (!toolchainReady()) fail('OpenCV 4 / FFmpeg (pkg-config opencv4 libavformat libavcodec libavutil libswscale) or the C++ toolchain is still missing after apt-get install');
}

// Use the local node headers (never download them): npm's nodedir, else the prefix node runs from.
const env = { ...process.env };
const prefix = dirname(dirname(process.execPath));
if (!env.npm_config_nodedir && existsSync(join(prefix, 'include/node/node_api.h'))) env.npm_config_nodedir = prefix;

if (args.has('--gyp')) {
  const tmp = mkdtempSync(join(tmpdir(), 'egogeo-gyp-'));
  process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
  for (const p of ['native', 'binding.gyp', 'package.json']) cpSync(join(ROOT, p), join(tmp, p), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(tmp, 'node_modules'), 'dir');
  const gyp = env.npm_config_node_gyp ?? join(prefix, 'lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js');
  const nodedir = env.npm_config_nodedir ? [`--nodedir=${env.npm_config_nodedir}`] : [];
  run(process.execPath, [gyp, 'rebuild', '--jobs=max', ...nodedir], { cwd: tmp, env });
  const addon = { exports: {} }; // RTLD_NOW: a source missing from binding.gyp fails here, not at first call
  try {
    process.dlopen(addon, join(tmp, 'build/Release/egogeo_native.node'), constants.dlopen.RTLD_NOW);
  } catch (e) {
    fail(`the node-gyp build does not load (is binding.gyp missing a source?): ${e.message}`);
  }
  if (typeof addon.exports.processClip !== 'function') fail('the node-gyp build does not export processClip');
  console.log(`[egogeo] node-gyp build OK: exports ${Object.keys(addon.exports).join(', ')} (OpenCV ${addon.exports.opencvVersion})`);
} else {
  const cmakeJs = require.resolve('cmake-js/bin/cmake-js');
  const sanitize = args.has('--sanitize') ? ['--CDEGOGEO_SANITIZE=ON', '-O', 'build-asan'] : [];
  // all cores (cmake --build --parallel N)
  run(process.execPath, [cmakeJs, 'compile', '--parallel', String(availableParallelism()), ...sanitize], { env });
  console.log(`[egogeo] built ${sanitize.length ? 'build-asan' : 'build'}/Release/egogeo_native.node`);
}
