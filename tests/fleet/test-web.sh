#!/bin/bash
# mtrace-web --nats, the fleet timeline: three simulated hosts (each an mtraced with the
# replayed 2014 MirageOS trace and an mtrace-load guest of domid 5, so every domid is on
# every host), each shipped by mtrace-ship into one JetStream nats-server, the third
# under a hostile host name (markup, a quote, a byte that is not UTF-8).  One
# mtrace-web --nats shows them in chromium-headless-shell (drive-web.mjs): the three
# hosts with their domains, and per host and domain the events that host's own live
# mtrace-cat received and its mtraced counted.  Its /events and /api/state are held to
# docs/json.md, a second mtrace-web --nats --from-start --host finds one host's
# events after the fact, and with nats-server killed and back the first says so and
# goes on: a guest started after has its events on the page once, none lost.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"
: "${WEB:?}"
NODE_MODULES=$MTRACE_SRC/tests/web/node_modules
[ -x /usr/bin/chromium-headless-shell ] || { echo "SKIP: no chromium-headless-shell"; exit 77; }
[ -f "$NODE_MODULES/puppeteer-core/package.json" ] ||
	{ echo "SKIP: puppeteer-core is not installed (scripts/bootstrap: npm ci in tests/web)"; exit 77; }
command -v node >/dev/null || { echo "SKIP: node is not installed"; exit 77; }
SCHEMA=$MTRACE_SRC/docs/json.md
CHECK=$MTRACE_SRC/tests/web/json_schema.py

# web_nats NAME [options]: mtrace-web --nats on a free loopback port; sets WEB_URL
web_nats() {
	local n=$1
	shift
	"$WEB" --nats "$NATS_URL" -l 127.0.0.1:0 --no-token "$@" >"$T/$n.out" 2>"$T/$n.err" &
	PIDS+=("$!")
	eval "${n}_PID=\$!"
	for _ in $(seq 100); do
		WEB_URL=$(sed -n 's|^mtrace-web: serving \(http://[^ ]*/\).*|\1|p' "$T/$n.out")
		[ -n "$WEB_URL" ] && return 0
		sleep 0.1
	done
	fail "$n: mtrace-web did not start: $(cat "$T/$n.err")"
}

nats_start
HOSTS="h1 h2 h3"
HOSTILE=$'<img src=x onerror=window.__pwned=1> "h\xff3.*'
declare -A M NAME
for h in $HOSTS; do
	host_up "$h"
	"$CAT" -s "${HSOCK[$h]}" -f json --time 200 >"$T/$h.live.json" 2>"$T/$h.live.err" &
	eval "LIVE_$h=\$!"
	PIDS+=("$!")
	# spooled while NATS is away (below), so that nothing is the shipper's loss
	if [ "$h" = h3 ]; then
		ship "$h" --spool "$T/$h/spool" --host "$HOSTILE"
	else
		ship "$h" --spool "$T/$h/spool"
	fi
	host_clients "$h" 2
done
# the names as the page has them: the byte that is not UTF-8 read as Latin-1 (docs/json.md)
HOST_NAMES=$("$PYTHON" -c 'import json, sys; print(json.dumps({"h1": "h1", "h2": "h2",
	"h3": sys.argv[1].encode("utf-8", "surrogateescape").decode("latin-1")}))' "$HOSTILE")
note "three hosts, their shippers and live readers up: $HOST_NAMES"
# the stream exists once a shipper has made it: mtrace-web retries until then
web_nats web
WEB1_URL=$WEB_URL
curl -sN "${WEB_URL}events" >"$T/sse.txt" 2>"$T/curl.err" &
CURL_PID=$!
PIDS+=("$CURL_PID")
wait_until 10 grep -q 'event: hello' "$T/sse.txt" || fail "no hello on /events"
export WEB_URL T HOSTS HOST_NAMES NODE_MODULES
node "$HERE/drive-web.mjs" &
DRIVE=$!
wait_until 60 test -e "$T/page.ready" || fail "the page did not connect: $(cat "$T/web.err")"

EVENTS=$(( $("$REPLAY" --dump "$FIXTURE" 2>/dev/null | wc -l) + 1 )) # + ring_start
i=0
for h in $HOSTS; do
	i=$((i + 1))
	M[$h]=$(host_guest "$h" mirage -- "$REPLAY" --hold --quiet --speed 0 "$FIXTURE")
	host_guest "$h" load --domid 5 -- "$LOAD" --wait-reader 10 --linger 5 \
		-n $((4000 * i)) -p 16 --rate 50000 --seed "$i" >/dev/null
done
for h in $HOSTS; do
	host_domain_events "$h" "${M[$h]}" "$EVENTS"
	"$SIMXEN" --dir "${HSIM[$h]}" destroy "${M[$h]}" >/dev/null
done
for h in $HOSTS; do host_idle "$h"; done
sleep 1
for h in $HOSTS; do
	"$MTRACED_PROBE" -s "${HSOCK[$h]}" stats >"$T/$h.probe" 2>&1 || fail "$h: mtraced-probe"
	eval "kill -INT \$LIVE_$h"
	eval "wait_pid \$LIVE_$h 10" || fail "$h: live mtrace-cat: $(cat "$T/$h.live.err")"
done
note "guests done; the hosts' figures taken"
: >"$T/guests.done"
wait "$DRIVE" || fail "the page does not show the fleet as the hosts streamed it"
pass "mtrace-web --nats shows the three hosts, their domains and events as each host had them"

# the feed and the state of the fleet, held to docs/json.md
curl -sf "${WEB_URL}api/state" >"$T/state.json" || fail "GET /api/state"
kill -TERM "$CURL_PID"
wait "$CURL_PID" 2>/dev/null
"$PYTHON" -c 'import sys; d=open(sys.argv[1],"rb").read(); open(sys.argv[1],"wb").write(d[:d.rfind(b"\n\n")+2])' "$T/sse.txt"
"$PYTHON" "$CHECK" "$SCHEMA" sse "$T/sse.txt" || fail "/events of --nats breaks docs/json.md"
"$PYTHON" "$CHECK" "$SCHEMA" state "$T/state.json" || fail "/api/state of --nats breaks docs/json.md"
"$PYTHON" - "$T/sse.txt" "$T/state.json" "$HOST_NAMES" <<'PY' || fail "the fleet's JSON misses hosts"
import collections, json, sys
names = set(json.loads(sys.argv[3]).values())
sse = []
for block in open(sys.argv[1], "rb").read().split(b"\n\n"):
    for line in block.split(b"\n"):
        if line.startswith(b"data: "):
            sse.append(json.loads(line[6:]))
state = json.load(open(sys.argv[2], "rb"))
per = collections.Counter(o["host"] for o in sse if o["type"] == "batch")
assert set(per) == names, "batches of hosts %r, want %r" % (set(per), names)
assert all("host" in o for o in sse if o["type"] in ("batch", "domain_up", "domain_down", "stats", "loss"))
assert {h["host"] for h in state["hosts"]} == names, state["hosts"]
assert all(d["host"] in names for d in state["domains"])
by = collections.Counter((d["host"], d["domid"]) for d in state["domains"])
assert max(by.values()) == 1 and len({d for _, d in by}) < len(by), "domains by (host, domid): %r" % by
print("ok: batches per host %s; %d domains of %d hosts in /api/state" % (dict(per), len(by), len(state["hosts"])))
PY
pass "/events and /api/state of the fleet follow docs/json.md, every message naming its host"

# after the fact: one host, from the start of the stream
web_nats web2 --from-start --host h2
want=$(grep -c '"type":"event"' "$T/h2.live.json")
got=
for _ in $(seq 100); do
	got=$(curl -sf "${WEB_URL}api/state" | "$PYTHON" -c 'import json, sys
s = json.load(sys.stdin)
print(",".join("%s=%d" % (h["host"], h["events"]) for h in s["hosts"]))')
	[ "$got" = "h2=$want" ] && break
	sleep 0.2
done
[ "$got" = "h2=$want" ] || fail "--from-start --host h2: $got, h2's live mtrace-cat received $want"
pass "mtrace-web --nats --from-start --host h2: h2 alone, its $want events"

# NATS away and back: the first mtrace-web says so, and goes on where it was
state() {	# KEY: the first mtrace-web's connected, or a host's events (h1)
	curl -sf "${WEB1_URL}api/state" | "$PYTHON" -c 'import json, sys
s = json.load(sys.stdin)
k = sys.argv[1]
print(str(s["connected"]).lower() if k == "connected" else
      sum(h["events"] for h in s["hosts"] if h["host"] == k))' "$1"
}
before=$(state h1)
nats_kill
wait_until 20 eval '[ "$(state connected)" = false ]' || fail "mtrace-web did not notice NATS go"
note "nats-server killed: mtrace-web says it is not connected"
sleep 3
nats_start
wait_until 30 eval '[ "$(state connected)" = true ]' || fail "mtrace-web did not reconnect: $(cat "$T/web.err")"
note "nats-server back: mtrace-web connected again"
late=$(host_guest h1 late --domid 7 -- "$LOAD" --wait-reader 10 --linger 3 -n 3000 -p 8 \
	--rate 20000 --seed 9) || fail "h1: the late guest"
host_idle h1
n7=$("$MTRACED_PROBE" -s "${HSOCK[h1]}" stats | sed -n 's/^dom 7 .* events=\([0-9]*\) .*/\1/p')
[ "${n7:-0}" -gt 0 ] || fail "h1: mtraced counted no events of the late guest"
wait_until 60 eval '[ "$(state h1)" -ge $((before + n7)) ]'
sleep 2
after=$(state h1)
ship_stop h1
[ "$(figure h1 dropped_events)" = 0 ] || fail "h1: mtrace-ship lost events: $(figure h1 dropped_events)"
[ "$after" = $((before + n7)) ] ||
	fail "h1 after NATS came back: $after events on mtrace-web, want $before + $n7 (its mtraced)"
pass "NATS killed and back: mtrace-web went on, the late guest's $n7 events once ($before -> $after)"
for n in web web2; do
	eval "kill -TERM \$${n}_PID"
	eval "wait_pid \$${n}_PID 10" || fail "$n: mtrace-web exited with an error on SIGTERM: $(cat "$T/$n.err")"
done
pass "both mtrace-web stopped cleanly"
