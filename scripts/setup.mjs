#!/usr/bin/env node
// `npm run setup`: a bare Debian machine (Node 20, nothing else) → a working egogeo whose `npm test`
// runs every test, in this order:
//   1. the system packages the build needs (apt-get as root; otherwise one line with the exact command, exit 1)
//   2. the ones `npm test` needs (Chromium for the viewer's browser tests, redis-server for the
//      queue's), installed in the background while the rest builds (not root: a note, those tests skip)
//   3. the npm dependencies (`npm ci --ignore-scripts`, then esbuild's install check)
//   4. only with --with-opencv4nodejs: the optional @u4/opencv4nodejs (JavaScript-side mp4 decoding,
//      src/datasets/video.ts; nothing else needs it), compiled against the system OpenCV with all
//      cores and only the binding sources of the modules it is used for (core, imgproc, imgcodecs,
//      videoio, highgui: 24 of its 104 binding files, ~95 s on 2 cores) — its failure is one line
//   5. the native addon (native/build.mjs: cmake-js, all cores)
//   6. the TypeScript build
//   node scripts/setup.mjs --dry-run   prints the plan for this machine and changes nothing
// Test hooks (as native/build.mjs): EGOGEO_PRETEND_NO_OPENCV=1 (libopencv-dev missing),
// EGOGEO_PRETEND_BARE=1 (every system package missing), EGOGEO_PRETEND_NOT_ROOT=1, and for
// --dry-run only EGOGEO_PRETEND_ROOT=1.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Debian packages egogeo needs, with a command that shows each is there (for machines without dpkg). */
export const PACKAGES = [
  ['libopencv-dev', null], // checked with pkg-config
  ['libjpeg-dev', null], // the engine decodes JPEG frames with libjpeg directly (native/vo/decode/jpeg.cc)
  ['libpng-dev', null], // … and PNG frames with libpng (native/vo/decode/png.cc)
  // FFmpeg: the engine decodes mp4 clips with it directly (native/vo/decode/video.cc); checked with pkg-config
  ['libavformat-dev', null],
  ['libavcodec-dev', null],
  ['libavutil-dev', null],
  ['libswscale-dev', null],
  ['pkg-config', 'pkg-config'],
  ['cmake', 'cmake'],
  ['g++', 'g++'],
  ['make', 'make'],
  ['python3', 'python3'], // node-gyp (@u4/opencv4nodejs)
];

/** What `npm test` needs beyond the build (test/view drives a headless Chromium, test/queue starts its own redis-server). */
export const TEST_PACKAGES = [
  ['chromium', 'chromium'],
  ['redis-server', 'redis-server'],
];

/** The OpenCV modules @u4/opencv4nodejs is compiled with (egogeo's JS side uses no others). */
// (highgui too: its io bindings — VideoCapture, VideoWriter, imread — need HAVE_OPENCV_HIGHGUI.)
export const OPENCV4NODEJS_MODULES = ['core', 'imgproc', 'imgcodecs', 'videoio', 'highgui'];

/** Its binding's source folders (cc/<folder>/) for those modules; cc/*.cc are always built. */
export const OPENCV4NODEJS_SOURCE_DIRS = ['core', 'imgproc', 'io', 'highgui'];

/** Where setup keeps the OpenCV header view @u4/opencv4nodejs compiles against. */
export const OPENCV_VIEW = 'build/opencv4nodejs-include/opencv4';

/** The dev packages checked with pkg-config (the module each installs), with or without dpkg. */
const PKG_CONFIG = {
  'libopencv-dev': 'opencv4',
  'libavformat-dev': 'libavformat',
  'libavcodec-dev': 'libavcodec',
  'libavutil-dev': 'libavutil',
  'libswscale-dev': 'libswscale',
};

const onPath = (cmd) => (process.env.PATH ?? '').split(delimiter).some((d) => d && existsSync(join(d, cmd)));
const ok = (cmd, argv) => {
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
};

/** What this machine has: the facts `plan` decides from. */
export function detect(env = process.env, dry = false, argv = process.argv) {
  const dpkg = onPath('dpkg-query');
  const installed = (pkg, cmd) => {
    if (PKG_CONFIG[pkg]) return onPath('pkg-config') && ok('pkg-config', ['--exists', PKG_CONFIG[pkg]]) !== null;
    if (pkg === 'libjpeg-dev' && !dpkg) return existsSync('/usr/include/jpeglib.h');
    if (dpkg) return (ok('dpkg-query', ['-W', '-f=${Status}', pkg]) ?? '').includes('install ok installed');
    return onPath(cmd);
  };
  let missing = PACKAGES.filter(([p, c]) => !installed(p, c)).map(([p]) => p);
  let missingTest = TEST_PACKAGES.filter(([p, c]) => !installed(p, c)).map(([p]) => p);
  if (env.EGOGEO_PRETEND_BARE) {
    missing = PACKAGES.map(([p]) => p);
    missingTest = TEST_PACKAGES.map(([p]) => p);
  }
  else if (env.EGOGEO_PRETEND_NO_OPENCV && !missing.includes('libopencv-dev')) missing.unshift('libopencv-dev');
  const present = !missing.includes('libopencv-dev');
  return {
    node: process.version,
    root: (process.getuid?.() === 0 || (dry && !!env.EGOGEO_PRETEND_ROOT)) && !env.EGOGEO_PRETEND_NOT_ROOT,
    aptGet: onPath('apt-get'),
    missing,
    missingTest,
    withOpencv4nodejs: argv.includes('--with-opencv4nodejs'),
    opencv: present ? ok('pkg-config', ['--modversion', 'opencv4']) : null,
    opencvInclude: present ? (ok('pkg-config', ['--variable=includedir', 'opencv4']) ?? '/usr/include/opencv4') : '/usr/include/opencv4',
    opencvLibDir: present ? (ok('pkg-config', ['--variable=libdir', 'opencv4']) ?? '/usr/lib/x86_64-linux-gnu') : '/usr/lib/x86_64-linux-gnu',
    cores: availableParallelism(),
  };
}

/**
 * The steps for `facts`, in order, or `error` (one line: what is missing and the exact command)
 * when the machine cannot be set up by this script. Pure: tests call it with made-up facts.
 * Each step: {title, cmd, argv, env} (env: variables added to the process environment).
 */
export function plan(facts) {
  const steps = [];
  const missingTest = facts.missingTest ?? [];
  const apt = facts.root && facts.aptGet;
  if (facts.missing.length > 0 && !apt) {
    const why = facts.aptGet ? 'not root' : 'no apt-get on PATH';
    const all = [...facts.missing, ...missingTest];
    return {
      steps: [],
      error: `missing system packages (${facts.missing.join(', ')}; ${why}); install them with: sudo apt-get install -y ${all.join(' ')}`,
    };
  }
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  const install = (pkgs) => ['install', '-y', '--no-install-recommends', ...pkgs];
  if (apt && facts.missing.length + missingTest.length > 0) steps.push({ title: 'system packages: package lists', cmd: 'apt-get', argv: ['update'], env });
  if (facts.missing.length > 0) steps.push({ title: `system packages: ${facts.missing.join(', ')}`, cmd: 'apt-get', argv: install(facts.missing), env });
  // Not needed to build: installed while the rest builds (apt's lock is free once the build's packages are in).
  if (apt && missingTest.length > 0) steps.push({ title: `test tools (npm test): ${missingTest.join(', ')}, in the background`, cmd: 'apt-get', argv: install(missingTest), env, background: true });
  // No install scripts here: the native builds follow, on all cores (npm ci would build
  // @u4/opencv4nodejs's 104 binding files and the addon, as `install`, on its own terms).
  steps.push({ title: 'npm dependencies', cmd: 'npm', argv: ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], env: {} });
  steps.push({ title: "esbuild's install check (the one other install script)", cmd: 'npm', argv: ['rebuild', 'esbuild'], env: {} });
  if (facts.withOpencv4nodejs) {
    steps.push({
      title: `@u4/opencv4nodejs (optional; modules ${OPENCV4NODEJS_MODULES.join(', ')}; all cores)`,
      internal: 'opencv4nodejs',
      optional: true,
      cmd: 'node-gyp',
      argv: ['rebuild', '--jobs=max'],
      env: {
        OPENCV4NODEJS_DISABLE_AUTOBUILD: '1',
        OPENCV_INCLUDE_DIR: join(ROOT, OPENCV_VIEW),
        OPENCV_LIB_DIR: facts.opencvLibDir,
        OPENCV_BIN_DIR: '/usr/bin',
      },
    });
  }
  steps.push({ title: 'native addon (cmake-js, all cores)', cmd: 'node', argv: ['native/build.mjs'], env: {} });
  steps.push({ title: 'TypeScript build', cmd: 'npm', argv: ['run', 'build'], env: {} });
  const note = missingTest.length > 0 && !apt ? `not installing ${missingTest.join(', ')} (${facts.aptGet ? 'not root' : 'no apt-get'}): npm test skips the tests that need them (sudo apt-get install -y ${missingTest.join(' ')})` : null;
  return { steps, error: null, note };
}

/** One step as a shell line. */
export function format(step) {
  const env = Object.entries(step.env).map(([k, v]) => `${k}=${v} `).join('');
  const line = `${env}${step.cmd} ${step.argv.join(' ')}`;
  if (step.internal === 'opencv4nodejs') {
    return `(in node_modules/@u4/opencv4nodejs, binding.gyp's sources limited to cc/*.cc and cc/{${OPENCV4NODEJS_SOURCE_DIRS.join(',')}}/, ` +
      `headers from ${OPENCV_VIEW}: the system's, opencv_modules.hpp limited to those modules) ${line}`;
  }
  return line;
}

/** binding.gyp with the `cc/<folder>/…` sources outside `dirs` left out (cc/*.cc stay). */
export function trimBinding(text, dirs = OPENCV4NODEJS_SOURCE_DIRS) {
  return text
    .split('\n')
    .filter((line) => {
      const m = line.match(/^\s*"cc\/([^/"]+)\/[^"]*\.cc",?\s*$/);
      return !m || dirs.includes(m[1]);
    })
    .join('\n');
}

/**
 * Builds @u4/opencv4nodejs in place (node-gyp, all cores) with the trimmed binding.gyp and the
 * header view; its binding.gyp is restored afterwards. Returns null, or why it did not build.
 */
function buildOpencv4nodejs(step) {
  const pkg = join(ROOT, 'node_modules/@u4/opencv4nodejs');
  const gypFile = join(pkg, 'binding.gyp');
  if (!existsSync(gypFile)) return 'not installed';
  // facts may predate step 1's apt-get: ask again now that OpenCV is there
  writeOpenCvView(detect().opencvInclude);
  const local = join(ROOT, 'node_modules/node-gyp/bin/node-gyp.js');
  const prefix = dirname(dirname(process.execPath));
  const gyp = existsSync(local) ? local : join(prefix, 'lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js');
  // the local node headers (never downloaded), as native/build.mjs
  const nodedir = process.env.npm_config_nodedir ?? (existsSync(join(prefix, 'include/node/node_api.h')) ? prefix : null);
  const original = readFileSync(gypFile, 'utf8');
  writeFileSync(gypFile, trimBinding(original));
  try {
    const argv = [gyp, ...step.argv, ...(nodedir ? [`--nodedir=${nodedir}`] : [])];
    const r = spawnSync(process.execPath, argv, { stdio: 'inherit', cwd: pkg, env: { ...process.env, ...step.env } });
    return r.status === 0 ? null : `node-gyp ${r.error?.message ?? `exit ${r.status ?? r.signal}`}`;
  } finally {
    writeFileSync(gypFile, original);
  }
}

/**
 * @u4/opencv4nodejs compiles one binding file per OpenCV module it finds in opencv_modules.hpp
 * (80-odd files for Debian's full build; it has no option to pick modules when it uses a system
 * OpenCV). This writes a view of the system headers whose opencv_modules.hpp names only the
 * modules egogeo's JS side uses; every other header is a link to the system's.
 */
export function writeOpenCvView(systemInclude, dir = join(ROOT, OPENCV_VIEW)) {
  rmSync(dir, { recursive: true, force: true });
  const cv2 = join(dir, 'opencv2');
  mkdirSync(cv2, { recursive: true });
  const sys = join(systemInclude, 'opencv2');
  for (const name of readdirSync(sys)) if (name !== 'opencv_modules.hpp') symlinkSync(join(sys, name), join(cv2, name));
  const defines = OPENCV4NODEJS_MODULES.map((m) => `#define HAVE_OPENCV_${m.toUpperCase()}`).join('\n');
  writeFileSync(join(cv2, 'opencv_modules.hpp'), `// written by egogeo's scripts/setup.mjs: the modules @u4/opencv4nodejs is built with\n#pragma once\n${defines}\n`);
}

async function main() {
  const dry = process.argv.includes('--dry-run');
  const facts = detect(process.env, dry);
  const { steps, error, note } = plan(facts);
  const have = `node ${facts.node}, ${facts.cores} cores, ${facts.root ? 'root' : 'not root'}, ` +
    (facts.missing.length ? `missing: ${facts.missing.join(' ')}` : `system packages present (OpenCV ${facts.opencv})`) +
    (facts.missingTest.length ? `; for npm test: ${facts.missingTest.join(' ')}` : '');
  if (error) {
    console.error(`egogeo: ${error}`);
    process.exit(1);
  }
  if (dry) {
    console.log(`egogeo setup plan (dry run; ${have}):`);
    steps.forEach((s, i) => console.log(`  ${i + 1}. ${s.title}\n     ${format(s)}`));
    if (note) console.log(`  note: ${note}`);
    return;
  }
  console.log(`[egogeo setup] ${have}`);
  if (note) console.log(`[egogeo setup] note: ${note}`);
  const t0 = Date.now();
  const background = [];
  for (const [i, s] of steps.entries()) {
    console.log(`\n[egogeo setup] ${i + 1}/${steps.length} ${s.title}\n[egogeo setup] $ ${format(s)}`);
    const t = Date.now();
    if (s.background) {
      background.push(inBackground(s, i, steps.length));
      continue;
    }
    if (s.internal === 'opencv4nodejs') {
      const failed = buildOpencv4nodejs(s);
      if (failed) console.log(`[egogeo setup] note: the optional @u4/opencv4nodejs did not build (${failed}); everything else works (\`egogeo doctor\` says what needs it)`);
    } else {
      const r = spawnSync(s.cmd, s.argv, { stdio: 'inherit', cwd: ROOT, env: { ...process.env, ...s.env } });
      if (r.status !== 0) {
        console.error(`egogeo: setup step ${i + 1} (${s.title}) failed: \`${format(s)}\` (${r.error?.message ?? `exit ${r.status ?? r.signal}`})`);
        process.exit(1);
      }
    }
    console.log(`[egogeo setup] step ${i + 1} took ${Math.round((Date.now() - t) / 1000)} s`);
  }
  for (const failed of await Promise.all(background)) {
    if (failed) {
      console.error(`egogeo: ${failed}`);
      process.exit(1);
    }
  }
  console.log(`\n[egogeo setup] done in ${Math.round((Date.now() - t0) / 1000)} s; try \`npx egogeo doctor\` and \`npx egogeo demo\``);
}

/** A background step: its output to build/setup-<n>.log, the promise of null or why it failed. */
function inBackground(s, i, n) {
  mkdirSync(join(ROOT, 'build'), { recursive: true });
  const log = join(ROOT, 'build', `setup-${i + 1}.log`);
  const fd = openSync(log, 'w');
  const t = Date.now();
  const child = spawn(s.cmd, s.argv, { stdio: ['ignore', fd, fd], cwd: ROOT, env: { ...process.env, ...s.env } });
  return new Promise((done) => {
    const finish = (why) => {
      closeSync(fd);
      if (!why) console.log(`[egogeo setup] step ${i + 1}/${n} (${s.title.replace(/, in the background$/, '')}) done after ${Math.round((Date.now() - t) / 1000)} s`);
      done(why ? `setup step ${i + 1} (${s.title}) failed: \`${format(s)}\` (${why}; its output: ${log})` : null);
    };
    child.on('error', (e) => finish(e.message));
    child.on('exit', (code, signal) => finish(code === 0 ? null : `exit ${code ?? signal}`));
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
