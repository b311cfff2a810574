# lib.sh - sourced by the web tests: the simulated Xen and mtraced (scripts/demo-rig.sh),
# mtrace-web on a free loopback port, everything stopped at exit.  A test whose tools
# are missing (Chromium, the npm driver) reports SKIP (77) with the reason.
set -u
: "${MTRACE_SRC:?}" "${MTRACE_BUILD_ROOT:?}"
RIG_BUILD=$MTRACE_BUILD_ROOT
RIG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-web.XXXXXX")
. "$MTRACE_SRC/scripts/demo-rig.sh"
WEB=$RIG_BUILD/client/web/mtrace-web
CAT=$RIG_BUILD/client/mtrace-cat
WEB_PID=
BG=

PYTHON=python3
[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3

cleanup() {
	local rc=$?
	[ -n "$WEB_PID" ] && kill -TERM "$WEB_PID" 2>/dev/null
	for p in $BG; do kill -TERM "$p" 2>/dev/null; done
	rig_stop
	if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
		for f in web.err mtraced.log; do
			[ -f "$RIG_DIR/$f" ] && { echo "--- $f (last 30 lines)"; tail -30 "$RIG_DIR/$f"; }
		done
		if [ -n "${MTRACE_WEB_KEEP:-}" ]; then
			echo "# kept $RIG_DIR"
			exit $rc
		fi
	fi
	rm -rf "$RIG_DIR"
	exit $rc
}
trap cleanup EXIT
trap 'exit 1' TERM INT

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
note() { echo "# [${SECONDS}s] $*"; }

need_browser() {
	[ -x /usr/bin/chromium-headless-shell ] ||
		skip "chromium-headless-shell is not installed (scripts/bootstrap installs it)"
	[ -f "$MTRACE_SRC/tests/web/node_modules/puppeteer-core/package.json" ] ||
		skip "puppeteer-core is not installed (scripts/bootstrap: npm ci in tests/web)"
	command -v node >/dev/null || skip "node is not installed"
}

# web_start [options]: mtrace-web on 127.0.0.1:<free port>; sets WEB_URL
web_start() {
	: >"$RIG_DIR/web.out"
	"$WEB" -s "$RIG_SOCK" -l 127.0.0.1:0 "$@" >"$RIG_DIR/web.out" 2>"$RIG_DIR/web.err" &
	WEB_PID=$!
	for _ in $(seq 100); do
		WEB_URL=$(sed -n 's|^mtrace-web: serving \(http://[^ ]*/\).*|\1|p' "$RIG_DIR/web.out")
		[ -n "$WEB_URL" ] && return 0
		kill -0 "$WEB_PID" 2>/dev/null || fail "mtrace-web exited: $(cat "$RIG_DIR/web.err")"
		sleep 0.1
	done
	fail "mtrace-web did not start"
}

# web_rss_kb: mtrace-web's resident memory
web_rss_kb() {
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$WEB_PID/status"
}
