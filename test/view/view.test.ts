/**
 * `egogeo view` end to end in a real headless Chromium (Debian's `chromium` + playwright-core):
 * the list and its filters over a generated 1,000-clip dataset, bad input
 * (missing folder, predictions for other clips, unreadable frames, paths outside the dataset),
 * and on the shared KITTI windows the opened clip — frame with the engine's tracks and inliers,
 * bird's-eye and dynamics plots, the QA table against a predictions file, keyboard navigation.
 * Outcomes only: the paint and open times are measured by bench/view.mjs, not bounded here.
 * Screenshots go to test/view/artifacts/. Skips with a message without chromium.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewServer, type ViewServer } from '../../src/view/server.js';
import { cli } from '../helpers/cli.js';
import { BIN, EGODYN_KITTI, ensureDist, flattenRoad, HAS_EGODYN_KITTI, NATIVE_BUILT, syntheticDataset } from '../run/fixtures.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p)) ?? null;
let playwright: typeof import('playwright-core') | null = null;
try {
  playwright = await import('playwright-core');
} catch {
  playwright = null;
}
const HAS_BROWSER = CHROMIUM !== null && playwright !== null;
if (!HAS_BROWSER) {
  console.warn(`[egogeo tests] test/view: ${CHROMIUM ? 'playwright-core is not installed (npm ci)' : 'no chromium (apt-get install -y chromium)'}: the browser tests of egogeo view are skipped.`);
}
const ARTIFACTS = fileURLToPath(new URL('./artifacts', import.meta.url));

type Browser = import('playwright-core').BrowserContext;
async function launch(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'egogeo-view-chromium-'));
  return playwright!.chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM!,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A raw GET (no URL normalisation, so `..` reaches the server as written). */
function rawGet(url: string, path: string): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((ok, fail) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => ok({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

describe('egogeo view: bad input', () => {
  it('a missing dataset folder is one line and exit 1', async () => {
    const r = await cli('view', '--dataset', '/nonexistent/egogeo-view-data', '--port', '0');
    expect(r.code).toBe(1);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toContain('/nonexistent/egogeo-view-data: no such dataset directory');
  });
});

describe.skipIf(!HAS_BROWSER)('egogeo view: 1,000 clips, filters, bad input in the page', () => {
  let dir: string;
  let v: ViewServer;
  let ctx: Browser;
  const log: string[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'egogeo-view-'));
    const data = join(dir, 'data');
    mkdirSync(join(data, 'frames'), { recursive: true });
    // clip 0: frames that exist but are not images; the others name frames that are absent.
    for (let i = 0; i < 3; i++) writeFileSync(join(data, 'frames', `bad${i}.jpg`), 'this is not a JPEG');
    const idx: string[] = [], qa: string[] = [], preds: string[] = [], other: string[] = [];
    for (let i = 0; i < 1000; i++) {
      const id = `clip${String(i).padStart(4, '0')}`;
      const frames = i === 0 ? [0, 1, 2].map((k) => `frames/bad${k}.jpg`) : [0, 1, 2].map((k) => `frames/${id}_${k}.jpg`);
      idx.push(JSON.stringify({ clip_id: id, source: i % 2 ? 'carla' : 'nuscenes', frame_paths: frames, frame_timestamps: [0, 0.1, 0.2] }));
      qa.push(JSON.stringify({ qa_id: `qa${i}`, clip_id: id, question_id: 'speed_regime', category: 'direct_dynamics', answer: 'urban' }));
      preds.push(JSON.stringify({ qa_id: `qa${i}`, clip_id: id, question_id: 'speed_regime', category: 'direct_dynamics', oracle_label: 'urban', model_answer: i % 4 === 0 ? 'slow' : 'urban', source: i % 2 ? 'carla' : 'nuscenes' }));
      if (i < 5) other.push(JSON.stringify({ clip_id: `elsewhere${i}`, question_id: 'speed_regime', oracle_label: 'urban', model_answer: 'urban' }));
    }
    writeFileSync(join(data, 'clips_index.jsonl'), `${idx.join('\n')}\n`);
    writeFileSync(join(data, 'qa.jsonl'), `${qa.join('\n')}\n`);
    writeFileSync(join(dir, 'preds.jsonl'), `${preds.join('\n')}\n`);
    writeFileSync(join(dir, 'other.jsonl'), `${other.join('\n')}\n`);
    writeFileSync(join(dir, 'secret.txt'), 'outside the dataset');
    v = await startViewServer({ dataset: data, predictions: [join(dir, 'preds.jsonl'), join(dir, 'other.jsonl')], port: 0, log: (l) => log.push(l) });
    ctx = await launch();
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    await ctx?.close();
    await v?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('binds to 127.0.0.1 and refuses paths outside the dataset (403)', async () => {
    expect(v.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect((await rawGet(v.url, '/files/../secret.txt')).status).toBe(403);
    expect((await rawGet(v.url, '/files/%2e%2e/secret.txt')).status).toBe(403);
    expect((await rawGet(v.url, '/files/..%2fsecret.txt')).status).toBe(403);
    expect((await rawGet(v.url, '/files/%2fetc%2fpasswd')).status).toBe(403);
    const inside = await rawGet(v.url, '/files/qa.jsonl');
    expect(inside.status).toBe(200);
    expect(inside.body).toContain('speed_regime');
  });

  it('lists 1,000 clips (and records when the list painted), filters them, warns about predictions for other clips', async () => {
    const page = await ctx.newPage();
    await page.goto(v.url);
    await page.waitForSelector('body[data-ready]');
    const paint = await page.evaluate(() => (window as unknown as { __egogeo: { listPaintMs: number } }).__egogeo.listPaintMs);
    expect(Number.isFinite(paint) && paint > 0).toBe(true); // the figure bench/view.mjs reads
    expect(await page.locator('#list li').count()).toBe(1000);
    // The landing page: clips per source and the predictions file's scores per source.
    const row = async (src: string) => (await page.locator(`#summarytable tr[data-source="${src}"]`).locator('td').allTextContents()).map((t) => t.trim());
    expect((await row('nuscenes')).slice(0, 3)).toEqual(['nuscenes', '500', expect.stringMatching(/^500 · – \/ 0\.\d{3}$/)]);
    expect((await row('carla')).slice(0, 2)).toEqual(['carla', '500']);
    expect((await row('all')).slice(0, 3)).toEqual(['all', '1000', expect.stringMatching(/^1000 · – \/ 0\.\d{3}$/)]);
    expect(await page.locator('#summarytable th').nth(2).getAttribute('title')).toBe(join(dir, 'preds.jsonl'));
    await page.screenshot({ path: join(ARTIFACTS, 'list-1000.png') });

    // The predictions file for other clips: a warning in the page and in the log.
    await expect(page.locator('#warnings').textContent()).resolves.toContain('other.jsonl: none of its 5 clips is in the dataset');
    expect(log.some((l) => l.includes('other.jsonl: none of its 5 clips'))).toBe(true);

    await page.fill('#q', 'clip099');
    expect(await page.locator('#list li').count()).toBe(10);
    await page.fill('#q', '');
    await page.selectOption('#fsource', 'carla');
    expect(await page.locator('#list li').count()).toBe(500);
    await page.selectOption('#fsource', '');
    await page.selectOption('#fstatus', 'disagree');
    expect(await page.locator('#list li').count()).toBe(250);
    // Full ids on hover; one badge per clip that reads as what it counts.
    const first = page.locator('#list li').first();
    expect(await first.locator('.id').getAttribute('title')).toBe(await first.getAttribute('data-id'));
    expect(await first.locator('.tag.dis, .tag.near').first().textContent()).toMatch(/^\d+ ✗( \(\d+ near\))?$/);
    await page.selectOption('#fquestion', 'speed_regime');
    expect(await page.locator('#list li').count()).toBe(250);
    // A question alone (all clips): the badges and the count are that question's.
    await page.selectOption('#fstatus', '');
    expect(await page.locator('#count').textContent()).toBe('1000 of 1000 clips · speed_regime: 750 agree, 250 disagree');
    expect(await page.locator('#list li[data-id="clip0004"] .tag.dis').textContent()).toBe('✗');
    expect(await page.locator('#list li[data-id="clip0001"] .tag.ok').textContent()).toBe('✓');
    await page.selectOption('#fstatus', 'disagree');
    await page.selectOption('#fstatus', 'agree');
    expect(await page.locator('#list li').count()).toBe(750);
    await page.selectOption('#fquestion', 'braking_intensity');
    expect(await page.locator('#list li').count()).toBe(0);
    await page.selectOption('#fquestion', '');
    await page.selectOption('#fstatus', 'near'); // no ground truth: no near-threshold cases
    expect(await page.locator('#list li').count()).toBe(0);
    await page.selectOption('#fstatus', '');
    await page.close();
  });

  it('an unreadable frame is an error box for that clip (and a log line); a shared URL opens the clip', async () => {
    const page = await ctx.newPage();
    await page.goto(`${v.url}#clip=clip0000`);
    await page.waitForFunction(() => document.body.dataset.opened === 'clip0000', null, { timeout: 30_000 });
    const box = await page.locator('#clipErrors .errorbox').first().textContent();
    expect(box).toMatch(/^re-run \(a run’s defaults\): .*bad0\.jpg/);
    expect(log.some((l) => l.startsWith('clip clip0000:'))).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'unreadable-frame.png') });
    // j opens the next clip of the list (its frames are missing: an error box too).
    await page.keyboard.press('j');
    await page.waitForFunction(() => document.body.dataset.opened === 'clip0001', null, { timeout: 30_000 });
    expect(page.url()).toContain('#clip=clip0001');
    await expect(page.locator('#clipErrors').textContent()).resolves.toContain('missing frame');
    await page.keyboard.press('k');
    await page.waitForFunction(() => document.body.dataset.opened === 'clip0000', null, { timeout: 30_000 });
    await page.close();
  });
});

describe.skipIf(!HAS_BROWSER || !HAS_EGODYN_KITTI || !NATIVE_BUILT)('egogeo view on the shared KITTI windows', () => {
  let dir: string;
  let v: ViewServer;
  let ctx: Browser;
  let preds: string;
  const IDS = ['kitti00_000000', 'kitti00_000005', 'kitti00_000010'];
  beforeAll(async () => {
    ensureDist();
    dir = mkdtempSync(join(tmpdir(), 'egogeo-view-kitti-'));
    preds = join(dir, 'preds.jsonl');
    writeFileSync(join(dir, 'clips.json'), JSON.stringify(IDS));
    const r = spawnSync(process.execPath, [BIN, 'run', '--dataset', EGODYN_KITTI, '--clips', join(dir, 'clips.json'), '--workers', '1', '--no-progress', '-o', preds], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`egogeo run failed: ${r.stderr}`);
    v = await startViewServer({ dataset: EGODYN_KITTI, predictions: [preds], port: 0, log: () => {} });
    ctx = await launch();
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    await ctx?.close();
    await v?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows the frame with tracks and inliers, the plots, and the QA table equal to the predictions file', async () => {
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${v.url}#clip=${IDS[0]}`);
    await page.waitForFunction((id) => document.body.dataset.opened === id, IDS[0], { timeout: 60_000 });
    // Overlays on the frame: the engine's points, most of them inliers.
    const tracks = Number(await page.locator('#frame').getAttribute('data-tracks'));
    const inliers = Number(await page.locator('#frame').getAttribute('data-inliers'));
    expect(tracks).toBeGreaterThan(50);
    expect(inliers).toBeGreaterThan(0.5 * tracks);
    expect(inliers).toBeLessThanOrEqual(tracks);
    // Overlay toggle off: nothing drawn.
    await page.uncheck('#overlay');
    expect(await page.locator('#frame').getAttribute('data-tracks')).toBe('0');
    await page.check('#overlay');
    // Frames: → and ← step through them.
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => document.getElementById('frame')!.dataset.frame === '1');
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction(() => document.getElementById('frame')!.dataset.frame === '0');

    // Bird's-eye: ground truth, this engine run, the predictions file's trajectory.
    for (const s of ['truth', 'engine', 'run0']) {
      expect(Number(await page.locator(`#bev polyline[data-series="${s}"]`).getAttribute('data-points'))).toBeGreaterThan(10);
    }
    // The four dynamics series, each with truth and estimates; thresholds drawn.
    for (const p of ['speed', 'accel', 'yaw_rate', 'jerk']) {
      for (const s of ['truth', 'engine', 'run0']) {
        expect(Number(await page.locator(`[data-plot="${p}"] polyline[data-series="${s}"]`).getAttribute('data-points'))).toBeGreaterThan(10);
      }
    }
    // Each threshold is a line inside the axis or named by an arrow beyond it; labels do not overlap.
    const inAxis = await page.locator('[data-plot="yaw_rate"] line[data-threshold="yaw_rate_turn_direction"]').count();
    const beyond = (await page.locator('[data-plot="yaw_rate"] text[data-threshold-off]').evaluateAll((els) => els.flatMap((e) => e.getAttribute('data-threshold-off')!.split(' ')))).filter((q) => q === 'yaw_rate_turn_direction').length;
    expect(inAxis + beyond).toBe(2);
    for (const p of ['speed', 'accel', 'yaw_rate', 'jerk']) {
      const ys = await page.locator(`[data-plot="${p}"] text[data-threshold-label]`).evaluateAll((els) => els.map((e) => Number(e.getAttribute('y'))));
      ys.sort((a, b) => a - b).forEach((y, i) => {
        expect(y).toBeGreaterThan(0);
        expect(y).toBeLessThanOrEqual(170);
        if (i > 0) expect(y - ys[i - 1], `${p} threshold labels overlap`).toBeGreaterThanOrEqual(10);
      });
    }
    // The engine's line is drawn last (on top); the predictions file's trajectory is dashed.
    const order = await page.locator('#bev polyline').evaluateAll((els) => els.map((e) => e.getAttribute('data-series')));
    expect(order.indexOf('engine')).toBeGreaterThan(order.indexOf('run0'));
    expect(await page.locator('#bev polyline[data-series="run0"]').getAttribute('stroke-dasharray')).toBeTruthy();
    // The column of the predictions file names its file.
    expect(await page.locator('#qa thead th').nth(2).getAttribute('title')).toBe(preds);

    // The QA table: one row per question, the run's column equal to the predictions file.
    const recs = readFileSync(preds, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((r) => r.clip_id === IDS[0]);
    expect(recs.length).toBe(14);
    expect(await page.locator('#qa tbody tr').count()).toBe(14);
    for (const r of recs) {
      const row = page.locator(`#qa tbody tr[data-question="${r.question_id}"]`);
      expect((await row.locator('td[data-oracle]').textContent())!.trim()).toBe(String(r.oracle_label).toLowerCase());
      const cell = row.locator('td[data-run="0"]');
      const text = (await cell.textContent())!.replace(/ [✗≈]$/, '');
      expect(text).toBe(r.model_answer);
      const cls = (await cell.getAttribute('class')) ?? '';
      expect(cls === 'dis' || cls === 'near').toBe(r.model_answer.toLowerCase() !== String(r.oracle_label).toLowerCase());
      // The re-run column: the run's own task over the clip, so the run's answer again.
      expect((await row.locator('td[data-rerun]').textContent())!.trim()).toBe(r.model_answer ?? '(withheld)');
    }
    expect(await page.locator('#qa thead th').nth(3).textContent()).toBe('re-run as preds.jsonl was run');
    // Dynamics axes are at least their minimum span wide (speed: 2 m/s), so small offsets look small.
    const [lo, hi] = (await page.locator('[data-plot="speed"]').getAttribute('data-axis'))!.split(' ').map(Number);
    expect(hi - lo).toBeGreaterThanOrEqual(2);
    await page.screenshot({ path: join(ARTIFACTS, 'kitti-clip.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('opens clips by click (tracks drawn, open and engine times recorded); j / k move through the list; the URL names the clip', async () => {
    const page = await ctx.newPage();
    await page.goto(v.url);
    await page.waitForSelector('body[data-ready]');
    // Clips nobody has opened yet (no engine result cached), by click.
    for (const id of ['kitti00_000100', 'kitti00_000200', 'kitti01_000050'].filter((id) => v.data.byId.has(id)).slice(0, 3)) {
      await page.click(`#list li[data-id="${id}"]`);
      await page.waitForFunction((x) => document.body.dataset.opened === x, id, { timeout: 60_000 });
      const { openMs, engineMs } = await page.evaluate(() => {
        const g = (window as unknown as { __egogeo: { openMs: number; detail: { ms: { engine: number } } } }).__egogeo;
        return { openMs: g.openMs, engineMs: g.detail.ms.engine };
      });
      expect(engineMs).toBeGreaterThan(0); // the figures bench/view.mjs reads
      expect(openMs).toBeGreaterThanOrEqual(engineMs);
      expect(page.url()).toContain(`#clip=${id}`);
      expect(Number(await page.locator('#frame').getAttribute('data-tracks'))).toBeGreaterThan(0);
    }
    const cur = await page.evaluate(() => (window as unknown as { __egogeo: { cur: string } }).__egogeo.cur);
    const ids = v.data.clips.map((c) => c.id);
    await page.keyboard.press('j');
    const next = ids[ids.indexOf(cur) + 1];
    await page.waitForFunction((x) => document.body.dataset.opened === x, next, { timeout: 60_000 });
    expect(page.url()).toContain(`#clip=${next}`);
    await page.keyboard.press('k');
    await page.waitForFunction((x) => document.body.dataset.opened === x, cur, { timeout: 60_000 });
    await page.close();
  });
});

describe.skipIf(!HAS_BROWSER || !NATIVE_BUILT)('egogeo view: two predictions files, each banner naming its own', () => {
  let dir: string;
  let v: ViewServer;
  let ctx: Browser;
  beforeAll(async () => {
    ensureDist();
    dir = mkdtempSync(join(tmpdir(), 'egogeo-view-two-'));
    const ds = syntheticDataset(join(dir, 'ds'), [{ id: 'noroad', speed: 10, yawRate: 0.1, seed: 3, frames: 21 }]);
    flattenRoad(ds, 'noroad'); // egogeo's scale fails on it: its speed answer withheld
    for (const [out, extra] of [['vo.jsonl', ['--method', 'vo-proxy']], ['ego.jsonl', []]] as const) {
      const r = spawnSync(process.execPath, [BIN, 'run', '--dataset', ds, ...extra, '--workers', '1', '--no-progress', '-o', join(dir, out)], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`egogeo run failed: ${r.stderr}`);
    }
    v = await startViewServer({ dataset: ds, predictions: [join(dir, 'vo.jsonl'), join(dir, 'ego.jsonl')], port: 0, log: () => {} });
    ctx = await launch();
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    await ctx?.close();
    await v?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the failed verdict is ego.jsonl's, the re-run vo.jsonl's; the speed axis of a standing estimate spans 2 m/s from 0", async () => {
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${v.url}#clip=noroad`);
    // (The rendered PGM frames are not browser images: the page is complete once the table is drawn.)
    await page.waitForFunction(() => document.querySelectorAll('#qa tbody tr').length > 0, null, { timeout: 60_000 });
    expect(await page.locator('#list li[data-id="noroad"] .tag.bad').getAttribute('title')).toBe('ego.jsonl: estimate failed: scale collapsed: 20 of 20 moving pairs have no metric distance');
    const boxes = await page.locator('#clipErrors .errorbox').allTextContents();
    expect(boxes).toContain('ego.jsonl: its estimate failed: scale collapsed: 20 of 20 moving pairs have no metric distance (its scale-dependent answers rest on no measured scale)');
    expect(boxes.some((b) => b.startsWith('vo.jsonl'))).toBe(false);
    expect(await page.locator('#status').textContent()).toContain('re-run as vo.jsonl was run: vo-proxy, 10 frames, the 6-question subset');
    expect(await page.locator('#qa thead th').nth(4).textContent()).toBe('re-run as vo.jsonl was run');
    expect(await page.locator('#warnings').textContent()).toContain("the page re-runs clips as vo.jsonl was run (vo-proxy, 10 frames, the 6-question subset), its answers and tracks are vo.jsonl's");
    // speed_regime: not a vo-proxy question (–); ego.jsonl answered it from its failed estimate (no --abstain).
    const row = page.locator('#qa tbody tr[data-question="speed_regime"]');
    expect((await row.locator('td[data-rerun]').textContent())!.trim()).toBe('–');
    expect((await row.locator('td[data-run="1"]').textContent())!.trim()).toMatch(/^stopped/);
    const [lo, hi] = (await page.locator('[data-plot="speed"]').getAttribute('data-axis'))!.split(' ').map(Number);
    expect(lo).toBe(0);
    expect(hi).toBeGreaterThanOrEqual(2);
    await page.screenshot({ path: join(ARTIFACTS, 'two-predictions.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });
});
