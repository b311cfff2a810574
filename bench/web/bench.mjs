// bench.mjs - driven by bench/web/run.sh: throughput to one browser, server CPU per
// event, frame time with 10,000 threads.  Prints one line per figure.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const puppeteer = (await import(path.join(here, '../../tests/web/node_modules/puppeteer-core/lib/esm/puppeteer/puppeteer-core.js'))).default;
const env = process.env;
const RUNS = Number(env.RUNS || 3);
const sleep = ms => new Promise(r => setTimeout(r, ms));
const median = a => [...a].sort((x, y) => x - y)[a.length >> 1];
const clk = 100;	// USER_HZ
const cpu = pid => { const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); const v = f.slice(f.lastIndexOf(')') + 2).split(' '); return (Number(v[11]) + Number(v[12])) / clk; };
let seq = 0;
function guest(...argv) {
  const name = `g${seq++}`;
  const id = Number(execFileSync(env.SIMXEN, ['-d', env.RIG_SIM, 'create', '--name', name, '--log', path.join(env.RIG_DIR, `${name}.log`), '--', env.LOAD, ...argv], { encoding: 'utf8' }).trim());
  return { id, name };
}
const alive = name => execFileSync(env.SIMXEN, ['-d', env.RIG_SIM, 'list'], { encoding: 'utf8' }).includes(` ${name} running `);

const browser = await puppeteer.launch({ executablePath: '/usr/bin/chromium-headless-shell', args: ['--no-sandbox', '--disable-gpu', '--disable-background-timer-throttling'] });
async function fresh() {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 820 });
  await page.goto(env.URL);
  await page.waitForFunction(() => window.mtrace && mtrace.state.connected);
  return page;
}

// 1+2: offered rate per ring (2 rings), events per ring.
const rates = (env.RATES || '25000,50000,100000,0').split(',').map(Number);
for (const rate of rates) {
  const res = [];
  for (let r = 0; r < RUNS; r++) {
    const page = await fresh();
    const events = rate ? rate * 3 : 300000;
    const cat = spawn(env.CAT, ['-s', env.RIG_SOCK, '-f', 'count', '--summary'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let catOut = '';
    cat.stderr.on('data', d => { catOut += d; });
    await sleep(300);
    const c0 = cpu(env.WEB_PID);
    const g = guest('--rings', '2', '--threads', '256', '--labels', '16', '--rate', String(rate), '--events', String(events), '--pages', '256');
    while (alive(g.name)) await sleep(100);
    let last = -1, v;
    for (;;) {
      v = await page.evaluate(id => ({ n: mtrace.model.domains.get(id)?.events ?? 0, dropped: mtrace.model.dropped, a: mtrace.state.arrival[id]?.[0], b: mtrace.state.arrival[id]?.[1] }), g.id);
      if (v.n === last) break;
      last = v.n;
      await sleep(700);
    }
    const c1 = cpu(env.WEB_PID);
    cat.kill('SIGTERM');
    await new Promise(r => cat.on('close', r));
    const cs = JSON.parse(catOut.trim().split('\n').pop());
    const secs = (v.b - v.a) / 1000;
    res.push({ got: v.n, dropped: v.dropped, rate: v.n / secs, cpuPerEv: (c1 - c0) / Math.max(cs.events, 1) * 1e9, catEvents: cs.events });
    await page.close();
  }
  const m = k => median(res.map(x => x[k]));
  console.log(`offered ${rate ? `${2 * rate}/s` : 'flat out'} (2 rings): browser got ${m('got')} of ${m('catEvents')} (mtrace-cat), told of ${m('dropped')} dropped; ` +
    `${Math.round(m('rate'))} events/s into the page; mtrace-web CPU ${m('cpuPerEv').toFixed(0)} ns/event  [runs: ${res.map(x => Math.round(x.rate)).join(', ')} ev/s; ${res.map(x => x.cpuPerEv.toFixed(0)).join(', ')} ns]`);
}

// 3: 10,000 threads in the window.
{
  const page = await fresh();
  if (env.PROFILE) await page.evaluate(() => { window.__profile = true; });
  const g = guest('--rings', '1', '--threads', '10000', '--labels', '64', '--rate', '40000', '--events', '120000', '--pages', '256');
  while (alive(g.name)) await sleep(100);
  await sleep(1500);
  const fr = [];
  for (let r = 0; r < RUNS; r++) {
    fr.push(await page.evaluate(id => {
      const d = mtrace.model.domains.get(id);
      let lo = Infinity, hi = -Infinity;
      for (const th of d.order) { lo = Math.min(lo, th.created); hi = Math.max(hi, th.end ?? th.created); }
      mtrace.state.paused = true; mtrace.view.follow = false;
      mtrace.view.hidden = new Set([...mtrace.model.domains.keys()].filter(k => k !== id));
      mtrace.view.spanMs = hi - lo; mtrace.view.t1 = hi;
      const inWin = d.order.filter(th => (th.end ?? Infinity) >= lo && th.created <= hi).length;
      const t = [];
      for (let i = 0; i < 30; i++) { const a = performance.now(); mtrace.drawOnce(); t.push(performance.now() - a); }
      t.sort((x, y) => x - y);
      const parts = {};
      if (window.__profile) for (const sk of [['arrows'], ['arrows', 'lines'], ['arrows', 'lines', 'labels']]) {
        mtrace.view.skip = new Set(sk); const q = [];
        for (let i = 0; i < 9; i++) { const a = performance.now(); mtrace.drawOnce(); q.push(performance.now() - a); }
        parts[sk.join('+')] = q.sort((x, y) => x - y)[4];
        mtrace.view.skip = null;
      }
      console.log(JSON.stringify(parts));
      return { parts, threads: inWin, rows: d.rowFree.length, median: t[15], p95: t[28], events: d.events };
    }, g.id));
  }
  const m = k => median(fr.map(x => x[k]));
  if (env.PROFILE) {
    console.log(JSON.stringify(fr.map(x => x.parts)));
    const cdp = await page.target().createCDPSession();
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
    await page.evaluate(() => { for (let i = 0; i < 10; i++) mtrace.drawOnce(); });
    const { profile } = await cdp.send('Profiler.stop');
    const self = new Map(), byId = new Map(profile.nodes.map(n => [n.id, n]));
    const dt = profile.timeDeltas; let i = 0;
    for (const sid of profile.samples) { const n = byId.get(sid); const k = `${n.callFrame.functionName || '(anon)'}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) || 0) + (dt[i++] || 0)); }
    console.log([...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, v]) => `${k} ${(v / 1000).toFixed(0)}ms`).join('\n'));
  }
  console.log(`frame with ${m('threads')} threads in the window (${m('rows')} rows, ${m('events')} events): draw median ${m('median').toFixed(1)} ms, p95 ${m('p95').toFixed(1)} ms  [runs: ${fr.map(x => x.median.toFixed(1)).join(', ')} ms]`);
  // Frames the page actually shows while following a live guest with 10,000 threads.
  await page.evaluate(() => { mtrace.state.paused = false; mtrace.view.follow = true; mtrace.view.spanMs = 10000; mtrace.view.hidden.clear(); });
  const g2 = guest('--rings', '1', '--threads', '10000', '--labels', '64', '--rate', '5000', '--duration', '5', '--pages', '256');
  await sleep(1500);
  const fps = await page.evaluate(() => new Promise(res => { let n = 0; const t0 = performance.now(); const f = () => { n++; if (performance.now() - t0 < 3000) requestAnimationFrame(f); else res(n / 3); }; requestAnimationFrame(f); }));
  const th = await page.evaluate(id => { const d = mtrace.model.domains.get(id); const t0 = mtrace.view.t0; return d.order.filter(t => (t.end ?? Infinity) >= t0).length; }, g2.id);
  console.log(`following live (10 s window, ${th} threads of the live guest in it): ${fps.toFixed(1)} animation frames/s, draw median ${(await page.evaluate(() => mtrace.frameStats().median)).toFixed(1)} ms`);
}
await browser.close();
