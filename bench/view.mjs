// `egogeo view` in a headless Chromium (Debian's chromium + playwright-core), timed — the figures
// test/view/view.test.ts records but does not bound:
//   - first paint of the clip list over a generated 1,000-clip dataset (ms after navigation start,
//     the page's own window.__egogeo.listPaintMs), over LOADS fresh page loads;
//   - opening a clip nobody has opened yet (engine run + frame, overlay, plots and QA table drawn:
//     __egogeo.openMs) and the engine's share of it (detail.ms.engine), for OPEN clips: the first
//     KITTI windows of ../shared/data/egodyn_kitti when it exists, else clips `egogeo synth` renders.
// Targets (README): list painted < 1 s; a clip opened < 1 s on a machine that is not oversubscribed.
//
//   npm run build && node bench/view.mjs [--loads 5] [--open 3]   → bench/results/view.json
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({ options: { loads: { type: 'string', default: '5' }, open: { type: 'string', default: '3' } } });
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin/egogeo.js');
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
if (!CHROMIUM) {
  console.error('bench/view.mjs: no chromium (apt-get install chromium)');
  process.exit(1);
}
if (!existsSync(join(ROOT, 'dist/view/server.js'))) {
  console.error('bench/view.mjs: build first (npm run build)');
  process.exit(1);
}
const { chromium } = await import('playwright-core');
const { startViewServer } = await import('../dist/view/server.js');

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bench-view-'));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const browser = await chromium.launchPersistentContext(join(tmp, 'profile'), {
  executablePath: CHROMIUM,
  headless: true,
  viewport: { width: 1400, height: 1000 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

// 1. The list: 1,000 clips (frames absent: the list needs none).
const big = join(tmp, 'big');
mkdirSync(big);
const idx = [], qa = [];
for (let i = 0; i < 1000; i++) {
  const id = `clip${String(i).padStart(4, '0')}`;
  idx.push(JSON.stringify({ clip_id: id, source: i % 2 ? 'carla' : 'nuscenes', frame_paths: [0, 1, 2].map((k) => `frames/${id}_${k}.jpg`), frame_timestamps: [0, 0.1, 0.2] }));
  qa.push(JSON.stringify({ qa_id: `qa${i}`, clip_id: id, question_id: 'speed_regime', category: 'direct_dynamics', answer: 'urban' }));
}
writeFileSync(join(big, 'clips_index.jsonl'), `${idx.join('\n')}\n`);
writeFileSync(join(big, 'qa.jsonl'), `${qa.join('\n')}\n`);
let v = await startViewServer({ dataset: big, predictions: [], port: 0, log: () => {} });
const paints = [];
for (let k = 0; k < Number(args.loads); k++) {
  const page = await browser.newPage();
  await page.goto(v.url);
  await page.waitForSelector('body[data-ready]');
  paints.push(await page.evaluate(() => window.__egogeo.listPaintMs));
  await page.close();
}
await v.close();
console.log(`list of 1,000 clips painted ${paints.map((p) => p.toFixed(0)).join(', ')} ms after navigation (median ${median(paints).toFixed(0)})`);

// 2. Opening clips.
const kitti = join(ROOT, '../shared/data/egodyn_kitti');
let dataset, what;
if (existsSync(join(kitti, 'clips_index.jsonl'))) {
  dataset = kitti;
  what = 'KITTI windows of egodyn_kitti (31 frames, 1241x376 JPEG)';
} else {
  dataset = join(tmp, 'synth');
  const r = spawnSync(process.execPath, [BIN, 'synth', '--out', dataset, '--clips', String(Number(args.open) + 1), '--seed', '1', '--preset', 'carla', '--no-progress'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`egogeo synth failed: ${r.stderr}`);
  what = 'clips from egogeo synth --preset carla (31 frames, JPEG)';
}
v = await startViewServer({ dataset, predictions: [], port: 0, log: () => {} });
const ids = v.data.clips.map((c) => c.id).slice(1, 1 + Number(args.open));
const page = await browser.newPage();
await page.goto(v.url);
await page.waitForSelector('body[data-ready]');
const opens = [];
for (const id of ids) {
  await page.click(`#list li[data-id="${id}"]`);
  await page.waitForFunction((x) => document.body.dataset.opened === x, id, { timeout: 120_000 });
  opens.push(await page.evaluate(() => ({ openMs: window.__egogeo.openMs, engineMs: window.__egogeo.detail.ms.engine })));
}
await page.close();
await v.close();
await browser.close();
rmSync(tmp, { recursive: true, force: true });
const load = loadavg()[0];
console.log(`${what}: opened in ${opens.map((o) => `${o.openMs.toFixed(0)} ms (engine ${o.engineMs} ms)`).join(', ')}; load average ${load.toFixed(1)} on ${cpus().length} cores`);

mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
writeFileSync(
  join(ROOT, 'bench/results/view.json'),
  `${JSON.stringify(
    {
      command: `node bench/view.mjs --loads ${args.loads} --open ${args.open}`,
      date: new Date().toISOString(),
      ...measuredWith(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version, loadAverage1m: load },
      listPaintMs: paints,
      open: { dataset: what, clips: ids.map((id, i) => ({ id, ...opens[i] })) },
      targets: { listPaintMsBelow: 1000, openMsBelow: 1000, met: { list: median(paints) < 1000, open: Math.min(...opens.map((o) => o.openMs)) < 1000 } },
    },
    null,
    2,
  )}\n`,
);
