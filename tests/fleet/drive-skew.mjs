// drive-skew.mjs - the browser side of tests/fleet/test-skew.sh: mtrace-web --nats in
// chromium-headless-shell (puppeteer-core from tests/web) once three hosts with skewed
// clocks have streamed.  Each host's heading in the domain list, and its band on the
// canvas, say its clock against NATS ("clock +5.002 s vs NATS"), within TOL_NS of the
// host's true offset and equal to what /api/state measured; the page's model holds the
// same; no errors in the page.  Environment: WEB_URL, T, OFFS (host -> offset ns, JSON),
// TOL_NS, NODE_MODULES.
import fs from 'node:fs';
import path from 'node:path';
import { check, note, result, until } from '../web/drive-lib.mjs';

const env = process.env;
const puppeteer = (await import(path.join(env.NODE_MODULES,
  'puppeteer-core/lib/esm/puppeteer/puppeteer-core.js'))).default;
const offs = JSON.parse(env.OFFS), tol = Number(env.TOL_NS);
const hosts = Object.keys(offs).sort();
// "clock +5.002 s vs NATS": seconds, or null
const said = s => {
  const m = /clock ([+\u2212])(\d+\.\d{3}) s vs NATS/.exec(s || '');
  return m ? (m[1] === '+' ? 1 : -1) * Number(m[2]) : null;
};

async function main() {
  const errors = [];
  const browser = await puppeteer.launch({
    executablePath: env.CHROMIUM || '/usr/bin/chromium-headless-shell',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage();
  page.on('pageerror', e => errors.push(String(e.message)));
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  await page.setViewport({ width: 1400, height: 900 });
  // What the canvas is given to write, for the host bands' words.
  await page.evaluateOnNewDocument(() => {
    window.__texts = [];
    const fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (s, ...rest) {
      if (window.__texts.length < 10000) window.__texts.push(String(s));
      return fill.call(this, s, ...rest);
    };
  });
  await page.goto(env.WEB_URL, { waitUntil: 'load' });
  // A page opened after the fact: the hosts and their skews from /api/state (resync),
  // then the next Stats of each.
  const heads = () => page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#domains li.host')]
    .map(li => [li.dataset.host, li.querySelector('.skew')?.textContent || ''])));
  await until('every host heading to say its clock', async () => {
    const h = await heads();
    return Object.keys(h).length === hosts.length && Object.values(h).every(s => said(s) !== null);
  }, 30000).catch(e => note(String(e)));
  const h = await heads();
  const status = await page.evaluate(() => document.getElementById('status').textContent);
  check(new RegExp(`: ${hosts.length} hosts$`).test(status), `the page opened after the fact counts the hosts: "${status}"`);
  const state = await page.evaluate(() => fetch('api/state').then(r => r.json()));
  const measured = Object.fromEntries(state.hosts.map(x => [x.host, x.skew]));
  for (const name of hosts) {
    const s = said(h[name]), m = measured[name];
    if (!check(s !== null && m, `host ${name}'s heading: "${h[name]}" (/api/state: ${JSON.stringify(m)})`)) continue;
    check(Math.abs(s * 1e9 - offs[name]) <= tol + 1e6,
      `host ${name}: the page says ${s} s, its clock is off by ${offs[name] / 1e9} s`);
    check(Math.abs(s * 1e9 - m.skew_ns) <= 1e6, `host ${name}: the page's ${s} s is /api/state's ${m.skew_ns} ns`);
  }
  // The canvas: each host's band says the same.
  await page.evaluate(() => { window.__texts = []; mtrace.view.rowH = 2; mtrace.drawOnce(); });
  const texts = await page.evaluate(() => window.__texts.filter(s => s.startsWith('host ')));
  for (const name of hosts) {
    const band = texts.find(s => s.startsWith(`host ${name} `));
    check(band && said(band) !== null && Math.abs(said(band) - said(h[name])) < 1e-9,
      `host ${name}'s band on the canvas: "${band}"`);
  }
  fs.writeFileSync(path.join(env.T, 'skew.png'), await page.screenshot({ type: 'png' }));
  check(errors.length === 0, `no errors in the page (${errors.slice(0, 3).join(' | ')})`);
  await browser.close();
}

try {
  await main();
} catch (e) {
  console.log(`FAIL: ${e.stack || e}`);
  result.failed = true;
}
process.exit(result.failed ? 1 : 0);
