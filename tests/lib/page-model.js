// page-model.js - mtrace-web's page model (client/web/page/model.js, the file the browser
// runs) loaded in node for the tests, and a capture of mtrace-web's /events (curl -N)
// read back message by message, as the page's app.js takes them.
'use strict';
const fs = require('fs');
const vm = require('vm');

// A context holding the page's scripts (model.js first; render.js after it, if given):
// its window.MtraceModel (and window.MtraceRender).
function loadPage(modelJs, renderJs) {
  const ctx = { window: {}, BigInt, Math, Map, Set, Number, String, JSON, Infinity };
  vm.createContext(ctx);
  vm.runInContext(fs.readFileSync(modelJs, 'utf8'), ctx, { filename: modelJs });
  if (renderJs) {
    ctx.MtraceModel = ctx.window.MtraceModel;
    vm.runInContext(fs.readFileSync(renderJs, 'utf8'), ctx, { filename: renderJs });
  }
  return ctx.window;
}

// The SSE capture's messages in order: { ev: the event name ("message" if none), m: its
// data parsed as JSON }.
function* sseMessages(path) {
  for (const msg of fs.readFileSync(path, 'utf8').split('\n\n')) {
    let ev = 'message';
    const data = [];
    for (const line of msg.split('\n')) {
      if (line.startsWith('event:')) ev = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length) yield { ev, m: JSON.parse(data.join('\n')) };
  }
}

// One message of the capture into the model as app.js hands it over (client/web/page):
// the events of a batch ('b'), 0 for the rest.  A message the model does not know yet
// (an older model.js, measured beside this one) is left out.
function applyMessage(model, ev, m) {
  if (ev === 'hello') {
    if (m.types) model.typeNames = m.types;
    model.fleetFeed = !!m.fleet;
  } else if (ev === 'up') model.domainUp(m);
  else if (ev === 'down') model.domainDown(m);
  else if (ev === 'clock' && model.clockMap) model.clockMap(m);
  else if (ev === 'skew' && model.hostSkew) model.hostSkew(m);
  else if (ev === 'vcpu' && model.vcpu) model.vcpu(m);
  else if (ev === 'b') { model.batch(m); return m.op.length; }
  return 0;
}

module.exports = { applyMessage, loadPage, sseMessages };
