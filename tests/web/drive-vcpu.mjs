// drive-vcpu.mjs - the page's vCPU bands (issue 38), in chromium-headless-shell against
// mtrace-web, mtraced with its hypervisor source on (the simulated Xen: each domain's
// tasks' schedstat) and a load guest, which test-vcpu.sh started: every vCPU interval
// mtrace-cat received reaches the page's model (drawn, or counted as not aligned), and
// the band under the domain's threads is drawn in the runstates' colours.
// Environment: WEB_URL, RIG_DIR, SIMXEN, RIG_SIM, LOAD, CAT_JSON.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, jsonLines, note, openPage, result, until } from './drive-lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const puppeteer = (await import(path.join(process.env.NODE_MODULES || path.join(here, 'node_modules'),
  'puppeteer-core/lib/esm/puppeteer/puppeteer-core.js'))).default;
const env = process.env;

// mtrace-cat's vcpu lines of domain d, as far as it has written them: its intervals.
// (Read while mtrace-cat writes: an unfinished last line once threw out of the wait below,
// which left its figures at -1.)
function catIntervals(d) {
  let n = 0;
  for (const e of jsonLines(env.CAT_JSON))
    if (e.type === 'vcpu' && e.domid === d) n += e.intervals.length;
  return n;
}

const errors = [];
const { browser, page } = await openPage(puppeteer, env.WEB_URL, errors);
try {
  await until('the page to connect', () => page.evaluate(() => window.mtrace && mtrace.state.connected));
  // --spin: its ring's task always runnable (running, or waiting for a core) beside tasks
  // that sleep.  Without it, writing 20 events a millisecond and sleeping between, the
  // task ran so little of each 100 ms sample that no pixel of the band was in the
  // running colour on a fast machine, and the band check below failed there every time.
  const dom = Number(execFileSync(env.SIMXEN, ['--dir', env.RIG_SIM, 'create', '--name', 'busy',
    '--log', path.join(env.RIG_DIR, 'guest-busy.log'), '--', env.LOAD, '--rate', '20000',
    '--duration', '60', '--threads', '16', '--spin'], { encoding: 'utf8' }).trim());
  note(`guest busy is domain ${dom}`);
  await until('vCPU intervals in the page', () => page.evaluate(d => {
    const x = mtrace.model.domain('', d);
    return x && [...x.vcpus.values()].some(b => b.length >= 5);
  }, dom), 30000);

  // The band: under the threads, in the runstates' colours (a sample stacks its parts).
  const band = await page.evaluate(d => {
    mtrace.drawOnce();
    const L = mtrace.view.layout.find(l => l.d.domid === d);
    const cv = document.getElementById('timeline'), g = cv.getContext('2d');
    const n = L.d.vcpus.size, h = n * MtraceRender.VCPU_H, dpr = cv.width / cv.clientWidth;
    const px = g.getImageData(0, Math.round(L.vcpuTop * dpr), cv.width, Math.max(1, Math.round(h * dpr))).data;
    const rgb = s => [1, 3, 5].map(i => parseInt(s.slice(i, i + 2), 16));
    const out = { vcpus: n, below: L.vcpuTop >= L.rowsTop + L.rows * mtrace.view.rowH };
    for (const [k, c] of Object.entries(MtraceRender.VCPU_COLORS)) {
      const [r, gg, b] = rgb(c);
      out[k] = 0;
      for (let i = 0; i < px.length; i += 4)
        if (Math.abs(px[i] - r) < 8 && Math.abs(px[i + 1] - gg) < 8 && Math.abs(px[i + 2] - b) < 8) out[k]++;
    }
    return out;
  }, dom);
  note(`band: ${JSON.stringify(band)}`);
  check(band.vcpus >= 1 && band.below, 'a band per vCPU, under the domain\'s threads');
  check(band.blocked > 0 && band.running + band.runnable > 0,
    'the band shows when the vCPUs blocked, and when they ran or waited for a CPU');

  // Every interval mtrace-cat got, in the page: drawn, or counted as not aligned.
  execFileSync(env.SIMXEN, ['--dir', env.RIG_SIM, 'destroy', String(dom)]);
  let want = -1, got = -1;
  await until('the page to hold what mtrace-cat received', async () => {
    want = catIntervals(dom);
    got = await page.evaluate(d => {
      const x = mtrace.model.domain('', d);
      return [...x.vcpus.values()].reduce((n, b) => n + b.length, 0) + x.vcpuUnmapped;
    }, dom);
    return want > 0 && got === want;
  }, 60000).catch(e => note(String(e)));
  check(want > 0 && got === want, `the page has mtrace-cat's ${want} intervals (${got})`);
  check(errors.length === 0, `no page errors${errors.length ? ': ' + errors.join('; ') : ''}`);
} catch (e) {
  check(false, String(e.stack || e));
} finally {
  await browser.close();
}
process.exit(result.failed ? 1 : 0);
