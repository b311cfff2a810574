# lib.sh - sourced by the web tests after nothing else: the one test rig (tests/rig.sh:
# the simulated Xen, mtraced, $T, clean-up at exit) plus mtrace-web on a free loopback
# port.  A test whose tools are missing (Chromium, the npm driver) reports SKIP (77).
. "$MTRACE_SRC/tests/rig.sh"
WEB=${WEB:-$RIG_BUILD/client/web/mtrace-web}
WEB_PID=
BG=

test_cleanup() {
	[ -n "$WEB_PID" ] && kill -TERM "$WEB_PID" 2>/dev/null
	for p in $BG; do kill -TERM "$p" 2>/dev/null; done
	return 0
}

skip() { echo "SKIP: $*"; exit 77; }

need_browser() {
	[ -x /usr/bin/chromium-headless-shell ] ||
		skip "chromium-headless-shell is not installed (scripts/bootstrap installs it)"
	[ -f "$MTRACE_SRC/tests/web/node_modules/puppeteer-core/package.json" ] ||
		skip "puppeteer-core is not installed (scripts/bootstrap: npm ci in tests/web)"
	command -v node >/dev/null || skip "node is not installed"
}

# web_start [options]: mtrace-web on 127.0.0.1:<free port>; sets WEB_URL
web_start() {
	local choice=--no-token a # loopback without a token is a choice said aloud
	for a in "$@"; do
		case $a in -T | --token-file | --token-file=*) choice= ;; esac
	done
	: >"$RIG_DIR/web.out"
	"$WEB" -s "$RIG_SOCK" -l 127.0.0.1:0 $choice "$@" >"$RIG_DIR/web.out" 2>"$RIG_DIR/web.err" &
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
