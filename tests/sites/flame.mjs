// flame.mjs - render folded stacks with speedscope (the npm package pinned in
// tests/web/package-lock.json) in chromium-headless-shell, the way speedscope's own
// command line opens a file (index.html#localProfilePath=<a script calling
// speedscope.loadFileFromBase64>), and compare what it shows in its sandwich view
// (a DOM table: every frame's total and self weight) with the expectation.
//
//   node flame.mjs FOLDED EXPECT.json [FOLDED EXPECT.json ...] [--svg SVG...]
//
// In every page, and in each SVG (flamegraph.pl's, opened and every box hovered, which
// runs its script with the box's name), a guest's frame name must stay text: no
// script of its own runs (window.pwned), no element of its own appears.
// EXPECT.json: {"frames": {"name": [total, self], ...}}, computed by flame_expect.py;
// with "subset": true, only those frames are compared (the others must merely exist).
// Prints one "ok:"/"FAIL:" line per check; exit 1 on any failure.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const nm = process.env.NODE_MODULES || path.join(here, '..', 'web', 'node_modules');
const puppeteer = (await import(path.join(nm, 'puppeteer-core/lib/esm/puppeteer/puppeteer-core.js'))).default;
const speedscope = path.join(nm, 'speedscope', 'dist', 'release', 'index.html');
const version = JSON.parse(fs.readFileSync(path.join(nm, 'speedscope', 'package.json'))).version;

let failed = false;
function check(ok, what) {
  console.log(`${ok ? 'ok' : 'FAIL'}: ${what}`);
  if (!ok) failed = true;
}

// The sandwich table as text: a header "Total\tSelf\tSymbol Name", then per frame
// "N (P%)", "N (P%)", "name" (one cell a line).
function parseSandwich(text) {
  const lines = text.split('\n');
  const at = lines.findIndex(l => /^Total\s+Self\s+Symbol Name$/.test(l.trim()));
  if (at < 0) return null;
  const rows = {};
  const num = s => Number(s.trim().replace(/\s*\(.*\)$/, '').replace(/,/g, ''));
  for (let i = at + 1; i + 2 < lines.length && /^\s*[\d,.]+ \(/.test(lines[i]); i += 3)
    rows[lines[i + 2].replace(/^\t/, '')] = [num(lines[i]), num(lines[i + 1])];
  return rows;
}

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium-headless-shell',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'flame-'));
try {
  const all = process.argv.slice(2);
  const svgAt = all.indexOf('--svg');
  const args = svgAt < 0 ? all : all.slice(0, svgAt);
  const svgs = svgAt < 0 ? [] : all.slice(svgAt + 1);
  const injected = page => page.evaluate(() => ({
    pwned: window.pwned, img: document.querySelectorAll('img[src="x"], image[href="x"], script:not([src])').length,
  }));
  for (const svg of svgs) {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', e => errors.push(e.message));
    await page.goto(`file://${svg}`);
    const hovered = await page.evaluate(() => {
      const gs = document.querySelectorAll('g.func_g');
      for (const g of gs) g.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
      return gs.length;
    });
    const inj = await injected(page);
    check(hovered > 0 && errors.length === 0 && inj.pwned === undefined,
      `${path.basename(svg)}: ${hovered} boxes hovered, names stayed text (errors: ` +
      `${errors.join('; ') || 'none'}, pwned: ${inj.pwned})`);
    await page.close();
  }
  for (let k = 0; k + 1 < args.length; k += 2) {
    const [folded, expectPath] = [args[k], args[k + 1]];
    const name = path.basename(folded);
    const expect = JSON.parse(fs.readFileSync(expectPath, 'utf8'));
    const want = expect.frames;
    const n = Object.keys(want).length;
    const page = await browser.newPage();
    const errors = [];
    const imported = [];
    page.on('pageerror', e => errors.push(e.message));
    page.on('console', m => { if (/^Importing as /.test(m.text())) imported.push(m.text()); });
    // tall enough that the virtualised table draws every row
    await page.setViewport({ width: 1600, height: Math.min(30000, 400 + 40 * n) });
    const loader = path.join(tmp, `${k}.js`);
    const b64 = fs.readFileSync(folded).toString('base64');
    fs.writeFileSync(loader, `speedscope.loadFileFromBase64(${JSON.stringify(name)}, ${JSON.stringify(b64)})`);
    await page.goto(`file://${speedscope}#localProfilePath=${loader}&view=sandwich`);
    let got = null;
    const end = Date.now() + 20000;
    while (Date.now() < end) {
      got = parseSandwich(await page.evaluate(() => document.body.innerText));
      if (got && Object.keys(got).length >= n && Object.keys(want).every(f => f in got)) break;
      await new Promise(r => setTimeout(r, 200));
    }
    check(errors.length === 0, `${name}: speedscope ${version} ran without errors ${errors.join('; ')}`);
    check(imported.some(s => /collapsed stack/.test(s)),
      `${name}: speedscope read it as collapsed stacks (${imported.join('; ') || 'no import'})`);
    got = got || {};
    const bad = [];
    for (const f of new Set([...Object.keys(want), ...(expect.subset ? [] : Object.keys(got))])) {
      const [w, g] = [want[f], got[f]];
      if (!w || !g || w[0] !== g[0] || w[1] !== g[1])
        bad.push(`${JSON.stringify(f)}: shown ${JSON.stringify(g)}, want ${JSON.stringify(w)}`);
    }
    check(bad.length === 0, `${name}: the sandwich view's ${Object.keys(got).length} frames, ` +
      `total and self weight each, as expected (${n})${bad.length ? '\n  ' + bad.join('\n  ') : ''}`);
    const inj = await injected(page);
    check(inj.pwned === undefined && inj.img === 0,
      `${name}: names stayed text (pwned: ${inj.pwned}, injected elements: ${inj.img})`);
    const self = Object.values(got).reduce((a, v) => a + v[1], 0);
    console.log(`# ${name}: ${Object.keys(got).length} frames, self weights add up to ${self}`);
    await page.close();
  }
} finally {
  await browser.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
