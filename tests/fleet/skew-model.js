#!/usr/bin/env node
// skew-model.js SSE MODEL_JS RENDER_JS OFFSETS R0 R1 TOL_NS: tests/fleet/test-skew.sh's
// look at mtrace-web's page model (client/web/page/model.js, the file the browser runs),
// fed a capture of mtrace-web --nats /events as app.js feeds it.  OFFSETS: each host's
// true clock offset (ns, JSON); R0, R1: this machine's realtime - monotonic before and
// after the guests ran (their ring clock is CLOCK_MONOTONIC, which no host skews, so an
// event's true time is its guest time + R).  Every event as the model places it:
//   - on its host's own mapped timeline at its true time + the host's offset (5 ms: the
//     clock maps' own uncertainty is microseconds), in order in its ring;
//   - on the fleet axis (model.fleetT, the host's measured skew taken out) at its true
//     time, from at most 1 ms before (the skew is a lower bound) to TOL_NS after;
// and the page's words for each host's clock (render.js's skewText) name its skew.
'use strict';
const path = require('path');
const { applyMessage, loadPage, sseMessages } = require(path.join(__dirname, '..', 'lib', 'page-model.js'));

const [sse, modelJs, renderJs, offJson, r0, r1, tolArg] = process.argv.slice(2);
const offs = JSON.parse(offJson), tolMs = Number(tolArg) / 1e6;
if (Math.abs(Number(BigInt(r1) - BigInt(r0))) > 1e6) {
  console.log(`FAIL: realtime - monotonic moved by ${BigInt(r1) - BigInt(r0)} ns while the guests ran`);
  process.exit(1);
}
const R = BigInt(r0);
const page = loadPage(modelJs, renderJs);
const model = new page.MtraceModel.Model();
const { skewText } = page.MtraceRender;

// Every event as the model places it (its time t, ms), beside its true time.
const placed = [];
let trueNs = [], base = 0;
const event = model.event;
model.event = function (d, ring, t, ...rest) {
  placed.push({ d, ring, t, trueMs: Number(trueNs[placed.length - base]) / 1e6 });
  return event.call(this, d, ring, t, ...rest);
};

let failed = false;
const check = (ok, what) => { if (!ok) { failed = true; console.log(`FAIL: ${what}`); } return ok; };
let skews = 0;
for (const { ev, m } of sseMessages(sse)) {
  if (ev !== 'b') {
    applyMessage(model, ev, m);
    skews += ev === 'skew';
  } else {
    if (!check(m.ho !== undefined, `host ${m.host} dom ${m.d}: a batch not on the host timeline`)) continue;
    trueNs = [];
    let g = BigInt(m.t);
    for (const dt of m.dt) { g += BigInt(dt); trueNs.push(g + R); }
    base = placed.length;
    model.batch(m);
    check(placed.length - base === m.op.length, `host ${m.host}: ${placed.length - base} events placed of ${m.op.length}`);
  }
}

const hosts = Object.keys(offs).sort();
check(JSON.stringify([...model.hosts.keys()].sort()) === JSON.stringify(hosts),
  `the model's hosts ${[...model.hosts.keys()]}, want ${hosts}`);
const out = {};
for (const h of hosts) {
  const offMs = offs[h] / 1e6, H = model.hosts.get(h);
  const mine = placed.filter(p => p.d.host === h);
  const o = out[h] = { events: mine.length, skew_ms: H && H.skew ? H.skew.skew_ns / 1e6 : null,
    text: skewText(H) };
  if (!check(mine.length > 0 && o.skew_ms !== null, `host ${h}: ${mine.length} events, skew ${o.skew_ms}`)) continue;
  check(Math.abs(o.skew_ms - offMs) <= tolMs, `host ${h}: measured ${o.skew_ms} ms, offset ${offMs} ms`);
  const said = /^clock ([+\u2212])(\d+\.\d{3}) s vs NATS/.exec(o.text);
  check(said && Math.abs((said[1] === '+' ? 1 : -1) * Number(said[2]) * 1e3 - o.skew_ms) <= 0.5,
    `host ${h}: the page says "${o.text}" of a skew of ${o.skew_ms} ms`);
  // its own timeline: true + offset; in order per ring
  let worst = 0, early = Infinity, late = -Infinity, order = 0;
  const last = new Map();
  for (const p of mine) {
    worst = Math.max(worst, Math.abs(p.t - p.trueMs - offMs));
    const f = model.fleetT(p.d, p.t) - p.trueMs;
    early = Math.min(early, f);
    late = Math.max(late, f);
    const k = `${p.d.domid}/${p.ring}`;
    if (last.has(k) && p.t < last.get(k)) order++;
    last.set(k, p.t);
  }
  Object.assign(o, { own_ms: worst, fleet_ms: [early, late], out_of_order: order });
  check(worst <= 5, `host ${h}: its own timeline is off its true time + offset by up to ${worst} ms`);
  check(order === 0, `host ${h}: ${order} events before the one before them in their ring`);
  check(early >= -1 && late <= tolMs,
    `host ${h}: on the fleet axis ${early.toFixed(3)} .. ${late.toFixed(3)} ms off its true time`);
}
check(skews >= hosts.length, `${skews} skew messages on /events`);
console.log(JSON.stringify(out));
process.exit(failed ? 1 : 0);
