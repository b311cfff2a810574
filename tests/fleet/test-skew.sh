#!/bin/bash
# The hosts' clocks in the fleet (docs/fleet.md, "The hosts' clocks"): three simulated
# hosts whose CLOCK_REALTIME is deliberately skewed by libfaketime (h1 +0, h2 +5 s,
# h3 -3 s: their simulated Xen, mtraced, guests and mtrace-ship; CLOCK_MONOTONIC left
# alone, and with it the guests' ring clock), each with an mtrace-load guest, shipped into
# one JetStream nats-server on the true clock.  Then:
#   - mtrace-web --nats measures each host's skew against NATS: /api/state's within 50 ms
#     below the true offset, and never above it (it is a lower bound);
#   - mtrace-cat --nats --summary says the same of the whole stream;
#   - the page's model (model.js in node, fed mtrace-web's /events as app.js feeds it):
#     each host's events on its own mapped timeline (its skewed dom0 clock: true time +
#     its offset, within 5 ms) and in order, and on the fleet axis, shifted by the
#     measured skew, every host within 50 ms of the true time of its events (the true
#     time from the guests' CLOCK_MONOTONIC, which no host skews, and this machine's
#     realtime - monotonic);
#   - in chromium-headless-shell (where it is installed) the page says each host's skew
#     next to its name, and draws its domains shifted by it.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"
: "${WEB:?}"
command -v node >/dev/null || { echo "SKIP: node is not installed"; exit 77; }
FAKE=
for f in /usr/lib/"$(gcc -print-multiarch 2>/dev/null)"/faketime/libfaketime.so.1 \
	/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1; do
	[ -f "$f" ] && { FAKE=$f; break; }
done
[ -n "$FAKE" ] || { echo "SKIP: libfaketime is not installed (scripts/bootstrap: faketime)"; exit 77; }

declare -A OFF=([h1]=0 [h2]=5 [h3]=-3) # seconds
HOSTS="h1 h2 h3"
TOL_NS=50000000 # the publish latency the estimate may miss
# skewed HOST CMD...: CMD with HOST's realtime skewed (and only realtime).  In the
# sanitizer build: ASan's runtime is not the first library then (fine here), and its
# allocator must not read the clock as it first fills a size class (to time its release
# to the OS), or the libfaketime constructor's first malloc re-enters libfaketime's
# clock_gettime, which is not set up yet, and deadlocks (seen: mtrace-ship, at start)
skewed() {
	local o=${OFF[$1]}
	shift
	[ "${o#-}" = "$o" ] && o=+$o
	LD_PRELOAD=$FAKE FAKETIME="${o}s" FAKETIME_DONT_FAKE_MONOTONIC=1 \
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:allocator_release_to_os_interval_ms=-1 \
		"$@"
}
# realtime - monotonic of this machine (unskewed), ns, from the narrowest of 7 brackets
real_minus_mono() {
	"$PYTHON" -c 'import time
R, M = time.CLOCK_REALTIME, time.CLOCK_MONOTONIC
best = None
for _ in range(7):
    a = time.clock_gettime_ns(R); m = time.clock_gettime_ns(M); b = time.clock_gettime_ns(R)
    if best is None or b - a < best[0]:
        best = (b - a, (a + b) // 2 - m)
print(best[1])'
}

# The rig's skew, seen by a process under it: its realtime against ours, its monotonic
# the same (else the test would prove nothing).
for h in h2 h3; do
	got=$(skewed "$h" "$PYTHON" -c 'import time; print(time.clock_gettime_ns(time.CLOCK_REALTIME), time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
	now=$("$PYTHON" -c 'import time; print(time.clock_gettime_ns(time.CLOCK_REALTIME), time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
	"$PYTHON" - "$got" "$now" "${OFF[$h]}" <<'PY' || fail "libfaketime does not skew $h's clock as asked"
import sys
gr, gm = map(int, sys.argv[1].split()); nr, nm = map(int, sys.argv[2].split()); off = int(sys.argv[3]) * 10**9
# the skewed reading came first: realtime off by the offset (within the 1 s between
# the two), monotonic not
assert abs((gr - nr) - off) < 10**9 and abs((gr - nr) - (gm - nm)) > abs(off) / 2, (gr - nr, gm - nm)
assert abs((gr - gm) - (nr - nm) - off) < 10**7, ((gr - gm) - (nr - nm), off)
PY
done
pass "libfaketime skews CLOCK_REALTIME of a host's processes by its offset, not CLOCK_MONOTONIC"

nats_start
for h in $HOSTS; do
	skewed "$h" host_up "$h"
	skewed "$h" ship "$h"
	host_clients "$h" 1
done
note "three hosts up, skewed ${OFF[h1]} s, ${OFF[h2]} s, ${OFF[h3]} s"
"$WEB" --nats "$NATS_URL" -l 127.0.0.1:0 --no-token >"$T/web.out" 2>"$T/web.err" &
WEB_PID=$!
PIDS+=("$WEB_PID")
wait_until 10 grep -q 'serving http' "$T/web.out" || fail "mtrace-web did not start: $(cat "$T/web.err")"
WEB_URL=$(sed -n 's|^mtrace-web: serving \(http://[^ ]*/\).*|\1|p' "$T/web.out")
curl -sN "${WEB_URL}events" >"$T/sse.txt" 2>"$T/curl.err" &
CURL_PID=$!
PIDS+=("$CURL_PID")
wait_until 10 grep -q 'event: hello' "$T/sse.txt" || fail "no hello on /events"
# mtrace-web subscribes once the stream exists (a shipper made it): from then on it has
# each host's messages
wait_until 30 eval 'curl -sf "${WEB_URL}api/state" | grep -q "\"connected\":true"' ||
	fail "mtrace-web did not subscribe: $(cat "$T/web.err")"

R0=$(real_minus_mono)
declare -A DOM
for h in $HOSTS; do
	DOM[$h]=$(skewed "$h" host_guest "$h" load -- "$LOAD" --wait-reader 10 --linger 3 -n 30000 \
		-p 8 --rate 6000 --seed 3)
done
for h in $HOSTS; do host_idle "$h"; done
R1=$(real_minus_mono)
note "guests done; realtime - monotonic here: $R0 ns, then $R1 ns"
# every host's events with mtrace-web (its mtraced counted them all)
want=
for h in $HOSTS; do
	n=$("$MTRACED_PROBE" -s "${HSOCK[$h]}" stats | sed -n "s/^dom ${DOM[$h]} .* events=\\([0-9]*\\) .*/\\1/p")
	[ "${n:-0}" -gt 0 ] || fail "$h: mtraced counted no events"
	want=$want${want:+,}$h=$n
done
host_events() {
	curl -sf "${WEB_URL}api/state" | "$PYTHON" -c 'import json, sys
s = json.load(sys.stdin)
print(",".join("%s=%d" % (h["host"], h["events"]) for h in sorted(s["hosts"], key=lambda h: h["host"])))'
}
wait_until 60 eval '[ "$(host_events)" = "$want" ]' ||
	fail "mtrace-web has $(host_events) events, the hosts' mtraced counted $want"
sleep 2 # a Stats or two more of each host
curl -sf "${WEB_URL}api/state" >"$T/state.json" || fail "GET /api/state"

OFFS=$("$PYTHON" -c 'import json, sys; print(json.dumps({h: int(o) * 10**9 for h, o in zip(sys.argv[1::2], sys.argv[2::2])}))' \
	h1 "${OFF[h1]}" h2 "${OFF[h2]}" h3 "${OFF[h3]}")
# skews FILE: each host's measure in a list of host_skew objects, held to its offset
skews() {
	"$PYTHON" - "$1" "$OFFS" "$TOL_NS" <<'PY'
import json, sys
got, offs, tol = json.load(open(sys.argv[1])), json.loads(sys.argv[2]), int(sys.argv[3])
by = {x["host"]: x for x in got}
assert set(by) == set(offs), "skews of %s, want %s" % (sorted(by), sorted(offs))
for h, off in sorted(offs.items()):
    s = by[h]
    # a lower bound: at most the true offset (1 ms for the clocks' reads), within tol of it
    assert off - tol <= s["skew_ns"] <= off + 10**6 and s["samples"] >= 3, "%s: %r, offset %d" % (h, s, off)
    print("%s: skew %+.6f s (offset %+d s), spread %.3f ms, %d samples" %
          (h, s["skew_ns"] / 1e9, off // 10**9, s["spread_ns"] / 1e6, s["samples"]))
PY
}
"$PYTHON" -c 'import json, sys; json.dump([h["skew"] for h in json.load(open(sys.argv[1]))["hosts"] if h["skew"]], open(sys.argv[2], "w"))' \
	"$T/state.json" "$T/web-skews.json"
skews "$T/web-skews.json" || fail "mtrace-web's /api/state: the hosts' skews are not their offsets"
pass "/api/state: each host's clock against NATS, within $((TOL_NS / 1000000)) ms below its offset"

"$CAT" --nats "$NATS_URL" -f json --summary >/dev/null 2>"$T/cat.sum" ||
	fail "mtrace-cat --nats: $(cat "$T/cat.sum")"
"$PYTHON" -c 'import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
json.dump(s["host_skew"], open(sys.argv[2], "w"))' "$T/cat.sum" "$T/cat-skews.json" ||
	fail "no host_skew in mtrace-cat --summary: $(cat "$T/cat.sum")"
skews "$T/cat-skews.json" || fail "mtrace-cat --nats --summary: the hosts' skews are not their offsets"
pass "mtrace-cat --nats --summary: the same"

kill -TERM "$CURL_PID"
wait "$CURL_PID" 2>/dev/null
node "$HERE/skew-model.js" "$T/sse.txt" "$MTRACE_SRC/client/web/page/model.js" \
	"$MTRACE_SRC/client/web/page/render.js" "$OFFS" "$R0" "$R1" "$TOL_NS" ||
	fail "the page's model does not put the hosts' events where they happened"
pass "the page's model: each host's events in order on its own timeline, and on the fleet axis where they happened"
"$PYTHON" "$MTRACE_SRC/tests/web/json_schema.py" "$MTRACE_SRC/docs/json.md" sse "$T/sse.txt" >/dev/null ||
	fail "/events breaks docs/json.md"
"$PYTHON" "$MTRACE_SRC/tests/web/json_schema.py" "$MTRACE_SRC/docs/json.md" state "$T/state.json" >/dev/null ||
	fail "/api/state breaks docs/json.md"
pass "/events (with its skew messages) and /api/state follow docs/json.md"

NODE_MODULES=$MTRACE_SRC/tests/web/node_modules
if [ -x /usr/bin/chromium-headless-shell ] && [ -f "$NODE_MODULES/puppeteer-core/package.json" ]; then
	WEB_URL=$WEB_URL T=$T OFFS=$OFFS TOL_NS=$TOL_NS NODE_MODULES=$NODE_MODULES \
		node "$HERE/drive-skew.mjs" || fail "the page does not show the hosts' skews"
	pass "the page says each host's clock against NATS and draws it shifted"
else
	note "no chromium-headless-shell or puppeteer-core: the page itself not looked at"
fi
for h in $HOSTS; do
	ship_stop "$h"
done
kill -TERM "$WEB_PID"
wait_pid "$WEB_PID" 10 || fail "mtrace-web exited with an error: $(cat "$T/web.err")"
