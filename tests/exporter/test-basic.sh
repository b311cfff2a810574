#!/bin/bash
# mtrace-exporter against a real mtraced, without Prometheus: it starts before mtraced
# and connects when mtraced comes (mtrace_up 0, then 1), reconnects after a restart,
# writes node_exporter's textfile atomically (every read of it a whole, promtool-clean
# file; node_exporter's textfile collector serves it), gzips when asked, answers only
# GET/HEAD /metrics, listens on IPv6 when told, and refuses bad options.
. "$(dirname "$0")/lib.sh"
need "$EXPORTER" "$REPLAY" "$SIMXEN" "$MTRACED" promtool

http() {	# METHOD URL: prints the status code
	"$PYTHON" - "$@" <<'PY'
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen(urllib.request.Request(sys.argv[2], method=sys.argv[1]), timeout=5)
    print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
PY
}

wait_metric() {	# FILE-PRODUCING-COMMAND... LINE: until a scrape has LINE
	local line=$1 i
	for i in $(seq 100); do
		scrape "$T/s.txt" && grep -qx "$line" "$T/s.txt" && return 0
		sleep 0.1
	done
	return 1
}

# bad options: usage errors exit 2, a busy port 1
for bad in "--listen nocolon" "--listen 127.0.0.1:99999" "--max-labels -1" "--interval 5" "extra"; do
	"$EXPORTER" $bad >/dev/null 2>&1
	[ $? = 2 ] || fail "mtrace-exporter $bad did not exit 2"
done

note "bad options refused"

# started before mtraced: serving mtrace_up 0
mkdir "$T/tf"
exporter_start -i 100 --textfile "$T/tf" || fail "exporter"
scrape "$T/down.txt" || fail "scrape without mtraced"
grep -qx 'mtrace_up 0' "$T/down.txt" || fail "mtrace_up not 0 without mtraced"
grep -q 'mtraced is not running' "$T/exporter.log" || fail "no word on the missing mtraced"
"$EXPORTER" -l "${EXP_URL#http://}" -s "$SOCK" 2>"$T/busy.log"
[ $? = 1 ] && grep -q 'cannot listen' "$T/busy.log" || fail "busy port: $(cat "$T/busy.log")"
[ "$(http POST "$EXP_URL/metrics")" = 405 ] || fail "POST /metrics"
[ "$(http HEAD "$EXP_URL/metrics")" = 200 ] || fail "HEAD /metrics"
[ "$(http GET "$EXP_URL/")" = 200 ] || fail "GET /"
[ "$(http GET "$EXP_URL/nothing")" = 404 ] || fail "GET /nothing"

note "HTTP without mtraced"

# mtraced comes: connected within the retry interval
sim_start
daemon_start
guest mirage -- "$REPLAY" --hold --quiet --speed 0 "$FIXTURE" >/dev/null
wait_metric 'mtrace_up 1' || fail "did not connect to mtraced"
wait_metric 'mtrace_daemon_guests 1' || fail "guest not shown"

note "connected"

# gzip when asked (Prometheus asks): the same exposition once decompressed
"$PYTHON" - "$EXP_URL/metrics" "$T/gz.txt" <<'PY' || fail "gzip scrape"
import gzip, sys, urllib.request
r = urllib.request.urlopen(urllib.request.Request(sys.argv[1], headers={"Accept-Encoding": "gzip"}))
assert r.headers.get("Content-Encoding") == "gzip", r.headers
open(sys.argv[2], "wb").write(gzip.decompress(r.read()))
r = urllib.request.urlopen(urllib.request.Request(sys.argv[1], headers={"Accept-Encoding": "gzip;q=0, br"}))
assert r.headers.get("Content-Encoding") is None, r.headers
PY
promtool check metrics <"$T/gz.txt" || fail "gzipped scrape does not check"
grep -qx 'mtrace_daemon_guests 1' "$T/gz.txt" || fail "gzipped scrape incomplete"

note "gzip"

# the textfile: whole and clean at every read while it is rewritten ten times a second
for i in $(seq 10); do
	cp "$T/tf/mtrace.prom" "$T/tf-copy.prom" 2>/dev/null || fail "no textfile"
	promtool check metrics <"$T/tf-copy.prom" >"$T/tf.lint" 2>&1 || fail "textfile $i: $(cat "$T/tf.lint")"
	grep -q '^mtrace_daemon_guests 1$' "$T/tf-copy.prom" || fail "textfile $i incomplete"
	sleep 0.05
done
[ "$(stat -c %a "$T/tf/mtrace.prom")" = 644 ] || fail "textfile mode"
# and node_exporter's textfile collector takes it
if command -v prometheus-node-exporter >/dev/null; then
	port=$(free_port)
	prometheus-node-exporter --collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$T/tf" --web.listen-address="127.0.0.1:$port" \
		>"$T/node-exporter.log" 2>&1 &
	NODE_PID=$!
	PIDS+=("$NODE_PID")
	for i in $(seq 100); do
		"$PYTHON" "$TESTS/promcheck.py" fetch "http://127.0.0.1:$port/metrics" "$T/node.txt" \
			2>/dev/null && break
		sleep 0.1
	done
	kill "$NODE_PID"
	wait "$NODE_PID" 2>/dev/null
	grep -qx 'node_textfile_scrape_error 0' "$T/node.txt" || fail "node_exporter: $(grep textfile "$T/node.txt")"
	grep -qx 'mtrace_up 1' "$T/node.txt" && grep -q '^mtrace_domain_events_total{domain="mirage"' "$T/node.txt" ||
		fail "node_exporter does not serve the textfile's metrics"
	note "node_exporter serves the textfile"
fi
[ "$(ls -A "$T/tf")" = mtrace.prom ] || fail "temp files left: $(ls -A "$T/tf")"

note "textfile checked"

# mtraced restarts: mtrace_up 0 in between, then a second session
daemon_stop
wait_metric 'mtrace_up 0' || fail "mtrace_up stayed 1"
grep -q '^mtrace_domain' "$T/s.txt" && fail "domain series without mtraced"
grep -q '^mtrace_up 0$' "$T/tf/mtrace.prom" || fail "textfile kept mtrace_up 1"
daemon_start
wait_metric 'mtrace_exporter_connects_total 2' || fail "no reconnect"
wait_metric 'mtrace_up 1' || fail "mtrace_up after reconnect"
kill -TERM "$EXP_PID" && wait "$EXP_PID" || fail "exporter exit status on SIGTERM"
EXP_PID=

note "reconnected"

# IPv6 loopback when the machine has it
if "$PYTHON" -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
	"$EXPORTER" -s "$SOCK" -l '[::1]:0' 2>"$T/exporter6.log" &
	PIDS+=($!)
	for i in $(seq 50); do
		port=$(sed -n 's|^mtrace-exporter: listening on http://\[::1\]:\([0-9]*\)/metrics$|\1|p' "$T/exporter6.log")
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || fail "no IPv6 listener: $(cat "$T/exporter6.log")"
	[ "$(http GET "http://[::1]:$port/metrics")" = 200 ] || fail "GET over IPv6"
fi
pass "mtrace-exporter"
