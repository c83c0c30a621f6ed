/**
 * The report's plots as plain SVG text (no plotting library): grouped horizontal bars, stacked
 * bars, and ground-truth-vs-estimate trajectory panels. Deterministic output for the same input.
 */

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f'];
const FONT = 'font-family="Helvetica, Arial, sans-serif"';

export const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const n = (v: number): string => (Number.isFinite(v) ? String(Math.round(v * 100) / 100) : '0');

function frame(width: number, height: number, title: string, body: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

function legend(series: string[], x: number, y: number, colors: string[]): string[] {
  const out: string[] = [];
  let cx = x;
  series.forEach((s, i) => {
    out.push(`<rect x="${n(cx)}" y="${n(y - 10)}" width="12" height="12" fill="${colors[i % colors.length]}"/>`);
    out.push(`<text x="${n(cx + 16)}" y="${n(y)}">${esc(s)}</text>`);
    cx += 28 + s.length * 7;
  });
  return out;
}

/** An axis maximum that splits into 4 round steps (1, 2, 2.5 or 5 × 10^k) at or above `v`. */
export function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const raw = v / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw - 1e-12)!;
  return step * 4;
}

export interface BarOptions {
  title: string;
  /** Axis maximum (default: 1, for rates). */
  max?: number;
  /** Axis label. */
  axis?: string;
  colors?: string[];
  /** Stack the series instead of grouping them. */
  stacked?: boolean;
  /** Value labels after the bars. */
  labels?: boolean;
}

/** Horizontal bars: one row per category, one bar (or stack segment) per series. */
export function barChart(categories: string[], series: string[], values: number[][], o: BarOptions): string {
  const colors = o.colors ?? PALETTE;
  const labelW = Math.max(80, ...categories.map((c) => c.length * 7 + 12));
  const plotW = 520;
  const barH = o.stacked ? 16 : 12;
  const rowH = o.stacked ? barH + 10 : series.length * barH + 10;
  const top = 58;
  const width = labelW + plotW + 70;
  const height = top + categories.length * rowH + 40;
  const max = o.max ?? niceMax(Math.max(0, ...values.map((row) => (o.stacked ? row.reduce((a, b) => a + b, 0) : Math.max(...row.filter(Number.isFinite))))));
  const sx = (v: number) => (Math.max(0, v) / max) * plotW;
  const body: string[] = [...legend(series, labelW, 44, colors)];
  for (let k = 0; k <= 4; k++) {
    const x = labelW + (plotW * k) / 4;
    body.push(`<line x1="${n(x)}" y1="${top - 4}" x2="${n(x)}" y2="${n(height - 34)}" stroke="#ddd"/>`);
    body.push(`<text x="${n(x)}" y="${n(height - 20)}" text-anchor="middle" fill="#555">${n((max * k) / 4)}</text>`);
  }
  if (o.axis) body.push(`<text x="${n(labelW + plotW / 2)}" y="${n(height - 4)}" text-anchor="middle" fill="#555">${esc(o.axis)}</text>`);
  categories.forEach((c, i) => {
    const y0 = top + i * rowH;
    body.push(`<text x="${labelW - 8}" y="${n(y0 + rowH / 2)}" text-anchor="end" dominant-baseline="middle">${esc(c)}</text>`);
    let acc = 0;
    series.forEach((s, j) => {
      const v = values[i][j];
      if (!Number.isFinite(v)) return;
      const x = labelW + (o.stacked ? sx(acc) : 0);
      const y = o.stacked ? y0 + 2 : y0 + 2 + j * barH;
      const w = sx(v);
      body.push(`<rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${barH - 2}" fill="${colors[j % colors.length]}"><title>${esc(`${c} · ${s}: ${v}`)}</title></rect>`);
      if (o.labels && !o.stacked) body.push(`<text x="${n(x + w + 4)}" y="${n(y + barH / 2)}" dominant-baseline="middle" font-size="10" fill="#333">${v.toFixed(3)}</text>`);
      acc += v;
    });
    if (o.labels && o.stacked) body.push(`<text x="${n(labelW + sx(acc) + 4)}" y="${n(y0 + 2 + barH / 2)}" dominant-baseline="middle" font-size="10" fill="#333">${n(acc)}</text>`);
  });
  return frame(width, height, o.title, body);
}

export interface TrajectoryPanel {
  title: string;
  gt: { x: number[]; y: number[] };
  estimate: { x: number[]; y: number[] };
}

/**
 * Panels of planar trajectories (X forward up the page, Y left to the left, equal axes), ground
 * truth in black, the estimate in colour, a dot at the start.
 */
export function trajectoryPanels(panels: TrajectoryPanel[], title: string): string {
  const cols = Math.min(3, Math.max(1, panels.length));
  const rows = Math.max(1, Math.ceil(panels.length / cols));
  const size = 260, pad = 34, top = 58;
  const width = cols * size, height = top + rows * size;
  const body: string[] = [...legend(['ground truth', 'estimate'], 12, 44, ['#222', PALETTE[3]])];
  panels.forEach((p, k) => {
    const ox = (k % cols) * size, oy = top + Math.floor(k / cols) * size;
    // Screen: right = −Y, up = +X.
    const us = [...p.gt.y, ...p.estimate.y].map((v) => -v), vs = [...p.gt.x, ...p.estimate.x];
    const finite = (a: number[]) => a.filter(Number.isFinite);
    const u0 = Math.min(...finite(us)), u1 = Math.max(...finite(us)), v0 = Math.min(...finite(vs)), v1 = Math.max(...finite(vs));
    const span = Math.max(u1 - u0, v1 - v0, 1);
    const scale = (size - 2 * pad) / span;
    const cu = (u0 + u1) / 2, cv = (v0 + v1) / 2;
    const px = (x: number, y: number) => `${n(ox + size / 2 + (-y - cu) * scale)},${n(oy + size / 2 - (x - cv) * scale + 6)}`;
    const line = (t: { x: number[]; y: number[] }, color: string, dash = '') =>
      `<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${t.x.map((x, i) => px(x, t.y[i])).join(' ')}"/>`;
    body.push(`<rect x="${ox + 4}" y="${oy + 4}" width="${size - 8}" height="${size - 8}" fill="none" stroke="#ccc"/>`);
    body.push(`<text x="${ox + size / 2}" y="${oy + 20}" text-anchor="middle" font-size="11">${esc(p.title)}</text>`);
    body.push(line(p.gt, '#222'));
    body.push(line(p.estimate, PALETTE[3], ' stroke-dasharray="5,3"'));
    const [sx0, sy0] = px(p.gt.x[0], p.gt.y[0]).split(',');
    body.push(`<circle cx="${sx0}" cy="${sy0}" r="3.5" fill="#222"/>`);
    body.push(`<text x="${ox + size - 10}" y="${oy + size - 10}" text-anchor="end" font-size="10" fill="#777">span ${n(span)} m</text>`);
  });
  if (panels.length === 0) body.push(`<text x="${width / 2}" y="${top + 40}" text-anchor="middle">no clip with both ground truth and estimate</text>`);
  return frame(Math.max(width, 300), height, title, body);
}
