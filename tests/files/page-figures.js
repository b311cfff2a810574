#!/usr/bin/env node
// page-figures.js SSE MODEL_JS: mtrace-web's page model (client/web/page/model.js, the
// file the browser runs) fed a capture of /events (curl -N), as the page's app.js feeds
// it (hello's thread types, up, down, b); prints model.figures() as JSON.
'use strict';
const path = require('path');
const { applyMessage, loadPage, sseMessages } = require(path.join(__dirname, '..', 'lib', 'page-model.js'));

const [sse, modelJs] = process.argv.slice(2);
const { MtraceModel } = loadPage(modelJs);
const model = new MtraceModel.Model();

let n = 0;
for (const { ev, m } of sseMessages(sse)) n += applyMessage(model, ev, m);
// A model without figures() (main before docs/figures.md): what its threads say.
function held() {
  const out = {};
  for (const d of model.domains.values()) {
    const ths = [...d.order], labels = {};
    for (const th of ths) {
      if (!th.label) continue;
      const f = labels[th.label] || (labels[th.label] = { count: 0, current: 0, live: 0 });
      f.count++; f.current++;
      if (th.end === null) f.live++;
    }
    const pending = ths.filter(th => th.end === null).length;
    out[d.domid] = { created: ths.length, pending, ended: ths.length - pending,
      labelled: ths.filter(th => th.label).length, labels };
  }
  return out;
}
const out = { events: n, domains: model.figures ? model.figures() : held() };
process.stdout.write(JSON.stringify(out) + '\n');
