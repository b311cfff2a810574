// bench.mjs - driven by bench/web/run.sh: throughput to one browser, server CPU per
// event, frame time with 10,000 threads (this page beside BASE's).  Prints one line per figure.
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
  const id = Number(execFileSync(env.SIMXEN, ['--dir', env.RIG_SIM, 'create', '--name', name, '--log', path.join(env.RIG_DIR, `${name}.log`), '--', env.LOAD, ...argv], { encoding: 'utf8' }).trim());
  return { id, name };
}
const alive = name => execFileSync(env.SIMXEN, ['--dir', env.RIG_SIM, 'list'], { encoding: 'utf8' }).includes(` ${name} running `);

const browser = await puppeteer.launch({ executablePath: '/usr/bin/chromium-headless-shell', args: ['--no-sandbox', '--disable-gpu', '--disable-background-timer-throttling'] });
async function fresh() {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 820 });
  await page.goto(env.URL);
  await page.waitForFunction(() => window.mtrace && mtrace.state.connected);
  return page;
}

// 1+2: offered rate per ring (2 rings), events per ring.
const rates = env.PARTS === 'frames' ? [] : (env.RATES || '25000,50000,100000,0').split(',').map(Number);
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
      v = await page.evaluate(id => { const w = mtrace.state.arrival[MtraceModel.domKey('', id)]; return { n: mtrace.model.domain('', id)?.events ?? 0, dropped: mtrace.model.dropped, a: w?.[0], b: w?.[1] }; }, g.id);
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

// 3: 10,000 threads in the window, this tree's page beside BASE's, alternately.  Each
// page in its own browser context (its own renderer process).  Per frame: the draw
// call's own time (wall, in the page), the renderer main thread's script and task
// time from DevTools' performance metrics (which include the canvas's rasterisation
// when it is flushed), and the time between animation frames.
async function open(url) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setViewport({ width: 1400, height: 820 });
  await page.goto(url);
  await page.waitForFunction(() => window.mtrace && mtrace.state.connected);
  const cdp = await page.target().createCDPSession();
  await cdp.send('Performance.enable');
  return { page, cdp, close: () => ctx.close() };
}
const metrics = async cdp => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map(m => [m.name, m.value]));
// CPU seconds of every renderer process (all its threads: script, canvas raster,
// compositor): on a loaded machine wall times stretch, CPU time much less.
const bcdp = await browser.target().createCDPSession();
// The GPU process too: with --disable-gpu it still rasterises canvases and composites.
const renderers = async () => new Map((await bcdp.send('SystemInfo.getProcessInfo')).processInfo
  .filter(p => p.type === 'renderer' || p.type === 'GPU').map(p => [p.type === 'GPU' ? 'gpu' : p.id, p.cpuTime]));
// ms: run for that long; drive: draw every animation frame ourselves (zoomed out,
// paused: nothing else draws); else count the page's own draws (following).
async function frames(p, ms, drive) {
  const m0 = await metrics(p.cdp), c0 = await renderers();
  const r = await p.page.evaluate((ms, drive) => new Promise(res => {
    const gaps = [], draws = [];
    mtrace.view.frames.length = 0;
    let last = performance.now();
    const t0 = last;
    const f = () => {
      const a = performance.now();
      gaps.push(a - last); last = a;
      if (drive) draws.push(mtrace.drawOnce());
      if (a - t0 < ms) requestAnimationFrame(f);
      else res({ gaps, draws: drive ? draws : [...mtrace.view.frames], secs: (a - t0) / 1000 });
    };
    requestAnimationFrame(f);
  }), ms, drive);
  const m1 = await metrics(p.cdp), c1 = await renderers();
  const n = Math.max(r.draws.length, 1);
  // The busiest renderer is the page measured (the other one is idle).
  let cpu = 0;
  for (const [id, t] of c1) if (id !== 'gpu') cpu = Math.max(cpu, t - (c0.get(id) ?? 0));
  const gpu = (c1.get('gpu') ?? 0) - (c0.get('gpu') ?? 0);
  return {
    fps: r.gaps.length / r.secs, drawn: r.draws.length / r.secs, draw: median(r.draws),
    script: (m1.ScriptDuration - m0.ScriptDuration) * 1000 / n,
    task: (m1.TaskDuration - m0.TaskDuration) * 1000 / n, cpu: cpu * 1000 / n, gpu: gpu * 1000 / n, gap: median(r.gaps.slice(1)), secs: r.secs,
  };
}
async function profile(p, label, ms, drive) {
  await p.cdp.send('Profiler.enable');
  await p.cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await p.cdp.send('Profiler.start');
  const f = await frames(p, ms, drive);
  const { profile } = await p.cdp.send('Profiler.stop');
  const self = new Map(), byId = new Map(profile.nodes.map(n => [n.id, n]));
  const dt = profile.timeDeltas; let i = 0;
  for (const sid of profile.samples) {
    const n = byId.get(sid);
    const k = `${n.callFrame.functionName || '(anon)'}:${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber + 1}`;
    self.set(k, (self.get(k) || 0) + (dt[i++] || 0));
  }
  const perFrame = f.drawn * f.secs || 1;
  console.log(`  profile, ${label} (self time per drawn frame, ${Math.round(perFrame)} frames):\n` +
    [...self.entries()].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, 12)
      .map(([k, v]) => `    ${(v / 1000 / perFrame).toFixed(2)} ms  ${k}`).join('\n'));
}
const pages = [['this tree', env.URL, env.HEAD_REV], ['BASE', env.BASE_URL, env.BASE_REV]].slice(0, env.ONLY === 'this' ? 1 : 2);
const fmt = (name, rev, res) => {
  const m = k => median(res.map(x => x[k]));
  return `  ${`${name} (${rev})`.padEnd(22)} renderer CPU ${m('cpu').toFixed(1)} ms/frame (+ GPU process ${m('gpu').toFixed(1)}), script ${m('script').toFixed(1)} ms/frame, task ${m('task').toFixed(1)} ms/frame, ` +
    `draw() ${m('draw').toFixed(1)} ms; ${m('drawn').toFixed(1)} frames drawn/s, animation frames ${m('fps').toFixed(1)}/s ` +
    `(gap ${m('gap').toFixed(1)} ms)  [CPU by run: ${res.map(x => x.cpu.toFixed(1)).join(', ')}; GPU: ${res.map(x => x.gpu.toFixed(1)).join(', ')}; script: ${res.map(x => x.script.toFixed(1)).join(', ')}]`;
};
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
{
  // Zoomed out: one guest's whole run, 10,000 threads, paused.
  const ps = [];
  for (const [name, url, rev] of pages) ps.push({ name, rev, p: await open(url), res: [] });
  const g = guest('--rings', '1', '--threads', '10000', '--labels', '64', '--rate', '40000', '--events', '120000', '--pages', '256');
  while (alive(g.name)) await sleep(100);
  await sleep(1500);
  let shape = '';
  for (const x of ps) {
    shape = JSON.stringify(await x.p.page.evaluate(id => {
      const d = mtrace.model.domain('', id);
      let lo = Infinity, hi = -Infinity;
      for (const th of d.order) { lo = Math.min(lo, th.created); hi = Math.max(hi, th.end ?? th.created); }
      mtrace.state.paused = true; mtrace.view.follow = false;
      mtrace.view.hidden = new Set([...mtrace.model.domains.values()].filter(o => o.domid !== id).map(o => o.key));
      const pad = (hi - lo) * 0.02;
      mtrace.view.spanMs = hi - lo + 2 * pad; mtrace.view.t1 = hi + pad;
      return { threads: d.order.filter(th => (th.end ?? Infinity) >= lo && th.created <= hi).length, rows: d.rowFree.length, events: d.events };
    }, g.id));
  }
  console.log(`# zoomed out on one run, paused (${shape}), load ${load()}`);
  for (let r = 0; r < RUNS; r++)
    for (const x of (r & 1 ? [...ps].reverse() : ps)) x.res.push(await frames(x.p, Number(env.ZOOM_MS || 3000), true));
  for (const x of ps) console.log(fmt(x.name, x.rev, x.res));
  if (env.PROFILE) for (const x of ps) {
    await profile(x.p, `${x.name}, zoomed out`, 2000, true);
    // What each part costs: renderer CPU per frame without it.
    const parts = [];
    for (const sk of (env.SKIPS ? env.SKIPS.split(' ').map(x => x === '-' ? [] : x.split('+')) : [[], ['arrows'], ['arrows', 'lines'], ['arrows', 'lines', 'labels']])) {
      await x.p.page.evaluate(sk => { mtrace.view.skip = sk.length ? new Set(sk) : null; }, sk);
      parts.push(`${sk.length ? "without " + sk.join("+") : "all"} ${(await frames(x.p, 2500, true)).cpu.toFixed(1)} ms`);
    }
    await x.p.page.evaluate(() => { mtrace.view.skip = null; });
    console.log(`  renderer CPU per frame, ${x.name}: ${parts.join(', ')}`);
  }
  for (const x of ps) await x.p.close();
}
if (env.FOLLOW !== '0') {
  // Following a live guest: 10,000 threads in a 10 s window.
  const ps = pages.map(([name, url, rev]) => ({ name, url, rev, res: [] }));
  const order = [];
  for (let r = 0; r < RUNS; r++) order.push(...(r & 1 ? [...ps].reverse() : ps));
  if (env.PROFILE) order.push(...ps.map(x => ({ ...x, profile: true })));
  let shapes = [];
  for (const x of order) {
    const p = await open(x.url);
    const g = guest('--rings', '1', '--threads', '10000', '--labels', '64', '--rate', '5000', '--duration', '6', '--pages', '256');
    await p.page.evaluate(id => {
      mtrace.state.paused = false; mtrace.view.follow = true; mtrace.view.spanMs = 10000;
      mtrace.view.hidden = new Set([...mtrace.model.domains.values()].filter(o => o.domid !== id).map(o => o.key));
    }, g.id);
    await sleep(2000);
    await p.page.evaluate(id => {	// domains the page learnt of since
      mtrace.view.hidden = new Set([...mtrace.model.domains.values()].filter(o => o.domid !== id).map(o => o.key));
    }, g.id);
    if (x.profile) await profile(p, `${x.name}, following`, 3000, false);
    else x.res.push(await frames(p, 3000, false));
    shapes.push(await p.page.evaluate(id => { const d = mtrace.model.domain('', id); const t0 = mtrace.view.t0; return d.order.filter(t => (t.end ?? Infinity) >= t0).length; }, g.id));
    await p.close();
    while (alive(g.name)) await sleep(100);
  }
  console.log(`# following a live guest (10 s window; threads of it in the window: ${shapes.join(', ')}), load ${load()}`);
  for (const x of ps) console.log(fmt(x.name, x.rev, x.res));
}
await browser.close();
