// drive-lib.mjs - what the browser drivers share (tests/web/drive.mjs,
// tests/fleet/drive-web.mjs, drive-vcpu.mjs, tests/timeline/drive-pairs.mjs): timed notes,
// checks that remember a failure, a bounded wait, a JSON Lines file read while it is
// written, the browser and its page.
import fs from 'node:fs';

const t0 = Date.now();
export const note = s => console.log(`# [${((Date.now() - t0) / 1000).toFixed(1)}s] ${s}`);
export const result = { failed: false };
export function check(ok, what) {
  console.log(`${ok ? 'ok' : 'FAIL'}: ${what}`);
  if (!ok) result.failed = true;
  return ok;
}
export const sleep = ms => new Promise(r => setTimeout(r, ms));
export async function until(what, fn, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

// chromium-headless-shell as every driver starts it, and one page of it at url: its
// errors (thrown, or logged as errors) collected in errors, the viewport the drivers
// measure against.  puppeteer is the caller's (each finds node_modules its own way).
export async function openPage(puppeteer, url, errors, viewport = { width: 1200, height: 700 }) {
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium-headless-shell',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
      '--disable-background-timer-throttling', '--disable-renderer-backgrounding'],
  });
  try {
    const page = await browser.newPage();
    page.on('pageerror', e => errors.push(String(e.message)));
    page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
    await page.setViewport(viewport);
    await page.goto(url, { waitUntil: 'load' });
    return { browser, page };
  } catch (e) {
    await browser.close();
    throw e;
  }
}

// The complete lines of a JSON Lines file another process is still writing, parsed.
// mtrace-cat writes its output through stdio (flushed when its source runs dry), so
// while a guest is busy the file may end inside a line: that piece is not a line yet,
// and is left for the next read rather than parsed (a parse error would end the wait
// that reads it).
export function jsonLines(file) {
  const pieces = fs.readFileSync(file, 'utf8').split('\n');
  pieces.pop(); // after the last '\n': empty, or a line still being written
  return pieces.filter(Boolean).map(l => JSON.parse(l));
}
