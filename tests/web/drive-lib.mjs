// drive-lib.mjs - what the browser drivers share (tests/web/drive.mjs,
// tests/fleet/drive-web.mjs): timed notes, checks that remember a failure, a bounded wait.
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
