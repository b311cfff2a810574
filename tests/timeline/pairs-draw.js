#!/usr/bin/env node
// pairs-draw.js MODEL_JS PAIRS_JS - the page's drawing of event-channel pairs across
// domains (client/web/page/pairs.js, the file the browser runs) on a recording canvas,
// for each verdict the feed can send (docs/json.md evtchn_pair): an ordered pair is one
// solid arrow, tail at the send and head at the receive, forward in time; an uncertain
// pair (here one whose receive lies a little before its send) is a grey dashed line with
// no head; a violated pair and an unmapped one are not drawn at all, and the corner note
// counts each kind; past PAIRS_MAX a frame leaves the rest out and says so, unless the
// view asks for every one (lod false).  The browser test (test-browser-pairs.sh) sees
// only ordered pairs: real clocks give no other verdict.
'use strict';
const fs = require('fs');
const vm = require('vm');

const [modelJs, pairsJs] = process.argv.slice(2);
let failed = false;
const check = (ok, what) => { console.log(`${ok ? 'ok' : 'FAIL'}: ${what}`); if (!ok) failed = true; };

// A Path2D that remembers its segments, and a context that remembers what was stroked
// and filled with which style.
class Path2D {
  constructor() { this.segs = []; this.at = null; this.closed = 0; }
  moveTo(x, y) { this.at = [x, y]; }
  lineTo(x, y) { this.segs.push([this.at[0], this.at[1], x, y]); this.at = [x, y]; }
  closePath() { this.closed++; }
}
const ops = [], texts = [];
let dash = [];
const ctx = {
  strokeStyle: '', fillStyle: '', lineWidth: 1, font: '',
  setLineDash(d) { dash = d; },
  stroke(p) { ops.push({ op: 'stroke', style: this.strokeStyle, dashed: dash.length > 0, p }); },
  fill(p) { ops.push({ op: 'fill', style: this.fillStyle, p }); },
  fillRect() {},
  fillText(s) { texts.push(s); },
  measureText(s) { return { width: s.length * 6 }; },
};
const sandbox = { window: {}, BigInt, Math, Map, Set, Number, String, JSON, Infinity, Path2D };
vm.createContext(sandbox);
vm.runInContext(fs.readFileSync(modelJs, 'utf8'), sandbox, { filename: modelJs });
vm.runInContext(fs.readFileSync(pairsJs, 'utf8'), sandbox, { filename: pairsJs });
const { Model } = sandbox.window.MtraceModel, P = sandbox.window.MtracePairs;

const model = new Model();
const d1 = model.dom('', 1), d2 = model.dom('', 2);
d1.lastT = 2500;	// where its events were placed (an unmapped pair's time)
const end = (domid, ms) => ({ domid, port: 5, ring: 0, ts: 1, thread: -1,
  ...(ms === null ? {} : { host_ns: Math.round(ms * 1e6) }) });
const pair = (s, r, order, gap) => P.addPair(model, { v: 1, type: 'evtchn_pair',
  send: end(1, s), recv: end(2, r), gap_ns: gap, uncertainty_ns: 5000, order });
pair(1000, 1000.01, 'ordered', 10000);
pair(2000, 1999.999, 'uncertain', -1000);
pair(3000, 2999, 'violated', -1000000);
pair(null, null, 'unmapped', 0);
const view = { rowH: 7, stats: {}, layout: [{ d: d1, rowsTop: 40, rows: 1 }, { d: d2, rowsTop: 100, rows: 1 }] };
const W = 1000, H = 500;
P.drawPairs(ctx, model, view, W, H, 900, 3100);
const st = view.stats.pairs;
check(st.ordered === 1 && st.uncertain === 1 && st.violated === 1 && st.unmapped === 1,
  `one pair of each verdict in the frame: ${JSON.stringify({ o: st.ordered, u: st.uncertain, v: st.violated, m: st.unmapped })}`);
const solid = ops.filter(o => o.op === 'stroke' && !o.dashed && o.style === P.PAIR_COLORS.ordered);
const dashed = ops.filter(o => o.op === 'stroke' && o.dashed);
const heads = ops.filter(o => o.op === 'fill' && o.style === P.PAIR_COLORS.ordered);
const segs = solid.flatMap(o => o.p.segs);
check(segs.length === 1 && segs[0][2] >= segs[0][0] && segs[0][1] < segs[0][3],
  `one solid line, forward in time, from dom1's band down to dom2's: ${JSON.stringify(segs)}`);
check(heads.length === 1 && heads[0].p.closed === 1, 'one arrow head');
const h = heads[0].p.segs[0];
check(h && Math.abs(h[0] - segs[0][2]) < 1e-9 && Math.abs(h[1] - segs[0][3]) < 1e-9, 'the head at the receive');
const dsegs = dashed.flatMap(o => o.p.segs);
check(dashed.every(o => o.style === P.PAIR_COLORS.uncertain) && dsegs.length === 1 && dsegs[0][2] < dsegs[0][0],
  'the uncertain pair (receive drawn left of its send) is one grey dashed line, no head');
check(texts.some(t => /1 event-channel pairs grey/.test(t)) &&
  texts.some(t => /1 pairs not drawn: the receive is before the send/.test(t)) &&
  texts.some(t => /1 pairs not drawn: a clock not on the host timeline/.test(t)),
  `the corner says what is grey and what is not drawn: ${JSON.stringify(texts)}`);

// Past PAIRS_MAX: left out and said, unless every one is asked for.
const extra = P.PAIRS_MAX + 500;
for (let i = 0; i < extra; i++) pair(1500 + i * 1e-3, 1500.01 + i * 1e-3, 'ordered', 10000);
ops.length = 0; texts.length = 0;
P.drawPairs(ctx, model, view, W, H, 900, 3100);
check(view.stats.pairs.ordered === P.PAIRS_MAX - 1 && view.stats.pairs.leftOut === extra + 2 - P.PAIRS_MAX &&
  texts.some(t => /pairs not drawn at this zoom/.test(t)),
  `at most ${P.PAIRS_MAX} drawn a frame, the rest said: ${view.stats.pairs.ordered} drawn, ${view.stats.pairs.leftOut} left out`);
view.lod = false;
P.drawPairs(ctx, model, view, W, H, 900, 3100);
check(view.stats.pairs.ordered === extra + 1 && view.stats.pairs.leftOut === 0 &&
  view.stats.pairs.arrows.every(a => a[2] >= a[0]), 'lod false: every ordered pair drawn, all forward');

// Pruned with the model's window and cap.
P.prunePairs(model, 2500);
check(model.pairs.length === extra + 2 && model.pairs[0].order === 'violated', 'pruned to the window');
model.maxEvents = 400;
P.prunePairs(model, 0);
check(model.pairs.length === 100, `and to a quarter of the event cap: ${model.pairs.length}`);
process.exit(failed ? 1 : 0);
