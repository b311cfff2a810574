#!/bin/bash
# test-error.sh - mtrace-web takes an Error from mtraced as the end of the link, as the
# exporter does: it says why on stderr, /api/state shows it disconnected, and it tries
# again by the client library's policy.  The peer (refusing-daemon.py) keeps the socket
# open after its Error, so only reading the Error can end the link.
set -u
: "${MTRACE_SRC:?}" "${WEB:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-web-error.XXXXXX")
PIDS=
trap 'for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
fail() {
	echo "FAIL: $*"
	sed 's/^/web.err: /' "$T/web.err" 2>/dev/null
	exit 1
}

python3 "$MTRACE_SRC/tests/web/refusing-daemon.py" "$T/sock" "$T/count" &
PIDS="$!"
for _ in $(seq 100); do [ -S "$T/sock" ] && break; sleep 0.1; done
[ -S "$T/sock" ] || fail "the refusing peer did not start"

"$WEB" -s "$T/sock" -l 127.0.0.1:0 --no-token >"$T/web.out" 2>"$T/web.err" &
PIDS="$PIDS $!"
url=
for _ in $(seq 100); do
	url=$(sed -n 's|^mtrace-web: serving \(http://[^ ]*/\).*|\1|p' "$T/web.out")
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || fail "mtrace-web did not start"

# The policy's first waits are 250 ms and 500 ms: a second connection within 10 s.
for _ in $(seq 100); do
	[ "$(cat "$T/count" 2>/dev/null || echo 0)" -ge 2 ] && break
	sleep 0.1
done
[ "$(cat "$T/count" 2>/dev/null || echo 0)" -ge 2 ] ||
	fail "mtrace-web did not drop the refused link and connect again"
grep -q 'lost mtraced: mtraced refused the request: test refusal' "$T/web.err" ||
	fail "no word of the Error on stderr"
# Each new link is refused again at once; between, /api/state must say disconnected.
python3 - "${url}api/state" <<'PY' || fail "/api/state never said disconnected after an Error"
import json, sys, time, urllib.request
for _ in range(50):
    with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
        if json.load(r)["connected"] is False:
            sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
PY
echo "ok: Error ends the link, is said, and the link is tried again"
