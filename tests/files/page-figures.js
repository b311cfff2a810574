#!/usr/bin/env node
// page-figures.js SSE MODEL_JS: mtrace-web's page model (client/web/page/model.js, the
// file the browser runs) fed a capture of /events (curl -N), as the page's app.js feeds
// it (hello's thread types, up, down, b); prints model.figures() as JSON.
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
  else if (ev === 'b') { model.batch(m); n += m.op.length; }
}
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
