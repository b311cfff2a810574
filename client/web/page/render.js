// render.js - the timeline on a canvas: one band per domain, a row per thread line,
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
};
const HEADER_H = 20, AXIS_H = 22, COUNTER_H = 28, GAP = 8;

class View {
  constructor() {
    this.spanMs = 10000;	// visible span
    this.t1 = 0;		// right edge (wall ms)
    this.follow = true;
    this.rowH = 7;
    this.scrollY = 0;
    this.hidden = new Set();	// domids filtered out
    this.labelPrefix = '';
    this.selected = null;	// {domid, id}
    this.layout = [];		// per drawn domain: {d, top, rowsTop, rows, bottom}
    this.frames = [];		// draw times, ms (the last 240)
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

function threadVisible(view, th) {
  return !view.labelPrefix || th.label.startsWith(view.labelPrefix);
}

function draw(ctx, model, view, now, W, H) {
  const start = performance.now();
  const t0 = view.t0, t1 = view.t1, span = t1 - t0;
  const xOf = t => (t - t0) / span * W;
  ctx.fillStyle = COLORS.bg;
  ctx.fillRect(0, 0, W, H);

  // Time axis.
  const step = niceStep(span, W, 110);
  ctx.font = '11px sans-serif';
  ctx.fillStyle = COLORS.axis;
  ctx.strokeStyle = COLORS.grid;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
    const x = Math.round(xOf(t)) + 0.5;
    ctx.moveTo(x, AXIS_H - 4); ctx.lineTo(x, H);
    ctx.fillText(fmtTime(t, step), x + 3, 12);
  }
  ctx.stroke();

  view.layout = [];
  let y = AXIS_H - view.scrollY;
  const doms = [...model.domains.values()].sort((a, b) => a.domid - b.domid);
  let labelsDrawn = 0;
  for (const d of doms) {
    if (view.hidden.has(d.domid)) continue;
    const rows = Math.max(d.rowFree.length, 1);
    const counters = [...d.counters.entries()];
    const L = { d, top: y, rowsTop: y + HEADER_H, rows, bottom: 0 };
    L.countersTop = L.rowsTop + rows * view.rowH + 4;
    L.bottom = L.countersTop + counters.length * COUNTER_H + GAP;
    view.layout.push(L);
    y = L.bottom;
    if (L.bottom < 0 || L.top > H) continue;

    // Band and header.
    ctx.fillStyle = COLORS.band;
    ctx.fillRect(0, L.top, W, HEADER_H - 2);
    ctx.fillStyle = COLORS.text;
    ctx.font = 'bold 12px sans-serif';
    const state = d.alive ? '' : `  [${MtraceModel.printable(d.reason || 'down', 80)}]`;
    ctx.fillText(`dom ${d.domid} ${MtraceModel.printable(d.name, 80)}${state}  ` +
      `${d.threads.size} threads, ${d.events} events`, 6, L.top + 14);

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
    const lastX = new Float64Array(rows);
    // Only the rows on screen are visited.
    const r0 = Math.max(0, Math.floor((AXIS_H - L.rowsTop) / view.rowH) - 1);
    const r1 = Math.min(rows - 1, Math.ceil((H - L.rowsTop) / view.rowH) + 1);
    const segEnd = sg => {
      const th = sg.th, i = th.segs.indexOf(sg);
      return i + 1 < th.segs.length ? th.segs[i + 1].t0 : th.end === null ? now : th.end;
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
        const e = sg.th.segs.length === 1 ? (sg.th.end === null ? now : sg.th.end) : segEnd(sg);
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
    lastX.fill(-1e9);
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

    // Arrows, with the rows their ends had when they happened.  Where thousands land
    // on one pixel column, a few per column are enough to show it.
    const cols = Math.ceil(W) + 2;
    const perCol = new Uint16Array(cols), covLo = new Float32Array(cols), covHi = new Float32Array(cols);
    const arrowList = (list, color, dashed) => {
      if (view.skip && view.skip.has('arrows')) return;
      const heads = new Path2D(), lines = new Path2D();
      perCol.fill(0);
      covLo.fill(1e9);
      covHi.fill(-1e9);
      let n = 0;
      for (let i = lowerBound(list, t0 - span * 0.05, a => a.t); i < list.length && list[i].t <= t1; i++) {
        const a = list[i];
        let ya = rowY(a.ra), yb = rowY(a.rb);
        if ((ya < AXIS_H && yb < AXIS_H) || (ya > H && yb > H)) continue;
        const xb = xOf(a.t);
        const col = xb < 0 ? 0 : xb > W ? cols - 1 : Math.round(xb);
        const xa = a.ts !== undefined ? xOf(a.ts) : xb;
        const vertical = Math.abs(xa - xb) < 1;
        const lo = Math.max(Math.min(ya, yb), AXIS_H - 1), hi = Math.min(Math.max(ya, yb), H + 1);
        // A vertical line inside what this column already shows adds nothing.
        if (vertical && lo >= covLo[col] && hi <= covHi[col]) continue;
        if (perCol[col]++ > 12) continue;
        if (filtering && (!vis(a.from) || !vis(a.to))) continue;
        if (vertical) {
          if (lo <= covHi[col] + 1 && hi >= covLo[col] - 1) {
            covLo[col] = Math.min(covLo[col], lo); covHi[col] = Math.max(covHi[col], hi);
          } else if (hi - lo > covHi[col] - covLo[col]) {
            covLo[col] = lo; covHi[col] = hi;
          }
          // Clipped to the canvas: the off-screen part costs pixels for nothing.
          ya = Math.min(Math.max(ya, AXIS_H - 10), H + 10);
          yb = Math.min(Math.max(yb, AXIS_H - 10), H + 10);
        }
        lines.moveTo(xa, ya); lines.lineTo(xb, yb);
        const len = Math.hypot(xb - xa, yb - ya);
        if (len > 8 && n++ < 3000 && yb >= AXIS_H && yb <= H) {
          const ux = (xb - xa) / len, uy = (yb - ya) / len, hs = 3.5;
          heads.moveTo(xb, yb);
          heads.lineTo(xb - ux * hs * 1.7 - uy * hs, yb - uy * hs * 1.7 + ux * hs);
          heads.lineTo(xb - ux * hs * 1.7 + uy * hs, yb - uy * hs * 1.7 - ux * hs);
          heads.closePath();
        }
      }
      ctx.strokeStyle = color; ctx.fillStyle = color;
      ctx.setLineDash(dashed ? [3, 3] : []);
      ctx.stroke(lines);
      ctx.setLineDash([]);
      ctx.fill(heads);
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
    const marks = (list, color, up) => {
      const p = new Path2D();
      perCol.fill(0);
      for (let i = lowerBound(list, t0, m => m.t); i < list.length && list[i].t <= t1; i++) {
        const m = list[i];
        const yy = rowY(m.row), x = xOf(m.t), s = 3.5;
        if (yy < AXIS_H || yy > H) continue;
        if (perCol[Math.round(x)]++ > 6) continue;
        if (filtering && !vis(m.th)) continue;
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

    // Labels (and exceptions) on the lines, where there is room.
    if (view.rowH >= 7 && !(view.skip && view.skip.has('labels'))) {
      ctx.font = `${Math.min(view.rowH + 3, 11)}px sans-serif`;
      ctx.fillStyle = COLORS.text;
      for (let r = r0; r <= r1 && labelsDrawn <= 400; r++) {
        let room0 = -1e9;
        rowRange(r, (sg, e) => {
          const th = sg.th;
          if (sg !== th.segs[0] || (filtering && !threadVisible(view, th))) return;
          const text = th.failed && th.exn ? `${th.label} \u2717 ${th.exn}` : th.label;
          if (!text) return;
          const x = Math.max(xOf(th.created), 0) + 2;
          const chars = Math.floor((Math.min(xOf(e), W) - x) / 6);
          if (chars < 4 || x < room0) return;
          room0 = x + Math.min(chars, 80) * 6;
          ctx.fillText(MtraceModel.printable(text, Math.min(chars, 80)), x, rowY(r) - 2);
          labelsDrawn++;
        });
      }
    }

    // The selected thread.
    if (view.selected && view.selected.domid === d.domid) {
      const th = d.threads.get(view.selected.id);
      if (th) {
        ctx.strokeStyle = COLORS.selected;
        ctx.lineWidth = 3;
        const end = th.end === null ? now : th.end;
        ctx.beginPath();
        for (let i = 0; i < th.segs.length; i++) {
          const s = th.segs[i], sEnd = i + 1 < th.segs.length ? th.segs[i + 1].t0 : end;
          ctx.moveTo(xOf(s.t0), rowY(s.row)); ctx.lineTo(Math.max(xOf(sEnd), xOf(s.t0) + 2), rowY(s.row));
        }
        ctx.stroke();
      }
    }

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

  if (now >= t0 && now <= t1) {
    ctx.strokeStyle = COLORS.now;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(xOf(now), AXIS_H - 6); ctx.lineTo(xOf(now), H);
    ctx.stroke();
  }
  const took = performance.now() - start;
  view.frames.push(took);
  if (view.frames.length > 240) view.frames.shift();
  return took;
}

// The thread under a point, or null.
function hitTest(model, view, x, y, now, W) {
  const t = view.t0 + x / W * view.spanMs;
  const slack = view.spanMs * 4 / W;
  for (const L of view.layout) {
    if (y < L.rowsTop || y >= L.rowsTop + L.rows * view.rowH) continue;
    const row = Math.floor((y - L.rowsTop) / view.rowH);
    for (const th of L.d.order) {
      if (!threadVisible(view, th)) continue;
      const end = th.end === null ? now : th.end;
      if (t < th.created - slack || t > end + slack) continue;
      if (rowAt(th, t) === row) return th;
    }
  }
  return null;
}

window.MtraceRender = { View, draw, hitTest, fmtDur, fmtTime, COLORS };
