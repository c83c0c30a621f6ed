/**
 * The report's plots as plain SVG text (no plotting library): grouped horizontal bars, stacked
 * bars, ground-truth-vs-estimate trajectory panels and annotated heatmaps. Deterministic output for
 * the same input. `writePlots` writes them with PNG copies (rendered by `sharp` when installed).
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f'];
const FONT = 'font-family="Helvetica, Arial, sans-serif"';

export const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const n = (v: number): string => (Number.isFinite(v) ? String(Math.round(v * 100) / 100) : '0');

/** Average advance of a bold 15 px Helvetica/Arial character (px): a generous estimate, so a title never runs past the edge. */
const TITLE_CHAR_PX = 8.8;
const TITLE_LINE_PX = 19;

/** A title broken at spaces into lines that fit `width` (a word longer than a line is cut with an ellipsis). */
export function titleLines(title: string, width: number): string[] {
  const max = Math.max(8, Math.floor((width - 24) / TITLE_CHAR_PX));
  const lines: string[] = [];
  let cur = '';
  for (const word of title.split(' ')) {
    const w = word.length > max ? `${word.slice(0, max - 1)}…` : word;
    if (cur && cur.length + 1 + w.length > max) {
      lines.push(cur);
      cur = w;
    } else cur = cur ? `${cur} ${w}` : w;
  }
  if (cur) lines.push(cur);
  return lines;
}

/**
 * The figure: white ground, the title on as many lines as it needs (the body, laid out below one
 * title line, moves down by the extra lines and the figure grows by as much).
 */
function frame(width: number, height: number, title: string, body: string[]): string {
  const lines = titleLines(title, width);
  const extra = (lines.length - 1) * TITLE_LINE_PX;
  const h = height + extra;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${h}" viewBox="0 0 ${width} ${h}" ${FONT} font-size="12">`,
    // The whole title once, unbroken (screen readers, search); the drawn lines below.
    `<title>${esc(title)}</title>`,
    `<rect width="${width}" height="${h}" fill="white"/>`,
    ...lines.map((l, i) => `<text x="${width / 2}" y="${22 + i * TITLE_LINE_PX}" text-anchor="middle" font-size="15" font-weight="bold">${esc(l)}</text>`),
    ...(extra > 0 ? [`<g transform="translate(0 ${extra})">`, ...body, '</g>'] : body),
    '</svg>',
    '',
  ].join('\n');
}

const LEGEND_ROW_PX = 18;

/**
 * Legend entries from `x` on the row at `y`; an entry that would pass `right` starts a new row at
 * `wrapX` (LEGEND_ROW_PX lower). Returns the SVG and the number of rows used.
 */
function legend(series: string[], x: number, y: number, colors: string[], right = Infinity, wrapX = x): { svg: string[]; rows: number } {
  const out: string[] = [];
  let cx = x, cy = y, rows = 1, onRow = 0;
  series.forEach((s, i) => {
    const w = 28 + s.length * 7;
    if (onRow > 0 && cx + w - 12 > right) {
      cx = wrapX;
      cy += LEGEND_ROW_PX;
      rows++;
      onRow = 0;
    }
    onRow++;
    out.push(`<rect x="${n(cx)}" y="${n(cy - 10)}" width="12" height="12" fill="${colors[i % colors.length]}"/>`);
    out.push(`<text x="${n(cx + 16)}" y="${n(cy)}">${esc(s)}</text>`);
    cx += w;
  });
  return { svg: out, rows };
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
  /** Per category and series, an interval [lo, hi] drawn as a whisker over the bar (grouped bars). */
  intervals?: ([number, number] | null)[][];
}

/** Horizontal bars: one row per category, one bar (or stack segment) per series. */
export function barChart(categories: string[], series: string[], values: number[][], o: BarOptions): string {
  const colors = o.colors ?? PALETTE;
  const labelW = Math.max(80, ...categories.map((c) => c.length * 7 + 12));
  const plotW = 520;
  const barH = o.stacked ? 16 : 12;
  const rowH = o.stacked ? barH + 10 : series.length * barH + 10;
  const width = labelW + plotW + 70;
  // The legend from the plot's left edge, wrapping (from the figure's left) before the right edge; the plot starts below it.
  const leg = legend(series, labelW, 44, colors, width - 10, 12);
  const top = 58 + (leg.rows - 1) * LEGEND_ROW_PX;
  const height = top + categories.length * rowH + 40;
  const max = o.max ?? niceMax(Math.max(0, ...values.map((row) => (o.stacked ? row.reduce((a, b) => a + b, 0) : Math.max(...row.filter(Number.isFinite))))));
  const sx = (v: number) => (Math.max(0, v) / max) * plotW;
  const body: string[] = [...leg.svg];
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
      const iv = o.stacked ? null : (o.intervals?.[i]?.[j] ?? null);
      const tip = iv ? `${c} · ${s}: ${v} [${iv[0]}, ${iv[1]}]` : `${c} · ${s}: ${v}`;
      body.push(`<rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${barH - 2}" fill="${colors[j % colors.length]}"><title>${esc(tip)}</title></rect>`);
      let end = x + w;
      if (iv) {
        const ym = y + (barH - 2) / 2, x1 = labelW + sx(iv[0]), x2 = labelW + sx(iv[1]);
        body.push(`<path d="M${n(x1)} ${n(ym)}H${n(x2)}M${n(x1)} ${n(ym - 4)}V${n(ym + 4)}M${n(x2)} ${n(ym - 4)}V${n(ym + 4)}" stroke="#222" stroke-width="1.2" fill="none" class="interval"/>`);
        end = Math.max(end, x2);
      }
      if (o.labels && !o.stacked) body.push(`<text x="${n(end + 4)}" y="${n(y + barH / 2)}" dominant-baseline="middle" font-size="10" fill="#333">${v.toFixed(3)}</text>`);
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

/** A grid of square panels, three to a row (300 px each: 52 left for the axis, 14 right), `head` and `foot` px of text per panel, `top` px above. */
function panelGrid(n: number, o: { head: number; foot: number; top: number }) {
  const cols = Math.min(3, Math.max(1, n));
  const rows = Math.max(1, Math.ceil(n / cols));
  const size = 300, left = 52, right = 14;
  const plot = size - left - right;
  const cell = o.head + plot + o.foot;
  return { cols, rows, size, left, right, ...o, plot, cell, width: Math.max(cols * size, 560), height: o.top + rows * cell };
}

/** `text` cut with an ellipsis to fit `px` at about `charPx` per character. */
const fit = (text: string, px: number, charPx = 6.2) => (text.length * charPx <= px ? text : `${text.slice(0, Math.max(1, Math.floor(px / charPx) - 1))}…`);

/**
 * Panels of planar trajectories (X forward up the page, Y left to the left, equal axes), ground
 * truth in black, the estimate in colour, a dot at the start.
 */
export function trajectoryPanels(panels: TrajectoryPanel[], title: string): string {
  // Each panel: two title lines, a square plot with labelled axes (metres: right, forward).
  const { cols, size, left, right, head, foot, top, plot, cell, width, height } = panelGrid(panels.length, { head: 40, foot: 40, top: 58 });
  const body: string[] = [...legend(['ground truth', 'estimate (dashed)', 'start'], 12, 44, ['#222', PALETTE[3], '#222']).svg];
  panels.forEach((p, k) => {
    const ox = (k % cols) * size, oy = top + Math.floor(k / cols) * cell;
    // Screen: right = −Y (the car's right), up = +X (forward), one scale for both.
    const us = [...p.gt.y, ...p.estimate.y].map((v) => -v), vs = [...p.gt.x, ...p.estimate.x];
    const finite = (a: number[]) => a.filter(Number.isFinite);
    const u0 = Math.min(...finite(us)), u1 = Math.max(...finite(us)), v0 = Math.min(...finite(vs)), v1 = Math.max(...finite(vs));
    const span = Math.max(u1 - u0, v1 - v0, 1) * 1.08;
    const scale = plot / span;
    const cu = (u0 + u1) / 2, cv = (v0 + v1) / 2;
    const x0 = ox + left, y0 = oy + head; // the plot's top-left corner
    const sx = (u: number) => x0 + plot / 2 + (u - cu) * scale, sy = (v: number) => y0 + plot / 2 - (v - cv) * scale;
    const px = (x: number, y: number) => `${n(sx(-y))},${n(sy(x))}`;
    const line = (t: { x: number[]; y: number[] }, color: string, dash = '') =>
      `<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${t.x.map((x, i) => px(x, t.y[i])).join(' ')}"/>`;
    // Title: the clip id on one line (cut to fit; the full id is the element's tooltip), the rest below.
    const [id, ...rest] = p.title.split(' ');
    body.push(`<text x="${ox + size / 2}" y="${oy + 14}" text-anchor="middle" font-size="11" font-weight="bold"><title>${esc(id)}</title>${esc(fit(id, size - 10, 7.4))}</text>`);
    body.push(`<text x="${ox + size / 2}" y="${oy + 29}" text-anchor="middle" font-size="11">${esc(fit(rest.join(' '), size - 10))}</text>`);
    body.push(`<rect x="${x0}" y="${y0}" width="${plot}" height="${plot}" fill="none" stroke="#bbb"/>`);
    // Axes: three ticks each at round values, labelled in metres.
    const step = niceMax(span / 2) / 2;
    for (let t = Math.ceil((cu - span / 2) / step) * step; t <= cu + span / 2 + 1e-9; t += step) {
      body.push(`<line x1="${n(sx(t))}" y1="${y0 + plot}" x2="${n(sx(t))}" y2="${y0 + plot + 4}" stroke="#888"/>`);
      body.push(`<text x="${n(sx(t))}" y="${y0 + plot + 15}" text-anchor="middle" font-size="10" fill="#555">${n(t)}</text>`);
    }
    for (let t = Math.ceil((cv - span / 2) / step) * step; t <= cv + span / 2 + 1e-9; t += step) {
      body.push(`<line x1="${x0 - 4}" y1="${n(sy(t))}" x2="${x0}" y2="${n(sy(t))}" stroke="#888"/>`);
      body.push(`<text x="${x0 - 6}" y="${n(sy(t) + 3)}" text-anchor="end" font-size="10" fill="#555">${n(t)}</text>`);
    }
    body.push(`<text x="${x0 + plot / 2}" y="${y0 + plot + 30}" text-anchor="middle" font-size="10" fill="#555">right (m)</text>`);
    body.push(`<text x="${ox + 12}" y="${y0 + plot / 2}" text-anchor="middle" font-size="10" fill="#555" transform="rotate(-90 ${ox + 12} ${y0 + plot / 2})">forward (m)</text>`);
    body.push(line(p.gt, '#222'));
    body.push(line(p.estimate, PALETTE[3], ' stroke-dasharray="5,3"'));
    const [sx0, sy0] = px(p.gt.x[0], p.gt.y[0]).split(',');
    body.push(`<circle cx="${sx0}" cy="${sy0}" r="3.5" fill="#222"/>`);
  });
  if (panels.length === 0) body.push(`<text x="${width / 2}" y="${top + 40}" text-anchor="middle">no clip with both ground truth and estimate</text>`);
  return frame(width, height, title, body);
}

export interface HeatmapOptions {
  title: string;
  /** Cell text, e.g. a percentage. */
  format: (v: number) => string;
  /** What the colour means (under the plot). */
  legend: string;
  /** Colour scale maximum (default: the largest value, at least 0.05). */
  max?: number;
}

/** Rows × columns of values, white to red (the reference's YlOrRd), each cell annotated. */
export function heatmap(rows: string[], cols: string[], values: number[][], o: HeatmapOptions): string {
  const labelW = Math.max(80, ...rows.map((r) => r.length * 7 + 12));
  const cellW = 54, cellH = 24, top = 58;
  const width = labelW + cols.length * cellW + 20;
  const height = top + rows.length * cellH + 56;
  const max = o.max ?? Math.max(0.05, ...values.flat().filter(Number.isFinite));
  // YlOrRd anchors: light yellow, orange, dark red.
  const stops: [number, number, number][] = [[255, 255, 204], [253, 141, 60], [128, 0, 38]];
  const color = (v: number): string => {
    const t = Math.min(1, Math.max(0, v / max)) * (stops.length - 1);
    const i = Math.min(stops.length - 2, Math.floor(t)), f = t - i;
    const c = stops[i].map((a, k) => Math.round(a + (stops[i + 1][k] - a) * f));
    return `rgb(${c.join(',')})`;
  };
  const body: string[] = [];
  cols.forEach((c, j) => body.push(`<text x="${n(labelW + j * cellW + cellW / 2)}" y="${top - 8}" text-anchor="middle" font-size="11">${esc(c)}</text>`));
  rows.forEach((r, i) => {
    const y = top + i * cellH;
    body.push(`<text x="${labelW - 8}" y="${n(y + cellH / 2)}" text-anchor="end" dominant-baseline="middle">${esc(r)}</text>`);
    cols.forEach((c, j) => {
      const v = values[i][j];
      const x = labelW + j * cellW;
      const fill = Number.isFinite(v) ? color(v) : '#eee';
      const dark = Number.isFinite(v) && v / max > 0.6;
      body.push(`<rect x="${n(x)}" y="${n(y)}" width="${cellW - 2}" height="${cellH - 2}" fill="${fill}"><title>${esc(`${r} · ${c}: ${Number.isFinite(v) ? o.format(v) : '–'}`)}</title></rect>`);
      body.push(`<text x="${n(x + cellW / 2 - 1)}" y="${n(y + cellH / 2)}" text-anchor="middle" dominant-baseline="middle" font-size="10" font-weight="bold" fill="${dark ? 'white' : '#222'}">${Number.isFinite(v) ? esc(o.format(v)) : '–'}</text>`);
    });
  });
  body.push(`<text x="${n(labelW + (cols.length * cellW) / 2)}" y="${n(height - 22)}" text-anchor="middle" fill="#555">${esc(o.legend)} (pale 0, dark red ≥ ${esc(o.format(max))})</text>`);
  return frame(width, height, o.title, body);
}

export interface LineSeries {
  name: string;
  /** [x, y] in data units, drawn in order; a single point is its marker alone. */
  points: [number, number][];
  color?: string;
  dashed?: boolean;
}

export interface LineOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  /** Where the x axis is labelled (default: every x of the series). */
  xTicks?: number[];
  /** A line of small print under the plot (what was measured, where). */
  note?: string;
}

/** Lines with markers over x and y axes from 0 (e.g. a throughput's scaling with workers). */
export function lineChart(series: LineSeries[], o: LineOptions): string {
  const left = 64, right = 24, plotW = 520, plotH = 300;
  const width = left + plotW + right;
  // Legend: a sample of each line with its name, wrapped into rows that fit the width.
  const legendRows: { x: number; s: LineSeries; color: string }[][] = [[]];
  let lx = left;
  series.forEach((s, i) => {
    const w = 36 + s.name.length * 7;
    if (lx + w > width - right && legendRows[legendRows.length - 1].length > 0) {
      legendRows.push([]);
      lx = left;
    }
    legendRows[legendRows.length - 1].push({ x: lx, s, color: s.color ?? PALETTE[i % PALETTE.length] });
    lx += w + 12;
  });
  const top = 46 + legendRows.length * 18;
  const height = top + plotH + (o.note ? 70 : 52);
  const xs = series.flatMap((s) => s.points.map((p) => p[0])).filter(Number.isFinite);
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).filter(Number.isFinite);
  // x from 0 (where linear scaling starts), a little room after the last point for its marker.
  const xMax = Math.max(1, ...xs) * 1.05;
  const yMax = niceMax(Math.max(0, ...ys));
  const sx = (x: number) => left + (x / xMax) * plotW;
  const sy = (y: number) => top + plotH - (Math.max(0, y) / yMax) * plotH;
  const body: string[] = [];
  legendRows.forEach((row, r) => {
    const y = 40 + r * 18;
    for (const { x, s, color } of row) {
      body.push(`<line x1="${n(x)}" y1="${y}" x2="${n(x + 22)}" y2="${y}" stroke="${color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="6,4" stroke-opacity="0.6"' : ''}/>`);
      body.push(`<text x="${n(x + 28)}" y="${y + 4}">${esc(s.name)}</text>`);
    }
  });
  for (let k = 0; k <= 4; k++) {
    const v = (yMax * k) / 4, y = sy(v);
    body.push(`<line x1="${left}" y1="${n(y)}" x2="${left + plotW}" y2="${n(y)}" stroke="#ddd"/>`);
    body.push(`<text x="${left - 6}" y="${n(y + 4)}" text-anchor="end" fill="#555">${n(v)}</text>`);
  }
  for (const t of [0, ...(o.xTicks ?? [...new Set(xs)].sort((a, b) => a - b))]) {
    body.push(`<line x1="${n(sx(t))}" y1="${top + plotH}" x2="${n(sx(t))}" y2="${top + plotH + 5}" stroke="#888"/>`);
    body.push(`<text x="${n(sx(t))}" y="${top + plotH + 18}" text-anchor="middle" fill="#555">${n(t)}</text>`);
  }
  body.push(`<path d="M${left} ${top}V${top + plotH}H${left + plotW}" stroke="#888" fill="none"/>`);
  body.push(`<text x="${n(left + plotW / 2)}" y="${top + plotH + 36}" text-anchor="middle" fill="#555">${esc(o.xLabel)}</text>`);
  body.push(`<text x="16" y="${n(top + plotH / 2)}" text-anchor="middle" fill="#555" transform="rotate(-90 16 ${n(top + plotH / 2)})">${esc(o.yLabel)}</text>`);
  if (o.note) body.push(`<text x="${n(width / 2)}" y="${height - 10}" text-anchor="middle" font-size="10" fill="#555">${esc(o.note)}</text>`);
  // Dashed (reference) lines first and lighter: a measured line on top of its reference stays visible.
  const drawn = series.map((s, i) => ({ s, color: s.color ?? PALETTE[i % PALETTE.length] }));
  for (const { s, color } of [...drawn.filter((d) => d.s.dashed), ...drawn.filter((d) => !d.s.dashed)]) {
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (pts.length > 1) body.push(`<polyline fill="none" stroke="${color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="6,4" stroke-opacity="0.6"' : ''} points="${pts.map(([x, y]) => `${n(sx(x))},${n(sy(y))}`).join(' ')}"/>`);
    for (const [x, y] of s.dashed ? [] : pts) body.push(`<circle cx="${n(sx(x))}" cy="${n(sy(y))}" r="4" fill="${color}"><title>${esc(`${s.name}: ${n(x)}, ${y.toPrecision(3)}`)}</title></circle>`);
  }
  return frame(width, height, o.title, body);
}

/** Several whole SVG documents (as the charts here write them) one above the other in one document, left-aligned. */
export function stackSvgs(svgs: readonly string[]): string {
  const size = (svg: string): [number, number] => {
    const m = /<svg[^>]*\swidth="([\d.]+)"[^>]*\sheight="([\d.]+)"/.exec(svg);
    if (!m) throw new Error('stackSvgs: a document without width and height');
    return [Number(m[1]), Number(m[2])];
  };
  const sizes = svgs.map(size);
  const width = Math.max(...sizes.map((s) => s[0]));
  const height = sizes.reduce((h, s) => h + s[1], 0);
  let y = 0;
  const parts = svgs.map((svg, i) => {
    const part = svg.trim().replace(/^<svg /, `<svg x="0" y="${y}" `);
    y += sizes[i][1];
    return part;
  });
  return [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`, `<rect width="${width}" height="${height}" fill="white"/>`, ...parts, '</svg>', ''].join('\n');
}

type Sharp = (input: Buffer, o: { density: number }) => { png(): { toFile(path: string): Promise<unknown>; toBuffer(): Promise<Buffer> } };

/** An SVG rendered to PNG bytes by `sharp` (at 144 dpi, as the report's copies); null without sharp. */
export async function svgToPng(text: string): Promise<Buffer | null> {
  const sharp = loadSharp();
  return sharp ? sharp(Buffer.from(text), { density: 144 }).png().toBuffer() : null;
}

/** `sharp`, when a dependency installed it (PNG copies of the plots); else null. */
function loadSharp(): Sharp | null {
  try {
    return createRequire(import.meta.url)('sharp') as Sharp;
  } catch {
    return null;
  }
}

/** Writes each SVG into `dir`, and a PNG copy of each when `sharp` is installed; returns the file names. */
export async function writePlots(dir: string, svgs: Record<string, string>): Promise<string[]> {
  const written: string[] = [];
  for (const [name, text] of Object.entries(svgs)) {
    writeFileSync(join(dir, name), text);
    written.push(name);
  }
  const sharp = loadSharp();
  if (sharp) {
    for (const [name, text] of Object.entries(svgs)) {
      const png = name.replace(/\.svg$/, '.png');
      await sharp(Buffer.from(text), { density: 144 }).png().toFile(join(dir, png));
      written.push(png);
    }
  }
  return written;
}

export interface ScatterPanel {
  title: string;
  /** A second, lighter title line. */
  subtitle?: string;
  /** [truth, estimate] per clip. */
  points: [number, number][];
  /** Drawn as lines on both axes (a label changes where a value crosses one). */
  threshold: number;
}

/**
 * Panels of estimate (y) against truth (x), equal axes over both, the diagonal y = x in grey and the
 * threshold on both axes dashed: points off the diagonal on one side are a bias; points between the
 * threshold lines' quadrants are the disagreements.
 */
export function scatterPanels(panels: ScatterPanel[], title: string): string {
  const { cols, size, left, right, head, foot, top, plot, cell, width, height } = panelGrid(panels.length, { head: 44, foot: 36, top: 40 });
  const body: string[] = [];
  panels.forEach((p, k) => {
    const ox = (k % cols) * size, oy = top + Math.floor(k / cols) * cell;
    const vals = [...p.points.flat(), p.threshold].filter(Number.isFinite);
    let lo = Math.min(...vals), hi = Math.max(...vals);
    if (!(hi > lo)) [lo, hi] = [lo - 1, hi + 1];
    const pad = (hi - lo) * 0.05;
    lo -= pad;
    hi += pad;
    const x0 = ox + left, y0 = oy + head;
    const sx = (v: number) => x0 + ((v - lo) / (hi - lo)) * plot, sy = (v: number) => y0 + plot - ((v - lo) / (hi - lo)) * plot;
    body.push(`<text x="${ox + size / 2}" y="${oy + 14}" text-anchor="middle" font-size="11" font-weight="bold"><title>${esc(p.title)}</title>${esc(fit(p.title, size - 10, 7.4))}</text>`);
    if (p.subtitle) body.push(`<text x="${ox + size / 2}" y="${oy + 29}" text-anchor="middle" font-size="11"><title>${esc(p.subtitle)}</title>${esc(fit(p.subtitle, size - 10, 6.6))}</text>`);
    body.push(`<rect x="${x0}" y="${y0}" width="${plot}" height="${plot}" fill="none" stroke="#bbb"/>`);
    body.push(`<line x1="${n(sx(lo))}" y1="${n(sy(lo))}" x2="${n(sx(hi))}" y2="${n(sy(hi))}" stroke="#bbb"/>`);
    if (Number.isFinite(p.threshold)) {
      body.push(`<line x1="${n(sx(p.threshold))}" y1="${y0}" x2="${n(sx(p.threshold))}" y2="${y0 + plot}" stroke="#e15759" stroke-dasharray="5,3"/>`);
      body.push(`<line x1="${x0}" y1="${n(sy(p.threshold))}" x2="${x0 + plot}" y2="${n(sy(p.threshold))}" stroke="#e15759" stroke-dasharray="5,3"/>`);
    }
    const step = niceMax((hi - lo) / 2) / 2;
    for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-12; t += step) {
      body.push(`<text x="${n(sx(t))}" y="${y0 + plot + 14}" text-anchor="middle" font-size="10" fill="#555">${n(t)}</text>`);
      body.push(`<text x="${x0 - 6}" y="${n(sy(t) + 3)}" text-anchor="end" font-size="10" fill="#555">${n(t)}</text>`);
    }
    body.push(`<text x="${x0 + plot / 2}" y="${y0 + plot + 29}" text-anchor="middle" font-size="10" fill="#555">ground truth</text>`);
    body.push(`<text x="${ox + 12}" y="${y0 + plot / 2}" text-anchor="middle" font-size="10" fill="#555" transform="rotate(-90 ${ox + 12} ${y0 + plot / 2})">estimate</text>`);
    for (const [a, b] of p.points) if (Number.isFinite(a) && Number.isFinite(b)) body.push(`<circle cx="${n(sx(a))}" cy="${n(sy(b))}" r="2.5" fill="${PALETTE[0]}" fill-opacity="0.7"/>`);
  });
  if (panels.length === 0) body.push(`<text x="${width / 2}" y="${top + 40}" text-anchor="middle">no clip with both ground truth and estimate</text>`);
  return frame(width, height, title, body);
}
