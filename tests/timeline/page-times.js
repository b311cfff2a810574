#!/usr/bin/env node
// page-times.js SSE MODEL_JS: mtrace-web's page model (client/web/page/model.js, the
// file the browser runs) fed a capture of /events as app.js feeds it (hello's thread
// types, up, down, clock, b); prints per domain whether it is on the host timeline and
// the times (ms on the page's axis) and ports of its event-channel sends and receives.
'use strict';
const fs = require('fs');
const vm = require('vm');

const [sse, modelJs] = process.argv.slice(2);
const ctx = { window: {}, BigInt, Math, Map, Set, Number, String, JSON, Infinity };
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(modelJs, 'utf8'), ctx, { filename: modelJs });
const model = new ctx.window.MtraceModel.Model();

let n = 0;
for (const msg of fs.readFileSync(sse, 'utf8').split('\n\n')) {
  let ev = 'message';
  const data = [];
  for (const line of msg.split('\n')) {
    if (line.startsWith('event:')) ev = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (!data.length) continue;
  const m = JSON.parse(data.join('\n'));
  if (ev === 'hello' && m.types) model.typeNames = m.types;
  else if (ev === 'up') model.domainUp(m);
  else if (ev === 'down') model.domainDown(m);
  else if (ev === 'clock') model.clockMap(m);
  else if (ev === 'b') { model.batch(m); n += m.op.length; }
}
const out = { events: n, domains: {} };
for (const d of model.domains.values()) {
  out.domains[d.domid] = {
    aligned: d.aligned, events: d.events, clock: d.clock,
    sends: d.sends.map(x => [x.t, x.port]), recvs: d.recvs.map(x => [x.t, x.port]),
  };
}
process.stdout.write(JSON.stringify(out) + '\n');
