/** scripts/setup.mjs (`npm run setup`): the plan for a bare machine, one with OpenCV, and a non-root user — without running it. */
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { detect, format, OPENCV4NODEJS_MODULES, PACKAGES, plan, TEST_PACKAGES, trimBinding, writeOpenCvView } from '../../scripts/setup.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ALL = (PACKAGES as [string, string | null][]).map(([p]) => p);
const TEST = (TEST_PACKAGES as [string, string][]).map(([p]) => p);

interface Step {
  title: string;
  cmd: string;
  argv: string[];
  env: Record<string, string>;
  internal?: string;
}
interface Plan {
  steps: Step[];
  error: string | null;
}
const facts = (o: Partial<{ root: boolean; aptGet: boolean; missing: string[]; missingTest: string[]; withOpencv4nodejs: boolean }>) => ({
  node: 'v20.0.0',
  root: true,
  aptGet: true,
  missing: [] as string[],
  opencv: '4.6.0',
  opencvInclude: '/usr/include/opencv4',
  opencvLibDir: '/usr/lib/x86_64-linux-gnu',
  cores: 2,
  ...o,
});
const lines = (p: Plan) => p.steps.map((s) => format(s) as string);

describe('setup plan', () => {
  it('nothing present (root): the build\'s system packages first, the test tools in the background, then npm ci, the addon, TypeScript', () => {
    const p = plan(facts({ missing: ALL, missingTest: TEST })) as Plan & { steps: (Step & { background?: boolean })[] };
    expect(p.error).toBeNull();
    const l = lines(p);
    expect(l[0]).toBe('DEBIAN_FRONTEND=noninteractive apt-get update');
    expect(l[1]).toBe(`DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${ALL.join(' ')}`);
    expect(l[2]).toBe('DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium redis-server');
    expect(p.steps[2].background).toBe(true);
    expect(p.steps.filter((s) => s.background)).toHaveLength(1);
    expect(l[3]).toBe('npm ci --ignore-scripts --no-audit --no-fund');
    expect(l[4]).toBe('npm rebuild esbuild');
    expect(l[5]).toBe('node native/build.mjs');
    expect(l[6]).toBe('npm run build');
    expect(p.steps).toHaveLength(7);
    expect(p.steps.some((s) => s.internal === 'opencv4nodejs')).toBe(false); // only on request
    expect(ALL).toEqual(
      expect.arrayContaining(['libopencv-dev', 'libjpeg-dev', 'libpng-dev', 'libavformat-dev', 'libavcodec-dev', 'libavutil-dev', 'libswscale-dev', 'pkg-config', 'cmake', 'g++', 'make', 'python3']),
    );
    expect(TEST).toEqual(['chromium', 'redis-server']);
  });

  it('only the test tools missing: the package lists, then them in the background', () => {
    const l = lines(plan(facts({ missing: [], missingTest: ['redis-server'] })) as Plan);
    expect(l.slice(0, 3)).toEqual(['DEBIAN_FRONTEND=noninteractive apt-get update', 'DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server', 'npm ci --ignore-scripts --no-audit --no-fund']);
  });

  it('not root, the test tools missing: the build goes on, a note names the command (those tests skip)', () => {
    const p = plan(facts({ root: false, missing: [], missingTest: TEST })) as Plan & { note: string | null };
    expect(p.error).toBeNull();
    expect(p.steps.some((s) => s.cmd === 'apt-get')).toBe(false);
    expect(p.note).toMatch(/npm test skips the tests that need them \(sudo apt-get install -y chromium redis-server\)$/);
  });

  it('OpenCV present: no apt-get; @u4/opencv4nodejs only with --with-opencv4nodejs, with all cores against the system OpenCV, before the addon', () => {
    expect(plan(facts({ missing: [] })).steps.some((s: Step) => s.internal === 'opencv4nodejs')).toBe(false);
    const p = plan(facts({ missing: [], withOpencv4nodejs: true })) as Plan & { steps: (Step & { optional?: boolean })[] };
    expect(p.error).toBeNull();
    expect(p.steps.some((s) => s.cmd === 'apt-get')).toBe(false);
    const cv = p.steps.find((s) => s.internal === 'opencv4nodejs')!;
    expect(cv.optional).toBe(true);
    expect(cv.argv).toEqual(['rebuild', '--jobs=max']);
    expect(cv.env).toMatchObject({ OPENCV4NODEJS_DISABLE_AUTOBUILD: '1', OPENCV_LIB_DIR: '/usr/lib/x86_64-linux-gnu' });
    expect(cv.env.OPENCV_INCLUDE_DIR).toBe(join(ROOT, 'build/opencv4nodejs-include/opencv4'));
    expect(p.steps.map((s) => s.title)).toEqual([
      'npm dependencies',
      expect.stringMatching(/^esbuild/),
      expect.stringMatching(/^@u4\/opencv4nodejs \(optional/),
      expect.stringMatching(/^native addon/),
      'TypeScript build',
    ]);
  });

  it('only the missing packages are installed', () => {
    const p = plan(facts({ missing: ['libopencv-dev', 'cmake'] })) as Plan;
    expect(lines(p)[1]).toBe('DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libopencv-dev cmake');
  });

  it('not root: no steps, one line with the exact command', () => {
    const p = plan(facts({ root: false, missing: ['libopencv-dev', 'g++'] })) as Plan;
    expect(p.steps).toEqual([]);
    expect(p.error).toMatch(/^missing system packages \(libopencv-dev, g\+\+; not root\); install them with: sudo apt-get install -y libopencv-dev g\+\+$/);
  });

  it('not root with everything present: the npm steps only', () => {
    const p = plan(facts({ root: false, missing: [] })) as Plan;
    expect(p.error).toBeNull();
    expect(p.steps.some((s) => s.cmd === 'apt-get')).toBe(false);
  });

  it('no apt-get: one line with the command', () => {
    const p = plan(facts({ aptGet: false, missing: ['libopencv-dev'] })) as Plan;
    expect(p.error).toMatch(/no apt-get on PATH\); install them with: sudo apt-get install -y libopencv-dev$/);
  });
});

describe('detect', () => {
  it('finds the FFmpeg dev packages the engine builds against (this machine built the addon)', () => {
    const ok = (m: string) => spawnSync('pkg-config', ['--exists', m]).status === 0;
    const ffmpeg = ['libavformat', 'libavcodec', 'libavutil', 'libswscale'];
    const { missing } = detect() as { missing: string[] };
    for (const m of ffmpeg) expect(missing.includes(`${m}-dev`)).toBe(!ok(m));
  });
});

describe('scripts/setup.mjs --dry-run', () => {
  const dry = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['scripts/setup.mjs', '--dry-run'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env } });

  it('nothing present, root: prints the apt-get, npm ci, addon and TypeScript steps and changes nothing', () => {
    const r = dry({ EGOGEO_PRETEND_BARE: '1', EGOGEO_PRETEND_ROOT: '1' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^egogeo setup plan \(dry run; .*missing: libopencv-dev/);
    const order = ['apt-get update', 'apt-get install -y --no-install-recommends libopencv-dev', 'apt-get install -y --no-install-recommends chromium redis-server', 'npm ci', 'node native/build.mjs', 'npm run build'].map((s) => r.stdout.indexOf(s));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('not root without OpenCV: exit 1, one line naming the sudo command', () => {
    const r = dry({ EGOGEO_PRETEND_NO_OPENCV: '1', EGOGEO_PRETEND_NOT_ROOT: '1' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const err = r.stderr.trim().split('\n');
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/^egogeo: missing system packages \(libopencv-dev.*install them with: sudo apt-get install -y libopencv-dev/);
  });

  it('is what `npm run setup` runs', () => {
    const { scripts, optionalDependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    expect(scripts.setup).toBe('node scripts/setup.mjs');
    expect(Object.keys(optionalDependencies ?? {})).toContain('@u4/opencv4nodejs');
  });
});

describe('the trimmed @u4/opencv4nodejs build', () => {
  it('keeps cc/*.cc and the sources of core, imgproc, io and highgui only', () => {
    const gyp = ['"sources": [', '  "cc/opencv4nodejs.cc",', '  "cc/core/Mat.cc",', '  "cc/dnn/Net.cc",', '  "cc/io/VideoCapture.cc",',
      '  "cc/tracking/Trackers/TrackerKCF.cc",', '  "cc/highgui/highgui.cc"', ']'].join('\n');
    expect(trimBinding(gyp)).toBe(['"sources": [', '  "cc/opencv4nodejs.cc",', '  "cc/core/Mat.cc",', '  "cc/io/VideoCapture.cc",', '  "cc/highgui/highgui.cc"', ']'].join('\n'));
  });
});

describe('the OpenCV header view for @u4/opencv4nodejs', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'egogeo-view-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('links every system header but lists only the modules egogeo uses', () => {
    const sys = join(tmp, 'sys');
    mkdirSync(join(sys, 'opencv2', 'core'), { recursive: true });
    writeFileSync(join(sys, 'opencv2', 'core.hpp'), '');
    writeFileSync(join(sys, 'opencv2', 'opencv_modules.hpp'), '#define HAVE_OPENCV_CORE\n#define HAVE_OPENCV_DNN\n');
    const view = join(tmp, 'view', 'opencv4');
    writeOpenCvView(sys, view);
    expect(readlinkSync(join(view, 'opencv2', 'core.hpp'))).toBe(join(sys, 'opencv2', 'core.hpp'));
    expect(lstatSync(join(view, 'opencv2', 'core')).isSymbolicLink()).toBe(true);
    const mods = readFileSync(join(view, 'opencv2', 'opencv_modules.hpp'), 'utf8');
    expect([...mods.matchAll(/#define HAVE_OPENCV_(\w+)/g)].map((m) => m[1].toLowerCase())).toEqual(OPENCV4NODEJS_MODULES);
    expect(OPENCV4NODEJS_MODULES).toEqual(['core', 'imgproc', 'imgcodecs', 'videoio', 'highgui']);
  });
});
