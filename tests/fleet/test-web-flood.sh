#!/bin/bash
# mtrace-web --nats under a publisher's floods (issue 36, #3 #4): forged Stats of about
# 1 MB from 16 hosts, round after round (new ones, and further parts of one), while
# /api/state is asked for all along; then 300 made-up host names with 5 domains each
# (past the tables of 256 hosts and 1,024 domains).  Then a real host starts: a
# viewer that followed it all and one reading the stream from its start must each show
# it live with every event and its domain, say how many hosts and domains they let go,
# answer every /api/state, and stay within the resident memory mtrace-web(1) states.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"
: "${WEB:?}"

N=5000
RSS_CAP_MIB=320 # mtrace-web(1), LIMITS
# Under the sanitizers (redzones, shadow, quarantine) the figure is not the program's:
# the same floods run, for what the sanitizers find, with the peak only printed.
SAN=
grep -q __asan_init "$WEB" 2>/dev/null && SAN=1
echo "max_payload: 2MB" >"$T/nats.conf"
NATS_CONF=$T/nats.conf nats_start
"$PYTHON" "$HERE/js_forge.py" "$NATS_PORT" - create || fail "cannot create the stream"

web_start() {	# NAME [options]: WEB_URL, WEB_PID
	"$WEB" --nats "$NATS_URL" -l 127.0.0.1:0 --no-token "${@:2}" >"$T/$1.out" 2>"$T/$1.err" &
	WEB_PID=$!
	PIDS+=("$WEB_PID")
	wait_until 20 grep -q 'serving http' "$T/$1.out" || fail "$1: mtrace-web did not start"
	WEB_URL=$(sed -n 's|^mtrace-web: serving \(http://[^ ]*/\).*|\1|p' "$T/$1.out")
}
hwm_mib() {	# PID: its peak resident memory
	echo $(( $(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status") / 1024 ))
}
cat >"$T/state.py" <<'PY'
import json, sys, time, urllib.request
# URL [HOST DOMID EVENTS]: /api/state answered (200, JSON); with HOST, exit 0 only once
# HOST is connected with EVENTS events and its domain DOMID is in the domains
url = sys.argv[1]
t0 = time.time()
try:
    s = json.load(urllib.request.urlopen(url + "api/state", timeout=20))
except Exception as e:
    print("unanswered: %s" % e)
    sys.exit(2)
w = s["web"]
hosts = {h["host"]: h for h in s["hosts"]}
print("hosts %d (evicted %d), domains %d (evicted %d), stats dropped %d, answers' bytes %d, %.1f s" % (
    len(hosts), w.get("hosts_evicted", -1), len(s["domains"]), w.get("domains_evicted", -1),
    w.get("stats_dropped", -1), w["answers"]["bytes"], time.time() - t0))
if len(sys.argv) > 2:
    h = hosts.get(sys.argv[2])
    dom = [d for d in s["domains"] if d.get("host") == sys.argv[2] and d["domid"] == int(sys.argv[3])]
    print("%s: %s, domain %s" % (sys.argv[2], h and {k: h[k] for k in ("connected", "events")}, dom))
    sys.exit(0 if h and h["connected"] and h["events"] == int(sys.argv[4]) and dom else 1)
PY

web_start live
LIVE=$WEB_PID LIVE_URL=$WEB_URL
"$PYTHON" "$HERE/js_flood.py" "$NATS_PORT" stats 16 12 >"$T/flood.out" 2>&1 &
FLOOD=$!
PIDS+=("$FLOOD")
asked=0
while kill -0 "$FLOOD" 2>/dev/null; do
	"$PYTHON" "$T/state.py" "$LIVE_URL" >"$T/live.state" || fail "during the flood: $(cat "$T/live.state")"
	asked=$((asked + 1))
	sleep 0.5
done
wait "$FLOOD" || fail "the flood: $(tail -3 "$T/flood.out")"
note "during the flood, /api/state answered $asked times; $(cat "$T/live.state")"
"$PYTHON" "$HERE/js_flood.py" "$NATS_PORT" fakes 300 || fail "the made-up hosts not stored"

host_up h1
ship h1
host_clients h1 1
host_guest h1 load --domid 11 -- "$LOAD" --wait-reader 10 --linger 5 \
	--summary "$T/h1/load.json" -n $N --rate 2000 >/dev/null
host_idle h1
want=$(grep -o '"events": *[0-9]*' "$T/h1/load.json" | head -1 | grep -o '[0-9]*$')
wait_until 60 "$PYTHON" "$T/state.py" "$LIVE_URL" h1 11 "$want" >"$T/live.state" ||
	fail "the live viewer does not show h1: $(cat "$T/live.state")"
note "live: $(tr '\n' ' ' <"$T/live.state")"
grep -q 'hosts 256 (evicted [1-9]' "$T/live.state" || fail "the live viewer let no host go"
grep -q 'domains 1024 (evicted [1-9]' "$T/live.state" || fail "the live viewer let no domain go"

web_start start --from-start
START=$WEB_PID START_URL=$WEB_URL
wait_until 120 "$PYTHON" "$T/state.py" "$START_URL" h1 11 "$want" >"$T/start.state" ||
	fail "the viewer from the start does not show h1: $(cat "$T/start.state")"
note "from the start: $(tr '\n' ' ' <"$T/start.state")"

for p in "$LIVE" "$START"; do
	m=$(hwm_mib "$p")
	note "mtrace-web $p: peak resident memory $m MiB (cap $RSS_CAP_MIB)"
	[ -n "$SAN" ] || [ "$m" -le $RSS_CAP_MIB ] ||
		fail "mtrace-web's peak resident memory $m MiB, over $RSS_CAP_MIB"
done
[ -n "$SAN" ] && note "a sanitizer build: the cap of $RSS_CAP_MIB MiB is not checked"
grep -q 'table full' "$T/live.err" || fail "the live viewer's log says nothing of what it let go"
[ "$(grep -c 'let go' "$T/live.err")" -le 20 ] || fail "the live viewer's log is not rate-limited"
pass "300 made-up hosts and 16 hosts' forged 1 MB Stats: h1 shown live and from the start with all $want events, /api/state answered $asked times during the flood, peak memory within $RSS_CAP_MIB MiB"
