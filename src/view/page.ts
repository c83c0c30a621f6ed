/**
 * The clip viewer's page: one HTML document with its CSS and JS inline (no CDN, works offline).
 * It fetches /api/clips once, renders the filterable list, and on opening a clip (#clip=ID)
 * /api/clip/ID: frames on a <canvas> with the tracked features and the essential-matrix inliers
 * drawn from JSON points, the bird's-eye trajectories and the dynamics series as SVG, the QA table.
 * Keys: j / k next / previous clip in the filtered list, ← / → previous / next frame, space plays.
 * The script avoids backticks and template placeholders (it lives in a template string), except
 * the one that inlines `axisRange` (written in TS here so that it is tested as a function).
 */

/**
 * The smallest span each dynamics axis shows (its unit): narrower data is centred on an axis this
 * wide, so that a 0.2 m/s offset between truth and estimate reads as small, not as a failure.
 */
export const MIN_SPAN: Record<'speed' | 'accel' | 'yaw_rate' | 'jerk', number> = { speed: 2, accel: 1, yaw_rate: 0.1, jerk: 2 };

/**
 * A dynamics plot's value axis [low, high] for data spanning [lo, hi]: at least `minSpan` wide
 * (centred on the data), 8% padding each side, and not below `floor` when no value is (speed: 0).
 * Inlined into the page's script (plain ES5 once compiled: no types survive, no backticks).
 */
export function axisRange(lo: number, hi: number, minSpan: number, floor: number | null): [number, number] {
  const dataLow = lo;
  if (!(hi - lo >= minSpan)) {
    const mid = (lo + hi) / 2;
    lo = mid - minSpan / 2;
    hi = mid + minSpan / 2;
  }
  const pad = (hi - lo) * 0.08;
  let low = lo - pad;
  let high = hi + pad;
  if (floor !== null && dataLow >= floor && low < floor) {
    // Shift up rather than show an impossible band (negative speeds) below the data.
    high += floor - low;
    low = floor;
  }
  return [low, high];
}

export const PAGE = String.raw`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>egogeo view</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
*{box-sizing:border-box}
body{margin:0;font:13px/1.35 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2330;background:#f4f5f7;display:flex;height:100vh;overflow:hidden}
#side{width:300px;min-width:300px;display:flex;flex-direction:column;border-right:1px solid #d5d9e0;background:#fff}
#filters{padding:8px;border-bottom:1px solid #e3e6eb;display:grid;gap:5px}
#filters input,#filters select{width:100%;padding:4px 6px;font:inherit;border:1px solid #c4c9d2;border-radius:4px;background:#fff}
#count{color:#667;font-size:12px}
#list{list-style:none;margin:0;padding:0;overflow-y:auto;flex:1}
#list li{padding:4px 8px;border-bottom:1px solid #f0f1f4;cursor:pointer;display:flex;justify-content:space-between;gap:6px;white-space:nowrap}
#list li:hover{background:#f1f5fd}
#list li.sel{background:#dde8fb}
#list .id{overflow:hidden;text-overflow:ellipsis;font-family:ui-monospace,monospace;font-size:12px}
.tag{font-size:11px;padding:0 5px;border-radius:8px;background:#eef0f3;color:#445}
.tag.dis{background:#fde2e1;color:#a3211b}.tag.near{background:#fdf1cc;color:#7a5a00}.tag.ok{background:#dff3e4;color:#1d6b34}.tag.bad{background:#a3211b;color:#fff}
#main{flex:1;overflow-y:auto;padding:10px 16px}
#warnings div{background:#fff4d6;border:1px solid #e9c46a;padding:6px 10px;margin-bottom:6px;border-radius:4px}
.errorbox{background:#fde2e1;border:1px solid #d9534f;color:#7d1713;padding:8px 10px;margin:6px 0;border-radius:4px;font-family:ui-monospace,monospace;white-space:pre-wrap}
h1{font-size:17px;margin:4px 0 8px;font-family:ui-monospace,monospace}
h2{font-size:13px;margin:12px 0 4px;text-transform:uppercase;letter-spacing:.04em;color:#556}
#top{display:flex;gap:14px;flex-wrap:wrap;align-items:flex-start}
#framebox{flex:1 1 560px;max-width:900px}
#frame{width:100%;background:#222;display:block;border-radius:3px;min-height:120px}
#controls{display:flex;gap:8px;align-items:center;margin:4px 0;flex-wrap:wrap}
#controls input[type=range]{flex:1;min-width:150px}
button{font:inherit;padding:2px 9px;border:1px solid #c4c9d2;border-radius:4px;background:#fff;cursor:pointer}
#bev{width:330px;height:330px;background:#fff;border:1px solid #d5d9e0;border-radius:3px}
#plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:8px}
.plot{background:#fff;border:1px solid #d5d9e0;border-radius:3px}
.plot svg{width:100%;height:170px;display:block}
svg text{font:10px system-ui,sans-serif;fill:#556}
.legend{display:flex;gap:10px;flex-wrap:wrap;font-size:12px;margin:4px 0}
.legend span::before{content:"";display:inline-block;width:14px;height:3px;margin-right:4px;vertical-align:middle;background:var(--c)}
table{border-collapse:collapse;background:#fff;font-size:12px;margin-bottom:30px}
th,td{border:1px solid #e0e3e8;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f3f4f7}
tr.chosen td{outline:2px solid #4a78c2;outline-offset:-2px}
td.dis{background:#fde2e1;font-weight:600}td.near{background:#fdf1cc;font-weight:600}td.agree{background:#e8f6ec}
.muted{color:#889}
#status{color:#667;font-size:12px}
kbd{border:1px solid #c4c9d2;border-bottom-width:2px;border-radius:3px;padding:0 4px;font-size:11px;background:#fafbfc}
</style></head>
<body>
<aside id="side">
 <div id="filters">
  <input id="q" type="search" placeholder="search clip id…" autocomplete="off">
  <select id="fsource"><option value="">all sources</option></select>
  <select id="fquestion"><option value="">all questions</option></select>
  <select id="fstatus">
   <option value="">all clips</option>
   <option value="agree">agrees with the oracle</option>
   <option value="disagree">disagrees with the oracle</option>
   <option value="near">near-threshold disagreement</option>
   <option value="error">disagreement beyond the near band</option>
  </select>
  <div id="count"></div>
 </div>
 <ul id="list"></ul>
</aside>
<main id="main">
 <div id="warnings"></div>
 <div id="empty"><p class="muted">Pick a clip on the left (<kbd>j</kbd> / <kbd>k</kbd> next / previous clip, <kbd>←</kbd> / <kbd>→</kbd> frames, <kbd>space</kbd> plays).</p><div id="summary"></div></div>
 <section id="clip" hidden>
  <h1 id="title"></h1>
  <div id="status"></div>
  <div id="clipErrors"></div>
  <div id="top">
   <div id="framebox">
    <canvas id="frame" width="640" height="200"></canvas>
    <div id="controls">
     <button id="play" title="space">▶</button>
     <input id="slider" type="range" min="0" max="0" value="0">
     <span id="frameno"></span>
     <label><input id="overlay" type="checkbox" checked> tracks &amp; inliers</label>
    </div>
    <div class="legend"><span style="--c:#2ecc40">inlier (essential matrix)</span><span style="--c:#ff4136">outlier</span><span id="pairinfo" class="muted"></span></div>
   </div>
   <div><h2 style="margin-top:0">Bird's-eye (m)</h2><svg id="bev" viewBox="0 0 330 330"></svg><div class="legend" id="bevlegend"></div></div>
  </div>
  <h2>Dynamics: ground truth against estimate (red dashed: question thresholds; ▲ / ▼ thresholds beyond the axis)</h2>
  <div class="legend" id="plotlegend"></div>
  <div id="plots"></div>
  <h2>Questions</h2>
  <table id="qa"><thead></thead><tbody></tbody></table>
 </section>
</main>
<script>
(function () {
'use strict';
var $ = function (id) { return document.getElementById(id); };
${axisRange.toString()}
var MIN_SPAN = ${JSON.stringify(MIN_SPAN)};
var COLORS = { truth: '#1d2330', engine: '#1f77b4', runs: ['#ff7f0e', '#9467bd', '#2ca02c', '#d62728', '#8c564b'] };
var S = { meta: null, shown: [], cur: null, detail: null, frame: 0, playing: null, img: null, imgCache: {} };
window.__egogeo = S;
function esc(s) { return String(s == null ? '' : s).replace(/[&<>"']/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]; }); }
function fmt(v, d) { return v == null || !isFinite(v) ? '–' : (+v).toFixed(d == null ? 3 : d); }

function classify(c) {
  if (!c.predicted) return 'none';
  return c.disagree.length ? 'disagree' : 'agree';
}
function matches(c, f) {
  if (f.q && c.id.toLowerCase().indexOf(f.q) < 0) return false;
  if (f.source && c.source !== f.source) return false;
  var dq = f.question ? (c.disagree.indexOf(f.question) >= 0) : c.disagree.length > 0;
  var nq = f.question ? (c.near.indexOf(f.question) >= 0) : c.near.length > 0;
  if (f.question && c.questions.indexOf(f.question) < 0) return false;
  if (f.status === 'agree') return c.predicted && !dq;
  if (f.status === 'disagree') return dq;
  if (f.status === 'near') return nq;
  if (f.status === 'error') {
    if (!f.question) return c.disagree.some(function (q) { return c.near.indexOf(q) < 0; });
    return dq && !nq;
  }
  return true;
}
function filters() { return { q: $('q').value.trim().toLowerCase(), source: $('fsource').value, question: $('fquestion').value, status: $('fstatus').value }; }
function renderList() {
  var f = filters();
  S.shown = S.meta.clips.filter(function (c) { return matches(c, f); });
  var html = [], tally = { agree: 0, dis: 0, near: 0 };
  for (var i = 0; i < S.shown.length; i++) {
    var c = S.shown[i], k = classify(c), tags = '';
    if (c.problem) tags += '<span class="tag bad" title="' + esc(c.problem) + '">!</span>';
    if (c.quality) {
      // One tag, the worst verdict; its title names each predictions file's.
      var worst = c.quality.some(function (v) { return v.verdict === 'failed'; }) ? 'failed' : c.quality[0].verdict;
      tags += '<span class="tag ' + (worst === 'failed' ? 'bad' : 'near') + '" title="' + esc(c.quality.map(function (v) { return v.name + ': estimate ' + v.verdict + ': ' + v.reasons.join('; '); }).join('\n')) + '">' + esc(worst) + '</span>';
    }
    if (f.question && c.predicted) {
      // One question chosen: the badge is that question's (agree, disagree, near-threshold).
      var dq = c.disagree.indexOf(f.question) >= 0, nq = c.near.indexOf(f.question) >= 0;
      if (!dq) { tally.agree++; tags += '<span class="tag ok" title="' + esc(f.question) + ': agrees with the oracle">✓</span>'; }
      else if (nq) { tally.near++; tally.dis++; tags += '<span class="tag near" title="' + esc(f.question) + ': near-threshold disagreement">≈</span>'; }
      else { tally.dis++; tags += '<span class="tag dis" title="' + esc(f.question) + ': disagrees with the oracle">✗</span>'; }
    } else if (k === 'disagree') {
      // One badge per clip: the disagreements, and how many of them are near-threshold (not "2 near 3 ✗", which reads as 5).
      tags += '<span class="tag ' + (c.near.length === c.disagree.length ? 'near' : 'dis') + '" title="disagree: ' + esc(c.disagree.join(', ')) + (c.near.length ? '; near-threshold: ' + esc(c.near.join(', ')) : '') + '">' + c.disagree.length + ' ✗' + (c.near.length ? ' (' + c.near.length + ' near)' : '') + '</span>';
    } else if (k === 'agree') tags += '<span class="tag ok">✓</span>';
    tags += '<span class="tag">' + esc(c.source) + '</span>';
    html.push('<li data-id="' + esc(c.id) + '"' + (S.cur === c.id ? ' class="sel"' : '') + '><span class="id" title="' + esc(c.id) + '">' + esc(c.id) + '</span><span>' + tags + '</span></li>');
  }
  $('list').innerHTML = html.join('');
  $('count').textContent = S.shown.length + ' of ' + S.meta.clips.length + ' clips' +
    (f.question && S.meta.predictions.length ? ' · ' + f.question + ': ' + tally.agree + ' agree, ' + tally.dis + ' disagree' + (tally.near ? ' (' + tally.near + ' near)' : '') : '');
  if (S.detail) markQuestion();
}
function setOptions(sel, values) {
  sel.insertAdjacentHTML('beforeend', values.map(function (v) { return '<option value="' + esc(v) + '">' + esc(v) + '</option>'; }).join(''));
}

// The landing page: clips per source, and per predictions file its pooled balanced accuracy per source (as egogeo grade scores it).
function renderSummary() {
  var m = S.meta, sources = Object.keys(m.summary.sources).sort();
  var head = '<tr><th>source</th><th>clips</th>' + m.predictions.map(function (p, i) { return '<th title="' + esc(p.file) + '">' + esc(p.name) + ': clips answered · balanced accuracy, 6 questions / all</th>'; }).join('') + '</tr>';
  var rows = sources.concat(sources.length > 1 ? ['all'] : []).map(function (src) {
    var n = src === 'all' ? m.clips.length : m.summary.sources[src];
    return '<tr data-source="' + esc(src) + '"><td>' + esc(src) + '</td><td>' + n + '</td>' + m.summary.runs.map(function (r) {
      var x = r[src];
      return '<td>' + (x ? x.clips + ' · ' + fmt(x.subset) + ' / ' + fmt(x.all) : '–') + '</td>';
    }).join('') + '</tr>';
  });
  $('summary').innerHTML = '<h2>' + esc(m.dataset) + '</h2><table id="summarytable"><thead>' + head + '</thead><tbody>' + rows.join('') + '</tbody></table>' +
    (m.predictions.length ? '' : '<p class="muted">Give --predictions to compare answers with the oracle.</p>');
}

// ---- clip ----
function openClip(id, push) {
  if (!id) return;
  if (push !== false && location.hash !== '#clip=' + encodeURIComponent(id)) { history.replaceState(null, '', '#clip=' + encodeURIComponent(id)); }
  S.cur = id;
  S.openStart = performance.now();
  var li = $('list').querySelector('li.sel'); if (li) li.classList.remove('sel');
  var el = $('list').querySelector('li[data-id="' + CSS.escape(id) + '"]');
  if (el) { el.classList.add('sel'); el.scrollIntoView({ block: 'nearest' }); }
  $('empty').hidden = true; $('clip').hidden = false;
  $('title').textContent = id;
  $('status').textContent = 'running the engine on this clip…';
  $('clipErrors').innerHTML = '';
  stop();
  var want = id;
  fetch('api/clip/' + encodeURIComponent(id)).then(function (r) { return r.json().then(function (j) { return { ok: r.ok, j: j }; }); }).then(function (x) {
    if (S.cur !== want) return;
    if (!x.ok) { showError(x.j.error || 'cannot open this clip'); $('status').textContent = ''; return; }
    S.detail = x.j; S.frame = 0; S.imgCache = {};
    renderClip();
  }).catch(function (e) { if (S.cur === want) showError(String(e)); });
}
function verdictText(v) { return v === 'failed' ? 'its estimate failed' : 'its estimate is ' + v; }
function rerunName() { var r = S.detail.rerun; return 're-run' + (r.of ? ' as ' + r.of + ' was run' : ' (a run\u2019s defaults)'); }
function showError(msg) { $('clipErrors').insertAdjacentHTML('beforeend', '<div class="errorbox">' + esc(msg) + '</div>'); }
function renderClip() {
  var d = S.detail;
  $('title').textContent = d.id + '  ·  ' + d.source;
  $('status').textContent = d.frames + ' frames' + (d.width ? ' · ' + d.width + '×' + d.height : '') + (d.ms.engine != null ? ' · engine ' + d.ms.engine + ' ms' : '') + (d.video ? ' · video' : '') + ' · ' + rerunName() + ': ' + d.rerun.settings;
  if (d.problem) showError('clip problem: ' + d.problem);
  if (d.error) showError(rerunName() + ': ' + d.error);
  // Every verdict names whose estimate it is: each predictions file's, and the re-run's.
  d.quality.forEach(function (v) { if (v.verdict !== 'ok') showError(v.name + ': ' + verdictText(v.verdict) + ': ' + v.reasons.join('; ') + (v.verdict === 'failed' ? (v.abstain ? ' (its scale-dependent answers were withheld: --abstain)' : ' (its scale-dependent answers rest on no measured scale)') : '')); });
  var rq = d.rerun.quality;
  if (rq && rq.verdict !== 'ok') showError(rerunName() + ': ' + verdictText(rq.verdict) + ': ' + rq.reasons.join('; ') + (rq.verdict === 'failed' ? (d.rerun.abstain ? ' (its scale-dependent answers are withheld, as the run withholds them)' : ' (its scale-dependent answers rest on no measured scale, as the run answered them)') : ''));
  $('slider').max = Math.max(0, d.frames - 1); $('slider').value = 0;
  drawBev(); drawPlots(); drawQa();
  showFrame(0);
  var done = function () { S.openMs = performance.now() - S.openStart; document.body.dataset.opened = d.id; };
  if (d.frames > 0 && !d.error) S.onFrameDrawn = done; else done();
  prefetch();
}
function prefetch() {
  // The next clip of the list: its engine run starts while this one is looked at.
  var i = indexShown();
  var n = S.shown[i + 1];
  if (n && !S.prefetched) { S.prefetched = {}; }
  if (n && !S.prefetched[n.id]) { S.prefetched[n.id] = 1; setTimeout(function () { fetch('api/clip/' + encodeURIComponent(n.id)).catch(function () {}); }, 300); }
}
function frameUrl(i) { return 'frame/' + encodeURIComponent(S.detail.id) + '/' + i; }
function showFrame(i) {
  var d = S.detail; if (!d || d.frames === 0) { drawCanvas(null); return; }
  if (!d.images) { S.frame = Math.max(0, Math.min(d.frames - 1, i)); $('frameno').textContent = 'method ' + d.rerun.method + ' keeps no decoded video frames'; drawCanvas(null); return; }
  i = Math.max(0, Math.min(d.frames - 1, i)); S.frame = i; $('slider').value = i;
  $('frameno').textContent = (i + 1) + ' / ' + d.frames + (d.timestamps[i] != null ? '  t=' + fmt(d.timestamps[i] - d.timestamps[0], 2) + ' s' : '');
  var img = S.imgCache[i];
  if (!img) {
    img = new Image(); S.imgCache[i] = img;
    img.onload = function () { if (S.frame === i) drawCanvas(img); };
    img.onerror = function () { img.failed = true; if (S.frame === i) { drawCanvas(null); showError('frame ' + i + ' could not be loaded (' + frameUrl(i) + ')'); } };
    img.src = frameUrl(i);
    var nx = S.imgCache[i + 1]; if (!nx && i + 1 < d.frames) { nx = new Image(); S.imgCache[i + 1] = nx; nx.src = frameUrl(i + 1); }
  } else if (img.complete && !img.failed) drawCanvas(img);
}
function drawCanvas(img) {
  var d = S.detail, cv = $('frame'), ctx = cv.getContext('2d');
  var w = img ? img.naturalWidth : (d.width || 640), h = img ? img.naturalHeight : (d.height || 200);
  if (cv.width !== w) cv.width = w; if (cv.height !== h) cv.height = h;
  ctx.fillStyle = '#222'; ctx.fillRect(0, 0, w, h);
  if (img) ctx.drawImage(img, 0, 0);
  var drawn = 0, inl = 0;
  var pair = S.frame > 0 ? d.matches[S.frame - 1] : d.matches[0];
  if ($('overlay').checked && pair) {
    var cur = S.frame > 0; // points in this frame: the pair's second frame, else the first pair's first
    ctx.lineWidth = Math.max(1, w / 900);
    var r = Math.max(2, w / 400);
    for (var k = 0; k + 4 < pair.length; k += 5) {
      var x0 = pair[k], y0 = pair[k + 1], x1 = pair[k + 2], y1 = pair[k + 3], ok = pair[k + 4] === 1;
      var px = cur ? x1 : x0, py = cur ? y1 : y0;
      ctx.strokeStyle = ok ? '#2ecc40' : '#ff4136';
      ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
      ctx.beginPath(); ctx.arc(px, py, r, 0, 6.2832); ctx.stroke();
      drawn++; if (ok) inl++;
    }
  }
  cv.dataset.tracks = drawn; cv.dataset.inliers = inl; cv.dataset.frame = S.frame;
  var p = S.frame > 0 ? d.pairs[S.frame - 1] : d.pairs[0];
  $('pairinfo').textContent = p ? (S.frame > 0 ? 'pair ' + (S.frame - 1) + '→' + S.frame : 'pair 0→1') + ': ' + p.tracks + ' tracks, ' + p.inliers + ' inliers, ' + p.quality : '';
  if (S.onFrameDrawn && (img || !d.frames)) { var f = S.onFrameDrawn; S.onFrameDrawn = null; f(); }
}
function stop() { if (S.playing) { clearInterval(S.playing); S.playing = null; } $('play').textContent = '▶'; }
function play() {
  if (S.playing) return stop();
  var d = S.detail; if (!d || d.frames < 2) return;
  var dt = d.timestamps.length > 1 ? Math.max(40, 1000 * (d.timestamps[d.timestamps.length - 1] - d.timestamps[0]) / (d.timestamps.length - 1)) : 100;
  $('play').textContent = '❚❚';
  S.playing = setInterval(function () { showFrame(S.frame + 1 >= d.frames ? 0 : S.frame + 1); }, dt);
}

// ---- plots ----
function seriesList() {
  var d = S.detail, out = [];
  if (d.series.truth) out.push({ name: 'truth', label: 'ground truth', color: COLORS.truth, s: d.series.truth });
  d.series.runs.forEach(function (s, i) {
    if (!s) return;
    var f = base((S.meta.predictions[i] || {}).file), same = d.series.engine && sameSeries(s, d.series.engine);
    out.push({ name: 'run' + i, label: d.runs[i] + (f !== d.runs[i] ? ' (' + f + ')' : '') + ': its trajectory, dashed' + (same ? ' (the same as the re-run\u2019s, under it)' : ''), color: COLORS.runs[i % COLORS.runs.length], s: s, dash: true });
  });
  if (d.series.engine) out.push({ name: 'engine', label: rerunName(), color: COLORS.engine, s: d.series.engine });
  return out;
}
function sameSeries(a, b) {
  if (a.speed.length !== b.speed.length) return false;
  for (var i = 0; i < a.speed.length; i++) if (Math.abs((a.speed[i] || 0) - (b.speed[i] || 0)) > 1e-3 || Math.abs((a.x[i] || 0) - (b.x[i] || 0)) > 1e-3) return false;
  return true;
}
function legend(el, list) { el.innerHTML = list.map(function (x) { return '<span style="--c:' + x.color + '">' + esc(x.label) + '</span>'; }).join(''); }
function poly(pts, color, name, dash) {
  return '<polyline data-series="' + name + '" data-points="' + pts.length + '" fill="none" stroke="' + color + '" stroke-width="1.6"' + (dash ? ' stroke-dasharray="4 3"' : '') + ' points="' + pts.map(function (p) { return p[0].toFixed(1) + ',' + p[1].toFixed(1); }).join(' ') + '"/>';
}
function finite(v) { return v != null && isFinite(v); }
function drawBev() {
  var list = seriesList(), W = 330, H = 330, m = 24;
  // Every trajectory in its own first pose's frame (ground truth arrays may be in a world frame).
  list.forEach(function (x) {
    var s = x.s, i0 = 0; while (i0 < s.x.length && !(finite(s.x[i0]) && finite(s.y[i0]))) i0++;
    var x0 = s.x[i0], y0 = s.y[i0], a = finite(s.yaw && s.yaw[i0]) ? s.yaw[i0] : 0, c = Math.cos(a), sn = Math.sin(a);
    x.bx = s.x.map(function (v, i) { return finite(v) && finite(s.y[i]) ? c * (v - x0) + sn * (s.y[i] - y0) : null; });
    x.by = s.x.map(function (v, i) { return finite(v) && finite(s.y[i]) ? -sn * (v - x0) + c * (s.y[i] - y0) : null; });
  });
  var xs = [], ys = [];
  list.forEach(function (x) { x.bx.forEach(function (v, i) { if (finite(v)) { xs.push(v); ys.push(x.by[i]); } }); });
  var svg = '';
  if (!xs.length) { $('bev').innerHTML = '<text x="20" y="30">no trajectory</text>'; legend($('bevlegend'), []); return; }
  // X forward drawn upwards, Y left drawn leftwards; equal scale.
  var minX = Math.min.apply(null, xs), maxX = Math.max.apply(null, xs), minY = Math.min.apply(null, ys), maxY = Math.max.apply(null, ys);
  var span = Math.max(maxX - minX, maxY - minY, 1), s = (W - 2 * m) / span;
  var cx = (minX + maxX) / 2, cy = (minY + maxY) / 2;
  var P = function (x, y) { return [W / 2 - (y - cy) * s, H / 2 - (x - cx) * s]; };
  svg += '<rect x="0" y="0" width="330" height="330" fill="#fff"/>';
  svg += '<text x="6" y="12">span ' + span.toFixed(1) + ' m · first pose at the origin, heading ↑</text>';
  list.forEach(function (x) {
    var pts = []; x.bx.forEach(function (v, i) { if (finite(v)) pts.push(P(v, x.by[i])); });
    svg += poly(pts, x.color, x.name, x.dash);
    if (pts.length) svg += '<circle cx="' + pts[0][0].toFixed(1) + '" cy="' + pts[0][1].toFixed(1) + '" r="3" fill="' + x.color + '"/>';
  });
  $('bev').innerHTML = svg;
  legend($('bevlegend'), list);
}
var PLOTS = [['speed', 'speed (m/s)'], ['accel', 'acceleration (m/s²)'], ['yaw_rate', 'yaw rate (rad/s)'], ['jerk', 'jerk (m/s³)']];
function drawPlots() {
  var d = S.detail, list = seriesList(), html = '';
  PLOTS.forEach(function (p) {
    var key = p[0], W = 400, H = 170, ml = 40, mr = 8, mt = 14, mb = 18;
    var ts = [], vs = [];
    list.forEach(function (x) { x.s[key].forEach(function (v, i) { if (finite(v)) { vs.push(v); ts.push(x.s.t[i]); } }); });
    var thr = d.thresholds.filter(function (t) { return t.series === key; });
    var body = '';
    if (vs.length) {
      // The axis fits the series, at least MIN_SPAN[key] wide so that small offsets look small
      // (speed: not below 0); a threshold inside it is a dashed line, one outside an arrow at the
      // edge it lies beyond.
      var ax = axisRange(Math.min.apply(null, vs), Math.max.apply(null, vs), MIN_SPAN[key], key === 'speed' ? 0 : null), lo = ax[0], hi = ax[1];
      var t0 = Math.min.apply(null, ts), t1 = Math.max.apply(null, ts); if (t1 <= t0) t1 = t0 + 1;
      var X = function (t) { return ml + (t - t0) / (t1 - t0) * (W - ml - mr); }, Y = function (v) { return mt + (hi - v) / (hi - lo) * (H - mt - mb); };
      body += '<line x1="' + ml + '" x2="' + ml + '" y1="' + mt + '" y2="' + (H - mb) + '" stroke="#bbb"/>';
      body += '<text x="2" y="' + (Y(hi) + 8).toFixed(1) + '">' + fmt(hi, 2) + '</text><text x="2" y="' + Y(lo).toFixed(1) + '">' + fmt(lo, 2) + '</text>';
      body += '<text x="' + ml + '" y="' + (H - 4) + '">' + fmt(t0, 1) + ' s</text><text x="' + (W - 40) + '" y="' + (H - 4) + '">' + fmt(t1, 1) + ' s</text>';
      if (lo < 0 && hi > 0) body += '<line x1="' + ml + '" x2="' + (W - mr) + '" y1="' + Y(0).toFixed(1) + '" y2="' + Y(0).toFixed(1) + '" stroke="#ddd"/>';
      var inside = thr.filter(function (t) { return t.value >= lo && t.value <= hi; }).sort(function (a, b) { return b.value - a.value; });
      var lastY = -1e9;
      inside.forEach(function (t) {
        var y = Y(t.value), ly = Math.max(y - 2, lastY + 11); lastY = ly;
        body += '<line data-threshold="' + esc(t.question) + '" x1="' + ml + '" x2="' + (W - mr) + '" y1="' + y.toFixed(1) + '" y2="' + y.toFixed(1) + '" stroke="#c0392b" stroke-dasharray="5 4" stroke-width="1"><title>' + esc(t.question) + ': ' + t.value + '</title></line>';
        body += '<text data-threshold-label x="' + (ml + 4) + '" y="' + Math.min(H - mb - 2, ly).toFixed(1) + '" style="fill:#c0392b"><title>' + esc(t.question) + ': ' + t.value + '</title>' + esc(t.question) + ' ' + t.value + '</text>';
      });
      var above = thr.filter(function (t) { return t.value > hi; }), below = thr.filter(function (t) { return t.value < lo; });
      // Outside the plot area: above it on the title line (right), below it between the time labels.
      [[above, 11, W - mr, 'end', 44], [below, H - 4, (W + ml) / 2, 'middle', 40]].forEach(function (g) {
        if (!g[0].length) return;
        var txt = (g[0] === above ? '▲ ' : '▼ ') + g[0].map(function (t) { return t.question + ' ' + t.value; }).join(', ');
        body += '<text data-threshold-off="' + esc(g[0].map(function (t) { return t.question; }).join(' ')) + '" x="' + g[2] + '" y="' + g[1] + '" text-anchor="' + g[3] + '" style="fill:#c0392b"><title>beyond the axis: ' + esc(txt) + '</title>' + esc(txt.length > g[4] ? txt.slice(0, g[4] - 1) + '…' : txt) + '</text>';
      });
      list.forEach(function (x) {
        var pts = []; x.s[key].forEach(function (v, i) { if (finite(v)) pts.push([X(x.s.t[i]), Y(v)]); });
        body += poly(pts, x.color, x.name, x.dash);
      });
    } else body = '<text x="20" y="30">no data</text>';
    html += '<div class="plot" data-plot="' + key + '"' + (vs.length ? ' data-axis="' + lo + ' ' + hi + '"' : '') + '><svg viewBox="0 0 ' + W + ' ' + H + '" preserveAspectRatio="none"><text x="' + (ml + 4) + '" y="11" style="font-weight:600">' + p[1] + '</text>' + body + '</svg></div>';
  });
  $('plots').innerHTML = html;
  legend($('plotlegend'), list);
}
function markQuestion() {
  var q = $('fquestion').value, rows = $('qa').querySelectorAll('tbody tr');
  for (var i = 0; i < rows.length; i++) rows[i].classList.toggle('chosen', rows[i].dataset.question === q);
}
function drawQa() {
  var d = S.detail;
  var head = '<tr><th>question</th><th>oracle</th>' + d.runs.map(function (r, i) { var p = S.meta.predictions[i] || {}; return '<th title="' + esc(p.file) + '">' + esc(r) + (base(p.file) !== r ? '<br><span class="muted">' + esc(base(p.file)) + '</span>' : '') + '</th>'; }).join('') + '<th title="' + esc(d.rerun.settings) + '">' + esc(rerunName()) + '</th><th>deciding feature</th><th>truth</th><th>estimate</th><th>threshold</th><th>margin</th></tr>';
  $('qa').querySelector('thead').innerHTML = head;
  $('qa').querySelector('tbody').innerHTML = d.qa.map(function (q) {
    var cells = q.answers.map(function (a, i) {
      var cls = a.agree === false ? (a.near ? 'near' : 'dis') : a.agree ? 'agree' : '';
      var txt = a.present ? (a.answer == null ? '(no answer)' : a.answer) : '–';
      return '<td class="' + cls + '" data-run="' + i + '">' + esc(txt) + (a.agree === false ? (a.near ? ' ≈' : ' ✗') : '') + '</td>';
    }).join('');
    var ecls = q.engineAgree === false ? (q.near ? 'near' : 'dis') : q.engineAgree ? 'agree' : '';
    return '<tr data-question="' + esc(q.question) + '"><td title="' + esc(q.text) + '">' + esc(q.question) + '</td><td data-oracle>' + esc(q.oracle == null ? '–' : q.oracle) + '</td>' + cells +
      '<td class="' + ecls + '" data-rerun>' + esc(!q.engineAnswered ? '–' : q.engine == null ? '(withheld)' : q.engine) + '</td><td>' + esc(q.feature || '–') + '</td><td>' + fmt(q.value) + '</td><td>' + fmt(q.estimate) + '</td><td>' + fmt(q.threshold) + '</td><td>' +
      (q.margin == null ? '–' : (100 * q.margin).toFixed(1) + '%' + (q.near ? ' (near)' : '')) + '</td></tr>';
  }).join('');
  markQuestion();
}
function base(p) { return String(p || '').split(/[\\/]/).pop(); }

// ---- navigation ----
function indexShown() { for (var i = 0; i < S.shown.length; i++) if (S.shown[i].id === S.cur) return i; return -1; }
function step(k) {
  if (!S.shown.length) return;
  var i = indexShown();
  i = i < 0 ? 0 : Math.max(0, Math.min(S.shown.length - 1, i + k));
  openClip(S.shown[i].id);
}
document.addEventListener('keydown', function (e) {
  if (e.target && (e.target.tagName === 'INPUT' && e.target.type !== 'checkbox' && e.target.type !== 'range' || e.target.tagName === 'SELECT')) return;
  if (e.key === 'j') { step(1); e.preventDefault(); }
  else if (e.key === 'k') { step(-1); e.preventDefault(); }
  else if (e.key === 'ArrowRight') { stop(); showFrame(S.frame + 1); e.preventDefault(); }
  else if (e.key === 'ArrowLeft') { stop(); showFrame(S.frame - 1); e.preventDefault(); }
  else if (e.key === ' ') { play(); e.preventDefault(); }
});
$('list').addEventListener('click', function (e) { var li = e.target.closest('li'); if (li) openClip(li.dataset.id); });
['q', 'fsource', 'fquestion', 'fstatus'].forEach(function (id) { $(id).addEventListener('input', renderList); });
$('slider').addEventListener('input', function () { stop(); showFrame(+this.value); });
$('overlay').addEventListener('change', function () { showFrame(S.frame); });
$('play').addEventListener('click', play);
window.addEventListener('hashchange', function () { var m = /clip=([^&]+)/.exec(location.hash); if (m && decodeURIComponent(m[1]) !== S.cur) openClip(decodeURIComponent(m[1]), false); });

fetch('api/clips').then(function (r) { return r.json(); }).then(function (meta) {
  S.meta = meta;
  var sources = []; meta.clips.forEach(function (c) { if (sources.indexOf(c.source) < 0) sources.push(c.source); });
  setOptions($('fsource'), sources.sort());
  setOptions($('fquestion'), meta.questions);
  $('warnings').innerHTML = meta.warnings.map(function (w) { return '<div>⚠ ' + esc(w) + '</div>'; }).join('');
  if (!meta.predictions.length) { $('fstatus').disabled = true; $('fstatus').title = 'give --predictions to compare with the oracle'; }
  renderList();
  renderSummary();
  requestAnimationFrame(function () { S.listPaintMs = performance.now(); document.body.dataset.ready = '1'; });
  var m = /clip=([^&]+)/.exec(location.hash);
  if (m) openClip(decodeURIComponent(m[1]), false);
}).catch(function (e) { $('warnings').innerHTML = '<div class="errorbox">cannot load the clip list: ' + esc(e) + '</div>'; });
})();
</script>
</body></html>
`;
