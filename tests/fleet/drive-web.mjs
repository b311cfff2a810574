// drive-web.mjs - the browser side of tests/fleet/test-web.sh: mtrace-web --nats in
// chromium-headless-shell (puppeteer-core from tests/web), while the shell runs the
// guests of three simulated hosts.  Handshake through files in $T: this writes
// page.ready once the page is connected, the shell writes guests.done once every guest
// has ended and each host's live mtrace-cat has stopped.  Then, per host, the page's
// domains and event counts are held to that host's own figures: what its live
// mtrace-cat -f json received ($T/<host>.live.json) and what its mtraced counted
// ($T/<host>.probe, `mtraced-probe stats`), never to mtrace-web's own output.
// Environment: WEB_URL, T, HOSTS (the rig's host names, space separated), HOST_NAMES
// (a JSON object: rig name -> the host's name in the stream, which may be hostile),
// NODE_MODULES, SHOT_OUT (optional: keep the screenshot).
import fs from 'node:fs';
import path from 'node:path';
import { check, note, result, sleep, until } from '../web/drive-lib.mjs';

const env = process.env;
const puppeteer = (await import(path.join(env.NODE_MODULES,
  'puppeteer-core/lib/esm/puppeteer/puppeteer-core.js'))).default;
const T = env.T;
const rigHosts = env.HOSTS.split(' ');
const names = JSON.parse(env.HOST_NAMES);

// A host's live figures: events per domid from its own mtrace-cat -f json, and the
// domains its mtraced counted with their events and names.
function live(h) {
  const per = {};
  for (const l of fs.readFileSync(path.join(T, `${h}.live.json`), 'utf8').split('\n')) {
    if (!l) continue;
    const e = JSON.parse(l);
    if (e.type === 'event') per[e.domid] = (per[e.domid] || 0) + 1;
  }
  return per;
}
function probe(h) {
  const per = {};
  for (const l of fs.readFileSync(path.join(T, `${h}.probe`), 'utf8').split('\n')) {
    const m = /^dom (\d+) .*events=(\d+)/.exec(l);
    if (m) per[m[1]] = Number(m[2]);
  }
  return per;
}

async function main() {
  const errors = [];
  const browser = await puppeteer.launch({
    executablePath: env.CHROMIUM || '/usr/bin/chromium-headless-shell',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
      '--disable-background-timer-throttling', '--disable-renderer-backgrounding'],
  });
  const page = await browser.newPage();
  page.on('pageerror', e => errors.push(String(e.message)));
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  await page.setViewport({ width: 1400, height: 900 });
  await page.goto(env.WEB_URL, { waitUntil: 'load' });
  await until('the page to connect to NATS through mtrace-web', () =>
    page.evaluate(() => window.mtrace && mtrace.state.connected && mtrace.state.daemonUp));
  note('page connected; the guests may start');
  fs.writeFileSync(path.join(T, 'page.ready'), '');
  await until('the guests to end', () => fs.existsSync(path.join(T, 'guests.done')), 240000);

  const want = {};
  for (const h of rigHosts) want[names[h]] = { rig: h, live: live(h), probe: probe(h) };
  const total = Object.values(want).reduce((n, w) => n + Object.values(w.live).reduce((a, b) => a + b, 0), 0);
  note(`the hosts' own figures: ${JSON.stringify(Object.values(want).map(w => [w.rig, w.live, w.probe]))}`);
  // Until the page has taken in all that the hosts streamed (or the time is up).
  await until(`the page to hold the ${total} events the hosts streamed`,
    () => page.evaluate(n => mtrace.model.received >= n, total), 60000).catch(e => note(String(e)));
  await sleep(1500); // and nothing more comes (a host counted twice would show here)

  const pg = await page.evaluate(() => {
    const hosts = [...mtrace.model.hosts.keys()];
    const per = {};
    for (const h of hosts) {
      const s = mtrace.summary(h);
      per[h] = {
        events: mtrace.model.hostEvents(h),
        doms: Object.fromEntries(Object.entries(s).map(([id, d]) => [id, { events: d.events, name: d.name }])),
      };
    }
    return { hosts, per, received: mtrace.model.received, fleet: mtrace.model.fleet(),
      up: [...mtrace.model.hosts.values()].map(h => h.up), status: document.getElementById('status').textContent };
  });
  check(pg.fleet, 'the page knows it shows a fleet');
  check(pg.up.every(u => u === true) && /: 3 hosts$/.test(pg.status),
    `every host up, as the page says: "${pg.status}" (${JSON.stringify(pg.up)})`);
  check(pg.hosts.length === rigHosts.length && rigHosts.every(h => pg.hosts.includes(names[h])),
    `the page has the ${rigHosts.length} hosts: ${JSON.stringify(pg.hosts)}`);
  for (const [name, w] of Object.entries(want)) {
    const p = pg.per[name];
    if (!check(!!p, `host ${w.rig} (${JSON.stringify(name)}) in the page`)) continue;
    const liveTotal = Object.values(w.live).reduce((a, b) => a + b, 0);
    check(p.events === liveTotal && liveTotal > 0,
      `host ${w.rig}: ${p.events} events in the page, its live mtrace-cat received ${liveTotal}`);
    const ids = Object.keys(w.live).sort(), pids = Object.keys(p.doms).filter(id => p.doms[id].events > 0).sort();
    check(JSON.stringify(ids) === JSON.stringify(pids), `host ${w.rig}: domains with events ${pids}, live ${ids}`);
    for (const id of ids) {
      const d = p.doms[id];
      check(d && d.events === w.live[id] && d.events === w.probe[id],
        `host ${w.rig} dom ${id}: ${d ? d.events : 'none'} events in the page, live mtrace-cat ${w.live[id]}, mtraced ${w.probe[id]}`);
    }
  }
  // The same domids on every host, kept apart: (host, domid).
  const shared = Object.keys(pg.per[names[rigHosts[0]]].doms).filter(id =>
    rigHosts.every(h => pg.per[names[h]] && pg.per[names[h]].doms[id]));
  check(shared.length >= 2, `domids on every host, each its own domain: ${shared}`);

  // The sidebar: a heading per host (its name as text), its domains under it, and
  // the host's count as its live figures say.
  const side = await page.evaluate(() => [...document.querySelectorAll('#domains li')].map(li => ({
    host: li.classList.contains('host'), dhost: li.dataset.host, domid: li.dataset.domid,
    name: li.querySelector('.name')?.textContent, count: li.querySelector('.count')?.textContent,
  })));
  const heads = side.filter(x => x.host);
  check(heads.length === rigHosts.length, `${heads.length} host headings in the domain list`);
  for (const [name, w] of Object.entries(want)) {
    const hd = heads.find(x => x.dhost === name);
    const liveTotal = Object.values(w.live).reduce((a, b) => a + b, 0);
    check(hd && hd.count && hd.count.endsWith(`, ${liveTotal} ev`),
      `host ${w.rig}'s heading says "${hd && hd.count}" (its live mtrace-cat: ${liveTotal})`);
    const i = side.indexOf(hd), under = [];
    for (let k = i + 1; k < side.length && !side[k].host; k++) under.push(side[k]);
    check(under.length > 0 && under.every(x => x.dhost === name) &&
      Object.keys(w.live).every(id => under.some(x => x.domid === id)),
      `host ${w.rig}'s domains listed under it: ${under.map(x => x.domid)}`);
  }
  // A hostile host name: shown as text, nothing of it ran or became markup.
  const hostile = Object.values(names).find(n => /[<>]/.test(n));
  if (hostile) {
    const hd = heads.find(x => x.dhost === hostile);
    check(hd && hd.name === hostile, `the hostile host name shown as text: ${JSON.stringify(hd && hd.name)}`);
    const bad = await page.evaluate(() => ({ pwned: window.__pwned, imgs: document.querySelectorAll('img').length }));
    check(bad.pwned === undefined && bad.imgs === 0, `nothing of the host name ran or became an element (${JSON.stringify(bad)})`);
  }

  // Unticking a host hides its band and all its domains; ticking brings them back.
  const shown = () => page.evaluate(() => { mtrace.drawOnce(); return mtrace.view.layout.map(l => l.d.host); });
  const boxes = await page.$$('#domains li.host input');
  const hostOf = await Promise.all(boxes.map(b => b.evaluate(el => el.closest('li').dataset.host)));
  const k = hostOf.indexOf(names[rigHosts[0]]);
  if (check(k >= 0, `host ${rigHosts[0]}'s heading has a checkbox`)) {
    await boxes[k].click();
    const off = await shown();
    await boxes[k].click();
    const on = await shown();
    check(!off.includes(names[rigHosts[0]]) && off.length > 0 && on.includes(names[rigHosts[0]]),
      `unticking host ${rigHosts[0]} hides its domains (drawn: ${off.length} domains), ticking shows them again (${on.length})`);
  }

  // The picture: every host drawn in its band, above its domains.
  await page.evaluate(() => { mtrace.view.follow = false; mtrace.view.t1 = mtrace.model.latest + 50; mtrace.view.spanMs = 60000; mtrace.view.rowH = 2; mtrace.state.dirty = true; });
  await sleep(300);
  const drawn = await page.evaluate(() => { mtrace.drawOnce(); return { hosts: mtrace.view.hostLayout.map(h => h.host), doms: mtrace.view.layout.map(l => [l.d.host, l.d.domid]) }; });
  check(drawn.hosts.length === rigHosts.length, `host bands drawn: ${JSON.stringify(drawn.hosts)}`);
  let ordered = true;
  for (let i = 1; i < drawn.doms.length; i++) {
    const [ha, da] = drawn.doms[i - 1], [hb, db] = drawn.doms[i];
    if (ha > hb || (ha === hb && da >= db)) ordered = false;
  }
  check(ordered && drawn.doms.length >= 2 * rigHosts.length, `domains drawn by host, then domid: ${JSON.stringify(drawn.doms)}`);
  const shot = await page.screenshot({ type: 'png' });
  fs.writeFileSync(path.join(T, 'fleet.png'), shot);
  if (env.SHOT_OUT) fs.writeFileSync(env.SHOT_OUT, shot);
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
