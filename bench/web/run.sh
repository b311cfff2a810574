#!/bin/bash
# bench/web/run.sh - mtrace-web's figures, on the simulated Xen with the real mtraced:
#   1. events/s through mtrace-web to one browser (chromium-headless-shell), beside
#      mtrace-cat on the same stream, at offered rates up to flat out;
#   2. mtrace-web's CPU per event (utime+stime over the events it took in);
#   3. the page's frame time with 10,000 threads in the window.
# Medians of RUNS runs (default 3).  Usage: bench/web/run.sh [BUILD_DIR]
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
RIG_BUILD=$(cd "${1:-$SRC/build}" && pwd) || exit 1
RUNS=${RUNS:-3}
RIG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-webbench.XXXXXX")
. "$SRC/scripts/rig.sh"
WEB=$RIG_BUILD/client/web/mtrace-web
CAT=$RIG_BUILD/client/mtrace-cat
WEB_PID=
trap '[ -n "$WEB_PID" ] && kill "$WEB_PID" 2>/dev/null; rig_stop; rm -rf "$RIG_DIR"' EXIT
[ -f "$SRC/tests/web/node_modules/puppeteer-core/package.json" ] ||
	{ echo "bench/web: run scripts/bootstrap (npm ci in tests/web) first" >&2; exit 1; }
echo "# bench/web/run.sh $*   ($(date -u +%FT%TZ), $(nproc) cores, load:$(uptime | sed 's/.*load average://'))"
rig_start || exit 1
"$WEB" -s "$RIG_SOCK" -l 127.0.0.1:0 >"$RIG_DIR/web.out" 2>"$RIG_DIR/web.err" &
WEB_PID=$!
for _ in $(seq 50); do
	URL=$(sed -n 's|^mtrace-web: serving \(http://[^ ]*/\).*|\1|p' "$RIG_DIR/web.out")
	[ -n "$URL" ] && break
	sleep 0.1
done
export URL RIG_DIR RIG_SIM RUNS WEB_PID SIMXEN=$RIG_SIMXEN LOAD=$RIG_LOAD CAT RIG_SOCK
node "$SRC/bench/web/bench.mjs"
echo "# load after:$(uptime | sed 's/.*load average://')"
