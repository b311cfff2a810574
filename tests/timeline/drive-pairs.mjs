// drive-pairs.mjs - the page's event-channel arrows across domains (client/web/page/
// pairs.js), in chromium-headless-shell against mtrace-web serving a recording of two
// guests in ping-pong (test-browser-pairs.sh).  The reference is mtrace-cat -f json of
// the same recording: its evtchn_pair lines.
//   - the page's model holds every pair mtrace-cat printed, the same ends and verdicts;
//   - with the whole capture in view, the frame draws ORDERED arrows, each from the
//     sender's band (its thread's row) to the receiver's, in another domain, its head
//     at or right of its tail (forward in time) and where the pair's host times put it;
//   - no pair judged violated or unmapped is drawn, and the arrows' colour is on the
//     canvas between the two bands.
// Environment: WEB_URL, PAIRS_JSONL, ORDERED.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, note, openPage, result, until } from '../web/drive-lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const puppeteer = (await import(path.join(process.env.NODE_MODULES || path.join(here, '..', 'web', 'node_modules'),
  'puppeteer-core/lib/esm/puppeteer/puppeteer-core.js'))).default;
const env = process.env;
const want = fs.readFileSync(env.PAIRS_JSONL, 'utf8').split('\n').filter(l => l)
  .map(l => JSON.parse(l)).filter(m => m.type === 'evtchn_pair');
const ordered = Number(env.ORDERED);
check(ordered > 0 && want.filter(p => p.order === 'ordered').length === ordered,
  `mtrace-cat's ${want.length} pairs, ${ordered} ordered`);

const errors = [];
const { browser, page } = await openPage(puppeteer, env.WEB_URL, errors);
try {
  await until('the page to hold every pair', () => page.evaluate(n => window.mtrace &&
    mtrace.model.pairs.length >= n, want.length), 60000).catch(() => {});
  // The same pairs, in the same order, with the same ends and verdicts.
  const got = await page.evaluate(() => mtrace.model.pairs.map(p => [p.sd.domid, p.rd.domid,
    p.sth, p.rth, p.order]));
  check(got.length === want.length, `the page has ${got.length} pairs, mtrace-cat ${want.length}`);
  const same = want.every((p, i) => got[i] && got[i][0] === p.send.domid && got[i][1] === p.recv.domid &&
    got[i][2] === p.send.thread && got[i][3] === p.recv.thread && got[i][4] === p.order);
  check(same, 'each of the page\'s pairs is mtrace-cat\'s: ends, threads, verdict');

  // The whole capture in view, every pair drawn (no level of detail), one frame.
  const lo = Math.min(...want.map(p => p.send.host_ns)) / 1e6;
  const hi = Math.max(...want.map(p => p.recv.host_ns)) / 1e6;
  const drawn = await page.evaluate((lo, hi) => {
    const v = mtrace.view;
    v.follow = false;
    v.lod = false;
    v.spanMs = (hi - lo) * 1.2 + 1;
    v.t1 = hi + (hi - lo) * 0.1 + 0.5;
    mtrace.drawOnce();
    const st = v.stats.pairs;
    const bands = v.layout.map(L => ({ domid: L.d.domid, top: L.rowsTop, bottom: L.rowsTop + L.rows * v.rowH }));
    // The arrows' colour between the bands (the canvas in device pixels).
    const cv = document.getElementById('timeline'), g = cv.getContext('2d'), dpr = cv.width / cv.clientWidth;
    const px = g.getImageData(0, 0, cv.width, cv.height).data;
    const c = MtracePairs.PAIR_COLORS.ordered, rgb = [1, 3, 5].map(i => parseInt(c.slice(i, i + 2), 16));
    let colour = 0;
    for (let i = 0; i < px.length; i += 4)
      if (Math.abs(px[i] - rgb[0]) < 10 && Math.abs(px[i + 1] - rgb[1]) < 10 && Math.abs(px[i + 2] - rgb[2]) < 10) colour++;
    return { st, bands, colour, W: cv.clientWidth, t0: v.t0, span: v.spanMs, dpr };
  }, lo, hi);
  const { st, bands } = drawn;
  note(`drawn: ${st.ordered} ordered, ${st.uncertain} uncertain, ${st.violated} violated, ` +
    `${st.unmapped} unmapped, ${st.leftOut} left out; ${drawn.colour} pixels of the arrows' colour`);
  check(st.ordered === ordered && st.arrows.length === ordered,
    `${st.arrows.length} arrows across domains drawn, mtrace-cat's ordered pairs ${ordered}`);
  check(st.leftOut === 0, 'none left out');
  check(st.violated === want.filter(p => p.order === 'violated').length &&
    st.unmapped === want.filter(p => p.order === 'unmapped').length,
    'violated and unmapped pairs counted in the note, not drawn');
  // Each arrow: forward, from the send's band to the receive's, where its times put it.
  const band = y => bands.find(b => y >= b.top && y <= b.bottom);
  const ord = want.filter(p => p.order === 'ordered');
  let bad = null;
  st.arrows.forEach(([x0, y0, x1, y1], i) => {
    const p = ord[i], bs = band(y0), br = band(y1);
    const xs = (p.send.host_ns / 1e6 - drawn.t0) / drawn.span * drawn.W;
    const xr = (p.recv.host_ns / 1e6 - drawn.t0) / drawn.span * drawn.W;
    if (bad) return;
    if (!(x1 >= x0)) bad = `arrow ${i} points back: x ${x0} -> ${x1}`;
    else if (!bs || !br || bs.domid !== p.send.domid || br.domid !== p.recv.domid || bs === br)
      bad = `arrow ${i} is not from dom${p.send.domid}'s band to dom${p.recv.domid}'s: y ${y0} -> ${y1}`;
    else if (Math.abs(x0 - xs) > 0.01 || Math.abs(x1 - xr) > 0.01)
      bad = `arrow ${i} at x ${x0}..${x1}, its host times say ${xs}..${xr}`;
  });
  check(!bad, bad || `every arrow forward in time, from the sender's band to the receiver's`);
  check(drawn.colour > ordered, `the arrows are on the canvas (${drawn.colour} pixels)`);
  if (env.SCREENSHOT) {	// to look at (debugging): a few pairs across the width
    await page.evaluate((a, b) => {
      const v = mtrace.view;
      v.lod = true;
      v.spanMs = (b - a) * 1.5;
      v.t1 = b + (b - a) * 0.25;
      mtrace.drawOnce();
    }, want[0].send.host_ns / 1e6, want[Math.min(5, want.length - 1)].recv.host_ns / 1e6);
    await page.screenshot({ path: env.SCREENSHOT });
  }
  check(errors.length === 0, `no page errors${errors.length ? ': ' + errors.join('; ') : ''}`);
} catch (e) {
  check(false, String(e.stack || e));
} finally {
  await browser.close();
}
process.exit(result.failed ? 1 : 0);
