/** The build wiring, without compiling: the built addon's exports, and native/build.mjs's one-line advice. */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ADDON = `${ROOT}build/Release/egogeo_native.node`;
const BUILT = existsSync(ADDON);
const INSTALL = 'sudo apt-get install -y libopencv-dev libjpeg-dev libpng-dev libavformat-dev libavcodec-dev libavutil-dev libswscale-dev pkg-config cmake g++ make python3';

if (!BUILT) console.warn(`[egogeo tests] ${ADDON} is not built: the addon export check is skipped (run \`npm run build:native\`).`);

describe.skipIf(!BUILT)('built addon (build/Release)', () => {
  it('loads and exports processClip, processClipAsync, setThreads and opencvVersion', () => {
    const addon = createRequire(import.meta.url)(ADDON) as Record<string, unknown>;
    expect(typeof addon.processClip).toBe('function');
    expect(typeof addon.processClipAsync).toBe('function');
    expect(typeof addon.setThreads).toBe('function');
    expect(addon.opencvVersion).toMatch(/^4\.\d+\.\d+/);
  });

  it('pins OpenCV and OpenBLAS to one thread at its first load (no pool thread spinning beside the workers)', () => {
    // A fresh process, without the variables that would set OpenBLAS's count before the addon does.
    const env = { ...process.env };
    for (const k of ['OPENBLAS_NUM_THREADS', 'GOTO_NUM_THREADS', 'OMP_NUM_THREADS']) delete env[k];
    const code = `const a = require(${JSON.stringify(ADDON)}); console.log(JSON.stringify([a.threads(), a.blasThreads()]))`;
    const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', env });
    expect(r.status, r.stderr).toBe(0);
    const [opencv, blas] = JSON.parse(r.stdout) as [number, number];
    expect(opencv).toBe(1);
    expect([1, -1]).toContain(blas);  // -1: this OpenCV does not use OpenBLAS
  });
});

describe('native/build.mjs', () => {
  const build = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['native/build.mjs'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env } });

  it.each([
    ['not root', { EGOGEO_PRETEND_NOT_ROOT: '1' }],
    ['no apt-get on PATH', { PATH: '/nonexistent' }],
  ])('without OpenCV (%s) exits non-zero with one line giving the install command', (_, env) => {
    const r = build({ EGOGEO_PRETEND_NO_OPENCV: '1', ...env });
    expect(r.status).not.toBe(0);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^egogeo: .*OpenCV/);
    expect(lines[0].endsWith(INSTALL)).toBe(true);
  });

  it('EGOGEO_SKIP_NATIVE=1 skips the build and succeeds', () => {
    const r = build({ EGOGEO_SKIP_NATIVE: '1', EGOGEO_PRETEND_NO_OPENCV: '1' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/not building/);
  });

  it('is what the package scripts run', () => {
    const { scripts } = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.install).toBe('node native/build.mjs');
    expect(scripts['build:native']).toBe('node native/build.mjs');
    expect(scripts['build:native:asan']).toBe('node native/build.mjs --sanitize');
    expect(scripts['build:gyp']).toBe('node native/build.mjs --gyp');
  });
});
