#!/bin/bash
# bench/web/run.sh - mtrace-web's figures, on the simulated Xen with the real mtraced:
#   1. events/s through mtrace-web to one browser (chromium-headless-shell), beside
#      mtrace-cat on the same stream, at offered rates up to flat out;
#   2. mtrace-web's CPU per event (utime+stime over the events it took in);
#   3. the page's frame time with 10,000 threads in the window (zoomed out on a whole
#      run, and following a live guest): the page as it is beside the page of BASE
#      (a git revision, default main), each served by its own mtrace-web (--assets).
# Medians of RUNS runs (default 3).  PARTS=frames: only 3.  PROFILE=1: the functions
# the frame spends its time in.  Usage: [BASE=REV] bench/web/run.sh [BUILD_DIR]
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
RIG_BUILD=$(cd "${1:-$SRC/build}" && pwd) || exit 1
RUNS=${RUNS:-3}
RIG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-webbench.XXXXXX")
. "$SRC/scripts/rig.sh"
WEB=$RIG_BUILD/client/web/mtrace-web
CAT=$RIG_BUILD/client/cat/mtrace-cat
WEB_PID=
BASE_PID=
BASE=${BASE:-main}
trap '[ -n "$WEB_PID" ] && kill "$WEB_PID" 2>/dev/null; [ -n "$BASE_PID" ] && kill "$BASE_PID" 2>/dev/null
	rig_stop; rm -rf "$RIG_DIR"' EXIT
[ -f "$SRC/tests/web/node_modules/puppeteer-core/package.json" ] ||
	{ echo "bench/web: run scripts/bootstrap (npm ci in tests/web) first" >&2; exit 1; }
echo "# bench/web/run.sh $*   ($(date -u +%FT%TZ), $(nproc) cores, load:$(uptime | sed 's/.*load average://'))"
mkdir "$RIG_DIR/base"
git -C "$SRC" archive "$BASE" client/web/page | tar -x -C "$RIG_DIR/base" ||
	{ echo "bench/web: no page at $BASE" >&2; exit 1; }
BASE_REV=$(git -C "$SRC" rev-parse --short "$BASE")
HEAD_REV="$(git -C "$SRC" rev-parse --short HEAD)$(git -C "$SRC" diff --quiet HEAD -- client/web/page || echo +changes)"
rig_start || exit 1
# (a build from before mtrace-web refused loopback TCP without a token has no --no-token)
NO_TOKEN=()
"$WEB" --help 2>&1 | grep -q -- --no-token && NO_TOKEN=(--no-token)
web() {	# NAME [options]: an mtrace-web; prints its URL
	"$WEB" -s "$RIG_SOCK" -l 127.0.0.1:0 "${NO_TOKEN[@]}" "${@:2}" >"$RIG_DIR/$1.out" 2>"$RIG_DIR/$1.err" &
	echo $! >"$RIG_DIR/$1.pid"
	for _ in $(seq 50); do
		u=$(sed -n 's|^mtrace-web: serving \(http://[^ ]*/\).*|\1|p' "$RIG_DIR/$1.out")
		[ -n "$u" ] && { echo "$u"; return; }
		sleep 0.1
	done
}
URL=$(web web)
WEB_PID=$(cat "$RIG_DIR/web.pid")
BASE_URL=$(web base --assets "$RIG_DIR/base/client/web/page")
BASE_PID=$(cat "$RIG_DIR/base.pid")
echo "# frame times: page $HEAD_REV (this tree) beside page $BASE_REV (BASE=$BASE)"
export URL BASE_URL BASE_REV HEAD_REV RIG_DIR RIG_SIM RUNS WEB_PID SIMXEN=$RIG_SIMXEN LOAD=$RIG_LOAD CAT RIG_SOCK
node "$SRC/bench/web/bench.mjs"
echo "# load after:$(uptime | sed 's/.*load average://')"
