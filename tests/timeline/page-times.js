#!/usr/bin/env node
// page-times.js SSE MODEL_JS: mtrace-web's page model (client/web/page/model.js, the
// file the browser runs) fed a capture of /events as app.js feeds it (hello's thread
// types, up, down, clock, b); prints per domain whether it is on the host timeline and
// the times (ms on the page's axis) and ports of its event-channel sends and receives.
'use strict';
const path = require('path');
const { applyMessage, loadPage, sseMessages } = require(path.join(__dirname, '..', 'lib', 'page-model.js'));

const [sse, modelJs] = process.argv.slice(2);
const { MtraceModel } = loadPage(modelJs);
const model = new MtraceModel.Model();

let n = 0;
for (const { ev, m } of sseMessages(sse)) n += applyMessage(model, ev, m);
const out = { events: n, domains: {} };
for (const d of model.domains.values()) {
  out.domains[d.domid] = {
    aligned: d.aligned, events: d.events, clock: d.clock,
    sends: d.sends.map(x => [x.t, x.port]), recvs: d.recvs.map(x => [x.t, x.port]),
  };
}
process.stdout.write(JSON.stringify(out) + '\n');
