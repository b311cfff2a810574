// render.js - the timeline on a canvas: one band per domain (under a band per host,
// with mtrace-web --nats), a row per thread line,
// running intervals thick, arrows for creates, reads, resolves and signals, labels,
// event-channel marks and joins, GC intervals, counters as small graphs.  Everything
// is culled to the window and drawn in a few batched paths, so 10,000 threads stay
// well inside a frame.
'use strict';

const COLORS = {
  bg: '#fbfbfc', band: '#f1f3f6', grid: '#e2e5ea', axis: '#555', text: '#222',
  thread: '#7a8699', pending: '#2e8b57', failed: '#c0392b', running: '#1f6feb',
  create: '#9aa3ae', read: '#2a9d8f', fulfill: '#3aa655', fail: '#c0392b',
  signal: '#e67e22', becomes: '#7a8699', send: '#d35400', recv: '#8e44ad', join: '#8e44ad',
  gc: 'rgba(240, 180, 0, 0.18)', counter: '#5b6abf', selected: '#ff00aa', now: '#d00',
  host: '#dfe5ee',
};
const HEADER_H = 20, AXIS_H = 22, COUNTER_H = 28, GAP = 8, HOST_H = 22;

class View {
  constructor() {
    this.spanMs = 10000;	// visible span
    this.t1 = 0;		// right edge (wall ms)
    this.follow = true;
    this.rowH = 7;
    this.scrollY = 0;
    this.hidden = new Set();	// domain keys (MtraceModel.domKey) filtered out
    this.hiddenHosts = new Set();	// hosts filtered out, with every domain of theirs
    this.labelPrefix = '';
    this.selected = null;	// {key, id}: the domain's key, the thread
    this.layout = [];		// per drawn domain: {d, top, rowsTop, rows, bottom}
    this.hostLayout = [];	// per host band drawn (a fleet): {host, top}
    this.frames = [];		// draw times, ms (the last 240)
    this.stats = { arrows: 0, spans: 0, arrowsLeftOut: 0, long: 0 };	// of the last frame
  }
  get t0() { return this.t1 - this.spanMs; }
}

function lowerBound(a, t, key) {
  let lo = 0, hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(a[mid]) < t) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// Scratch arrays reused from frame to frame (a frame allocates next to nothing).
const scratch = { n: 0, lastX: null, perCol: null, diagCol: null, markCol: null, ivLo: null, ivHi: null };
function scratchFor(rows, cols) {
  const need = Math.max(rows, cols, 1);
  if (scratch.n < need) {
    scratch.n = need * 2;
    scratch.lastX = new Float64Array(scratch.n);
    scratch.perCol = new Uint16Array(scratch.n);
    scratch.diagCol = new Uint16Array(scratch.n);
    scratch.markCol = new Int32Array(scratch.n);
  }
  if (!scratch.ivLo) {
    scratch.ivLo = new Float32Array(IV_MAX); scratch.ivHi = new Float32Array(IV_MAX);
    scratch.bx = new Float64Array(EXACT_PER_COL); scratch.bya = new Float64Array(EXACT_PER_COL); scratch.byb = new Float64Array(EXACT_PER_COL);
  }
  return scratch;
}
const IV_MAX = 64;
let rectBuf = new Float32Array(4096);	// x, y, w, h of the rectangles of one arrow list
const grow = a => { const b = new Float32Array(a.length * 2); b.set(a); return b; };	// vertical arrow spans held per pixel column before they are merged

// Level of detail for arrows.  A pixel column with a few vertical arrows has them
// drawn exactly (line and head); in a column with more, their spans are merged and
// filled as pixel-aligned rectangles, which neighbouring columns with the same span
// widen; an arrow whose other end is off the canvas shows as a stub of STUB pixels
// towards it (else thousands of arrows to rows out of sight paint the canvas over):
// so does any arrow to a row out of sight once LONG_MAX lines across the canvas are
// drawn in a frame.  The cost is bounded by the pixels, not the events.  Slanted arrows are clipped to the canvas and
// capped per column and per frame; the page says how many it left out.
const STUB = 12, LONG_MAX = 400, EXACT_PER_COL = 2, DIAG_PER_COL = 3, DIAG_MAX = 600, HEADS_MAX = 3000;

// The part of segment (x0,y0)-(x1,y1) inside [xa,xb]x[ya,yb] into out, or false
// (Liang-Barsky).
let clipU0 = 0, clipU1 = 1;
function clipEdge(p, q) {
  if (p === 0) return q >= 0;
  const u = q / p;
  if (p < 0) { if (u > clipU1) return false; if (u > clipU0) clipU0 = u; } else { if (u < clipU0) return false; if (u < clipU1) clipU1 = u; }
  return true;
}
function clipSeg(out, x0, y0, x1, y1, xa, ya, xb, yb) {
  const dx = x1 - x0, dy = y1 - y0;
  clipU0 = 0; clipU1 = 1;
  if (!clipEdge(-dx, x0 - xa) || !clipEdge(dx, xb - x0) || !clipEdge(-dy, y0 - ya) || !clipEdge(dy, yb - y0)) return false;
  out[0] = x0 + clipU0 * dx; out[1] = y0 + clipU0 * dy; out[2] = x0 + clipU1 * dx; out[3] = y0 + clipU1 * dy;
  return true;
}
const clipOut = new Float64Array(4);

function niceStep(ms, px, minPx) {
  const raw = ms * minPx / Math.max(px, 1);
  const steps = [1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100,
    200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 1800000,
    3600000];
  for (const s of steps) if (s >= raw) return s;
  return 3600000;
}

function fmtTime(ms, step) {
  const d = new Date(ms);
  const hh = String(d.getHours()).padStart(2, '0'), mm = String(d.getMinutes()).padStart(2, '0');
  const ss = String(d.getSeconds()).padStart(2, '0');
  if (step >= 1000) return `${hh}:${mm}:${ss}`;
  const frac = ms - Math.floor(ms / 1000) * 1000;
  const digits = step >= 100 ? 1 : step >= 10 ? 2 : step >= 1 ? 3 : 6;
  return `${hh}:${mm}:${ss}.${(frac / 1000).toFixed(digits).slice(2)}`;
}

function fmtDur(ms) {
  if (ms >= 1000) return (ms / 1000).toFixed(3) + ' s';
  if (ms >= 1) return ms.toFixed(3) + ' ms';
  return (ms * 1000).toFixed(1) + ' \u00b5s';
}

function rowAt(th, t) {
  const s = th.segs;
  let r = s[0].row;
  for (let i = 1; i < s.length && s[i].t0 <= t; i++) r = s[i].row;
  return r;
}

// A thread's label as drawn, made printable once (not at every frame): th.shown
// holds it for the label and exception it was made from.
function shownLabel(th, max) {
  let sh = th.shown;
  if (!sh || sh.label !== th.label || sh.exn !== th.exn || sh.failed !== th.failed) {
    const text = th.failed && th.exn ? `${th.label} \u2717 ${th.exn}` : th.label;
    sh = th.shown = { label: th.label, exn: th.exn, failed: th.failed, text: MtraceModel.printable(text, 81), cut: new Map() };
  }
  if (sh.text.length <= max) return sh.text;
  let c = sh.cut.get(max);
  if (c === undefined) sh.cut.set(max, c = sh.text.slice(0, max) + '\u2026');
  return c;
}

function threadVisible(view, th) {
  return !view.labelPrefix || th.label.startsWith(view.labelPrefix);
}

function draw(ctx, model, view, nowAxis, W, H) {
  const start = performance.now();
  // What this frame drew and left out (the page says so; the tests read it).
  const stats = view.stats;
  stats.arrows = 0; stats.spans = 0; stats.arrowsLeftOut = 0; stats.long = 0;
  stats.labelBoxes = [];
  // The axis: the host timeline; a fleet's, NATS's clock (each host shifted onto it).
  const T0 = view.t0, T1 = view.t1, span = T1 - T0;
  const xAxis = t => (t - T0) / span * W;
  ctx.fillStyle = COLORS.bg;
  ctx.fillRect(0, 0, W, H);

  // Time axis.
  const step = niceStep(span, W, 110);
  ctx.font = '11px sans-serif';
  ctx.fillStyle = COLORS.axis;
  ctx.strokeStyle = COLORS.grid;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let t = Math.ceil(T0 / step) * step; t <= T1; t += step) {
    const x = Math.round(xAxis(t)) + 0.5;
    ctx.moveTo(x, AXIS_H - 4); ctx.lineTo(x, H);
    ctx.fillText(fmtTime(t, step), x + 3, 12);
  }
  ctx.stroke();

  view.layout = [];
  view.hostLayout = [];
  let y = AXIS_H - view.scrollY;
  const doms = model.sortedDomains(), fleet = model.fleet();
  let labelsDrawn = 0, lastHost = null;
  for (const d of doms) {
    if (view.hidden.has(d.key) || view.hiddenHosts.has(d.host)) continue;
    if (fleet && d.host !== lastHost) {
      // The host above its domains: a band of its own (its name is text, not markup,
      // and hostile like a guest's).
      lastHost = d.host;
      const h = model.hosts.get(d.host);
      view.hostLayout.push({ host: d.host, top: y });
      if (y + HOST_H >= 0 && y <= H) {
        ctx.fillStyle = COLORS.host;
        ctx.fillRect(0, y, W, HOST_H - 2);
        ctx.fillStyle = COLORS.text;
        ctx.font = 'bold 13px sans-serif';
        const st = h && h.up === false ? '  [mtraced gone]' : '';
        ctx.fillText(`host ${MtraceModel.printable(d.host, 80)}${st}  ` +
          `${model.hostEvents(d.host)} events  ${skewText(h)}`, 6, y + 15);
      }
      y += HOST_H;
    }
    const rows = Math.max(d.rowFree.length, 1);
    const counters = [...d.counters.entries()];
    const vcpus = [...d.vcpus.keys()].sort((a, b) => a - b);
    const L = { d, top: y, rowsTop: y + HEADER_H, rows, bottom: 0 };
    L.vcpuTop = L.rowsTop + rows * view.rowH + (vcpus.length ? 3 : 0);
    L.countersTop = L.vcpuTop + vcpus.length * VCPU_H + 4;
    L.bottom = L.countersTop + counters.length * COUNTER_H + GAP;
    view.layout.push(L);
    y = L.bottom;
    if (L.bottom < 0 || L.top > H) continue;
    // The domain's times are on its host's timeline: drawn moved by the host's skew.
    const sh = model.shiftMs(d), t0 = T0 + sh, t1 = T1 + sh, now = nowAxis + sh;
    const xOf = t => (t - t0) / span * W;

    // Band and header.
    ctx.fillStyle = COLORS.band;
    ctx.fillRect(0, L.top, W, HEADER_H - 2);
    ctx.fillStyle = COLORS.text;
    ctx.font = 'bold 12px sans-serif';
    const state = (d.alive ? '' : `  [${MtraceModel.printable(d.reason || 'down', 80)}]`) +
      (d.aligned === false ? '  [clock not on the host timeline: placed by arrival]' : '');
    ctx.fillText(`dom ${d.domid} ${MtraceModel.printable(d.name, 80)}${state}  ` +
      `${d.threads.size} threads, ${d.events} events`, 6, L.top + 14);

    // A destroyed domain's threads stop with it: what is pending ends at the domain's
    // last moment (where the model ends its running intervals), not at "now".
    const dnow = d.alive ? now : Math.min(now, d.lastT);
    L.end = dnow;
    const rowY = r => L.rowsTop + r * view.rowH + view.rowH / 2;
    const visRow = r => { const yy = rowY(r); return yy >= AXIS_H - 2 && yy <= H + 2; };
    const vis = id => { const th = d.threads.get(id); return th && threadVisible(view, th) ? th : null; };

    // GC intervals: shaded across the band, merged where they touch on screen and
    // clipped to what is visible (thousands of tall translucent rectangles cost).
    ctx.fillStyle = COLORS.gc;
    {
      const yTop = Math.max(L.rowsTop, AXIS_H), yBot = Math.min(L.rowsTop + rows * view.rowH, H);
      let a = null, b = null;
      const flush = () => { if (a !== null && yBot > yTop) ctx.fillRect(a, yTop, Math.max(b - a, 1), yBot - yTop); };
      for (let i = lowerBound(d.gcs, t0, g => g.t1); i < d.gcs.length && d.gcs[i].t0 <= t1; i++) {
        const x0 = xOf(d.gcs[i].t0), x1 = Math.max(xOf(d.gcs[i].t1), x0 + 1);
        if (a !== null && x0 <= b + 1) { b = Math.max(b, x1); continue; }
        flush();
        a = x0; b = x1;
      }
      flush();
    }

    const filtering = view.labelPrefix !== '';
    const sc = scratchFor(rows, Math.ceil(W) + 2), lastX = sc.lastX;
    // Only the rows on screen are visited.
    const r0 = Math.max(0, Math.floor((AXIS_H - L.rowsTop) / view.rowH) - 1);
    const r1 = Math.min(rows - 1, Math.ceil((H - L.rowsTop) / view.rowH) + 1);
    const segEnd = sg => {
      const th = sg.th, i = th.segs.indexOf(sg);
      return i + 1 < th.segs.length ? th.segs[i + 1].t0 : th.end === null ? dnow : th.end;
    };
    // The stretches of row r that may cross [t0, t1]: from the last one starting
    // before t0 (rows are exclusive: only it can reach into the window).
    const rowRange = (r, fn) => {
      const a = d.rowSegs[r];
      if (!a) return;
      let i = Math.max(lowerBound(a, t0, sg => sg.t0) - 1, 0);
      for (; i < a.length && a[i].t0 <= t1; i++) {
        const sg = a[i];
        if (sg.th.gone) continue;
        const e = sg.th.segs.length === 1 ? (sg.th.end === null ? dnow : sg.th.end) : segEnd(sg);
        if (e < t0) continue;
        fn(sg, e);
      }
    };
    if (view.skip && view.skip.has('lines')) { /* bench */ } else {
    // Thread lines, by style.  Many threads can share a pixel: a line that adds no
    // pixel to the last one drawn on its row is skipped.
    const paths = { thread: new Path2D(), pending: new Path2D(), failed: new Path2D() };
    for (let r = r0; r <= r1; r++) {
      let last = -1e9;
      const yy = Math.round(rowY(r)) + 0.5;
      rowRange(r, (sg, e) => {
        const th = sg.th;
        if (filtering && !threadVisible(view, th)) return;
        const p = th.end === null ? paths.pending : th.failed ? paths.failed : paths.thread;
        const xa = Math.max(xOf(sg.t0), -1), xb = Math.min(Math.max(xOf(e), xa + 1), W + 1);
        if (xb <= last + 0.5 && p !== paths.failed) return;
        last = xb;
        p.moveTo(xa, yy);
        p.lineTo(xb, yy);
      });
    }
    ctx.lineWidth = 1;
    for (const k of ['thread', 'pending', 'failed']) {
      ctx.strokeStyle = COLORS[k];
      ctx.stroke(paths[k]);
    }
    }

    // Running intervals, thick; again one per pixel and row at most.
    ctx.fillStyle = COLORS.running;
    const rh = Math.max(2, Math.min(view.rowH - 1, 5));
    lastX.fill(-1e9, 0, rows);
    const runs = new Path2D();
    const runBar = (r, a, b) => {
      if (b < t0 || a > t1 || !visRow(r.row)) return;
      if (filtering && !vis(r.th)) return;
      const x0 = xOf(a), x1 = Math.max(xOf(b), x0 + 1);
      if (x1 <= lastX[r.row] + 0.5) return;
      lastX[r.row] = x1;
      runs.rect(x0, rowY(r.row) - rh / 2, x1 - x0, rh);
    };
    for (let i = lowerBound(d.runs, t0, r => r.t1); i < d.runs.length && d.runs[i].t0 <= t1; i++)
      runBar(d.runs[i], d.runs[i].t0, d.runs[i].t1);
    for (const r of d.running.values()) runBar(r, r.t0, d.alive ? now : d.lastT);
    ctx.fill(runs);

    // Arrows, with the rows their ends had when they happened (see EXACT_PER_COL).
    const cols = Math.ceil(W) + 2;
    const { perCol, diagCol, ivLo, ivHi } = sc, bx = sc.bx, bya = sc.bya, byb = sc.byb;
    const yMin = AXIS_H - 1, yMax = H + 1;
    const lod = view.lod !== false;	// false: every arrow exactly (tests, comparisons)
    const arrowList = (list, color, dashed) => {
      if (view.skip && view.skip.has('arrows')) return;
      const i0 = lowerBound(list, t0 - span * 0.05, a => a.t);
      diagCol.fill(0, 0, cols);
      const heads = new Path2D(), lines = new Path2D();
      let nHeads = 0, nDiag = 0, col = -1, k = 0, nRects = 0;
      // Crowded columns: their vertical spans merged where they touch; a column whose
      // one span is the one of the column before widens that rectangle.
      let px = -1, pw = 0, plo = 0, phi = 0;
      const rect = (x, w, lo, hi) => {
        if (nRects * 4 + 4 > rectBuf.length) rectBuf = grow(rectBuf);
        rectBuf[nRects * 4] = x; rectBuf[nRects * 4 + 1] = lo;
        rectBuf[nRects * 4 + 2] = w; rectBuf[nRects * 4 + 3] = hi - lo;
        nRects++;
      };
      const pend = () => { if (px >= 0) rect(px, pw, plo, phi); px = -1; };
      const flushCol = () => {
        if (k === 0) return;
        for (let i = 1; i < k; i++) {	// insertion sort by top (k is small)
          const lo = ivLo[i], hi = ivHi[i];
          let j = i - 1;
          for (; j >= 0 && ivLo[j] > lo; j--) { ivLo[j + 1] = ivLo[j]; ivHi[j + 1] = ivHi[j]; }
          ivLo[j + 1] = lo; ivHi[j + 1] = hi;
        }
        let m = 0;
        for (let i = 1; i < k; i++) {	// merged in place
          if (ivLo[i] <= ivHi[m] + 1) { if (ivHi[i] > ivHi[m]) ivHi[m] = ivHi[i]; } else { m++; ivLo[m] = ivLo[i]; ivHi[m] = ivHi[i]; }
        }
        m++;
        if (m === 1 && px >= 0 && px + pw === col && plo === ivLo[0] && phi === ivHi[0]) pw++;
        else {
          pend();
          if (m === 1) { px = col; pw = 1; plo = ivLo[0]; phi = ivHi[0]; } else for (let i = 0; i < m; i++) rect(col, 1, ivLo[i], ivHi[i]);
        }
        k = 0;
      };
      const head = (xa, ya, xb, yb) => {
        const len = Math.hypot(xb - xa, yb - ya);
        if (len <= 8 || nHeads >= HEADS_MAX || yb < AXIS_H || yb > H) return;
        nHeads++;
        const ux = (xb - xa) / len, uy = (yb - ya) / len, hs = 3.5;
        heads.moveTo(xb, yb);
        heads.lineTo(xb - ux * hs * 1.7 - uy * hs, yb - uy * hs * 1.7 + ux * hs);
        heads.lineTo(xb - ux * hs * 1.7 + uy * hs, yb - uy * hs * 1.7 - ux * hs);
        heads.closePath();
      };
      // Vertical arrows come column by column (the lists are in time order): the first
      // EXACT_PER_COL of a column wait in bx/bya/byb until it is known whether more
      // follow (bn < 0: they did, the column is crowded).
      let bn = 0;
      const toSpan = (ya, yb) => {
        // An end off the canvas: a stub towards it, not a line across the canvas.
        let lo = Math.min(ya, yb), hi = Math.max(ya, yb);
        if (lo < yMin) lo = Math.max(yMin, hi - STUB);
        if (hi > yMax) hi = Math.min(yMax, lo + STUB);
        if (k === IV_MAX) { flushCol(); pend(); }
        ivLo[k] = Math.round(lo); ivHi[k] = Math.round(hi); k++;
      };
      const exact = (xb, ya, yb) => {
        lines.moveTo(xb, Math.min(Math.max(ya, yMin - 9), yMax + 9));
        lines.lineTo(xb, Math.min(Math.max(yb, yMin - 9), yMax + 9));
        head(xb, ya, xb, yb);
      };
      const endCol = () => {
        for (let j = 0; j < bn; j++) {
          const ya = bya[j], yb = byb[j];
          const off = ya < yMin || ya > yMax || yb < yMin || yb > yMax;
          if (off && stats.long++ >= LONG_MAX) toSpan(ya, yb); else exact(bx[j], ya, yb);
        }
        bn = 0;
        flushCol();
      };
      for (let i = i0; i < list.length && list[i].t <= t1; i++) {
        const a = list[i];
        const ya = rowY(a.ra), yb = rowY(a.rb);
        if ((ya < yMin && yb < yMin) || (ya > yMax && yb > yMax)) continue;
        if (filtering && (!vis(a.from) || !vis(a.to))) continue;
        const xb = xOf(a.t);
        const c = xb < 0 ? 0 : xb > W ? cols - 1 : Math.round(xb);
        if (a.ts === undefined || a.ts === a.t) {
          if (!lod) { exact(xb, ya, yb); continue; }
          if (c !== col) { endCol(); col = c; }
          if (bn >= 0 && bn < EXACT_PER_COL) { bx[bn] = xb; bya[bn] = ya; byb[bn] = yb; bn++; continue; }
          if (bn > 0) { for (let j = 0; j < bn; j++) toSpan(bya[j], byb[j]); bn = -1; }
          toSpan(ya, yb);
          continue;
        }
        const xa = xOf(a.ts);
        if (lod && (diagCol[c]++ >= DIAG_PER_COL || nDiag >= DIAG_MAX)) { stats.arrowsLeftOut++; continue; }
        if (!clipSeg(clipOut, xa, ya, xb, yb, -2, yMin - 9, W + 2, yMax + 9)) continue;
        nDiag++;
        if (lod && (ya < yMin || ya > yMax || yb < yMin || yb > yMax) && stats.long++ >= LONG_MAX) {
          // Out of long lines for this frame: a stub from the end on the canvas.
          const inB = yb >= yMin && yb <= yMax;
          const x0 = inB ? xb : xa, y0 = inB ? yb : ya, len = Math.hypot(xb - xa, yb - ya) || 1;
          const f = 2 * STUB / len * (inB ? -1 : 1);
          lines.moveTo(x0, y0); lines.lineTo(x0 + (xb - xa) * f, y0 + (yb - ya) * f);
          continue;
        }
        lines.moveTo(clipOut[0], clipOut[1]); lines.lineTo(clipOut[2], clipOut[3]);
        head(xa, ya, xb, yb);
      }
      endCol();
      pend();
      stats.arrows += nDiag;
      stats.spans += nRects;
      const sk = view.skip;
      ctx.strokeStyle = color; ctx.fillStyle = color;
      ctx.setLineDash(dashed ? [3, 3] : []);
      if (!(sk && sk.has('alines'))) ctx.stroke(lines);
      ctx.setLineDash([]);
      // Pixel-aligned rectangles: filled directly (no path to scan-convert).
      if (!(sk && sk.has('spans'))) for (let i = 0; i < nRects * 4; i += 4) ctx.fillRect(rectBuf[i], rectBuf[i + 1], rectBuf[i + 2], rectBuf[i + 3]);
      if (!(sk && sk.has('heads'))) ctx.fill(heads);
    };
    ctx.lineWidth = 1;
    arrowList(d.creates, COLORS.create);
    arrowList(d.reads, COLORS.read);
    arrowList(d.fulfills, COLORS.fulfill);
    arrowList(d.fails, COLORS.fail);
    arrowList(d.signals, COLORS.signal);
    arrowList(d.becomes, COLORS.becomes, true);
    // Event-channel joins: a send and the receive that follows on its port.
    arrowList(d.joins, COLORS.join, true);

    // Event-channel marks: send a triangle up, receive a triangle down.
    const markCol = sc.markCol;
    const marks = (list, color, up) => {
      const p = new Path2D();
      perCol.fill(0, 0, cols);
      markCol.fill(-1, 0, rows);
      for (let i = lowerBound(list, t0, m => m.t); i < list.length && list[i].t <= t1; i++) {
        const m = list[i];
        const yy = rowY(m.row), x = xOf(m.t), s = 3.5;
        if (yy < AXIS_H || yy > H) continue;
        // One per row and pixel column, and a few per column.
        const c = Math.min(Math.max(Math.round(x), 0), cols - 1);
        if (markCol[m.row] === c || perCol[c] > 6) continue;
        if (filtering && !vis(m.th)) continue;
        markCol[m.row] = c;
        perCol[c]++;
        p.moveTo(x, up ? yy - s : yy + s);
        p.lineTo(x - s, up ? yy + s : yy - s);
        p.lineTo(x + s, up ? yy + s : yy - s);
        p.closePath();
      }
      ctx.fillStyle = color;
      ctx.fill(p);
    };
    marks(d.sends, COLORS.send, true);
    marks(d.recvs, COLORS.recv, false);

    // Failed threads: a cross where they failed.
    ctx.strokeStyle = COLORS.failed;
    ctx.lineWidth = 1.5;
    const crosses = new Path2D();
    for (let r = r0; r <= r1; r++) {
      rowRange(r, (sg, e) => {
        const th = sg.th;
        if (!th.failed || th.end === null || e !== th.end || th.end > t1) return;
        if (filtering && !threadVisible(view, th)) return;
        const yy = rowY(r), x = xOf(th.end);
        crosses.moveTo(x - 3, yy - 3); crosses.lineTo(x + 3, yy + 3);
        crosses.moveTo(x + 3, yy - 3); crosses.lineTo(x - 3, yy + 3);
      });
    }
    ctx.stroke(crosses);

    // Labels (and exceptions) on the lines, where there is room: measured, not
    // guessed (wide glyphs), and on rows lower than the font, never over a label of the
    // row above.
    if (view.rowH >= 7 && !(view.skip && view.skip.has('labels'))) {
      const fontPx = Math.min(view.rowH + 3, 11);
      ctx.font = `${fontPx}px sans-serif`;
      ctx.fillStyle = COLORS.text;
      let above = [], mine = [];
      for (let r = r0; r <= r1 && labelsDrawn <= 400; r++) {
        let room0 = -1e9;
        above = fontPx > view.rowH && mine.length && mine.r === r - 1 ? mine : [];
        mine = []; mine.r = r;
        rowRange(r, (sg, e) => {
          const th = sg.th;
          if (sg !== th.segs[0] || (filtering && !threadVisible(view, th))) return;
          if (!th.label && !(th.failed && th.exn)) return;
          const x = Math.max(xOf(th.created), 0) + 2;
          const xe = Math.min(xOf(e), W);
          const chars = Math.floor((xe - x) / 6);
          if (chars < 4 || x < room0) return;
          const text = shownLabel(th, Math.min(chars, 80));
          const w = ctx.measureText(text).width;
          if (x + w > xe + 6) return;
          if (above.some(([a, b]) => x < b && a < x + w)) return;
          room0 = x + w + 3;
          mine.push([x, x + w]);
          ctx.fillText(text, x, rowY(r) - 2);
          stats.labelBoxes.push({ host: d.host, domid: d.domid, row: r, x0: x, x1: x + w,
            y0: rowY(r) - 2 - fontPx * 0.8, y1: rowY(r) - 2 + fontPx * 0.2 });
          labelsDrawn++;
        });
      }
    }

    // The selected thread.
    if (view.selected && view.selected.key === d.key) {
      const th = d.threads.get(view.selected.id);
      if (th) {
        ctx.strokeStyle = COLORS.selected;
        ctx.lineWidth = 3;
        const end = th.end === null ? dnow : th.end;
        ctx.beginPath();
        for (let i = 0; i < th.segs.length; i++) {
          const s = th.segs[i], sEnd = i + 1 < th.segs.length ? th.segs[i + 1].t0 : end;
          ctx.moveTo(xOf(s.t0), rowY(s.row)); ctx.lineTo(Math.max(xOf(sEnd), xOf(s.t0) + 2), rowY(s.row));
        }
        ctx.stroke();
      }
    }

    drawVcpus(ctx, d, vcpus, L.vcpuTop, xOf, t0, t1, W);

    // Counters: one small graph each, steps over the window.
    counters.forEach(([name, c], k) => {
      const top = L.countersTop + k * COUNTER_H, h = COUNTER_H - 8;
      const pts = c.points;
      let lo = Infinity, hi = -Infinity;
      const i0 = Math.max(lowerBound(pts, t0, p => p[0]) - 1, 0);
      for (let i = i0; i < pts.length && pts[i][0] <= t1; i++) {
        lo = Math.min(lo, pts[i][1]); hi = Math.max(hi, pts[i][1]);
      }
      ctx.fillStyle = COLORS.band;
      ctx.fillRect(0, top, W, h);
      ctx.fillStyle = COLORS.text;
      ctx.font = '10px sans-serif';
      ctx.fillText(`${MtraceModel.printable(name, 60)} = ${c.value}`, 4, top + 10);
      if (lo === Infinity) return;
      if (hi === lo) { hi = lo + 1; }
      const yv = v => top + h - 1 - (v - lo) / (hi - lo) * (h - 2);
      ctx.strokeStyle = COLORS.counter;
      ctx.lineWidth = 1;
      ctx.beginPath();
      let first = true, prevY = 0;
      for (let i = i0; i < pts.length && pts[i][0] <= t1; i++) {
        const x = Math.max(xOf(pts[i][0]), 0), yy = yv(pts[i][1]);
        if (first) { ctx.moveTo(x, yy); first = false; } else { ctx.lineTo(x, prevY); ctx.lineTo(x, yy); }
        prevY = yy;
      }
      ctx.lineTo(Math.min(xOf(now), W), prevY);
      ctx.stroke();
    });
  }
  view.contentH = y + view.scrollY;
  // Event-channel pairs across the domains' bands (pairs.js), over every band.
  if (window.MtracePairs) MtracePairs.drawPairs(ctx, model, view, W, H, T0, T1);

  if (nowAxis >= T0 && nowAxis <= T1) {
    ctx.strokeStyle = COLORS.now;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(xAxis(nowAxis), AXIS_H - 6); ctx.lineTo(xAxis(nowAxis), H);
    ctx.stroke();
  }
  if (stats.arrowsLeftOut) {
    const msg = `${stats.arrowsLeftOut} slanted arrows not drawn at this zoom`;
    ctx.font = '11px sans-serif';
    const w = ctx.measureText(msg).width;
    ctx.fillStyle = COLORS.bg;
    ctx.fillRect(W - w - 10, 0, w + 10, AXIS_H - 6);
    ctx.fillStyle = COLORS.axis;
    ctx.fillText(msg, W - w - 5, 12);
  }
  const took = performance.now() - start;
  view.frames.push(took);
  if (view.frames.length > 240) view.frames.shift();
  return took;
}

// A domain's vCPUs (issue 38), one band each under its threads: running, runnable
// (steal: the vCPU waited for a physical CPU), blocked, offline; a sampled interval (the
// simulated Xen) stacks its measured parts, running at the bottom.
const VCPU_H = 9;
const VCPU_COLORS = { running: '#3a9a4a', runnable: '#d0402a', blocked: '#c8c8c8', offline: '#555' };
function drawVcpus(ctx, d, vcpus, top, xOf, t0, t1, W) {
  vcpus.forEach((v, k) => {
    const band = d.vcpus.get(v), y = top + k * VCPU_H, h = VCPU_H - 2;
    for (let i = lowerBound(band, t0, iv => iv.t1); i < band.length && band[i].t0 <= t1; i++) {
      const iv = band[i], x0 = Math.max(xOf(iv.t0), 0), w = Math.max(Math.min(xOf(iv.t1), W) - x0, 1);
      if (iv.state !== 'mixed') {
        ctx.fillStyle = VCPU_COLORS[iv.state] || VCPU_COLORS.offline;
        ctx.fillRect(x0, y, w, h);
        continue;
      }
      let yy = y + h;
      for (const [part, c] of [[iv.run, 'running'], [iv.steal, 'runnable'], [iv.blocked, 'blocked']]) {
        const ph = part * h;
        ctx.fillStyle = VCPU_COLORS[c];
        ctx.fillRect(x0, yy - ph, w, ph);
        yy -= ph;
      }
    }
    ctx.fillStyle = COLORS.text;
    ctx.font = '8px sans-serif';
    ctx.fillText(`vCPU ${v}`, 2, y + h - 1);
  });
}

// A fleet host's clock against NATS, as the page says it: "clock +5.002 s vs NATS".
function skewText(h) {
  if (!h || !h.skew) return h && h.host !== '' ? 'clock vs NATS: not measured yet' : '';
  const ms = Math.round(h.skew.skew_ns / 1e6);	// -0.4 ms is "+0.000"
  return `clock ${ms < 0 ? '\u2212' : '+'}${(Math.abs(ms) / 1e3).toFixed(3)} s vs NATS (at least; drawn shifted by it)`;
}

// The thread under a point, or null.
function hitTest(model, view, x, y, nowAxis, W) {
  const slack = view.spanMs * 4 / W;
  for (const L of view.layout) {
    if (y < L.rowsTop || y >= L.rowsTop + L.rows * view.rowH) continue;
    const sh = model.shiftMs(L.d), t = view.t0 + x / W * view.spanMs + sh, now = nowAxis + sh;
    const row = Math.floor((y - L.rowsTop) / view.rowH);
    for (const th of L.d.order) {
      if (!threadVisible(view, th)) continue;
      const end = th.end === null ? (L.d.alive ? now : Math.min(now, L.d.lastT)) : th.end;
      if (t < th.created - slack || t > end + slack) continue;
      if (rowAt(th, t) === row) return th;
    }
  }
  return null;
}

window.MtraceRender = { View, draw, hitTest, fmtDur, fmtTime, skewText, COLORS, VCPU_COLORS, VCPU_H };
