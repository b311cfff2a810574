# lib.sh - sourced by the timeline tests: the one test rig (tests/rig.sh) plus
# pingpong-guest domains and the readers every test runs on one recording.
. "$MTRACE_SRC/tests/rig.sh"

"$PYTHON" -c 'import bt2' 2>/dev/null ||
	{ echo "SKIP: python3-bt2 is not installed (scripts/bootstrap installs it)" >&2; exit 77; }
command -v node >/dev/null || { echo "SKIP: node is not installed" >&2; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl is not installed" >&2; exit 77; }
CHECK=$HERE/check_timeline.py

# pp_guest NAME DOMID CLOCK SERVE JOIN ROUNDS: a pingpong-guest domain (SERVE, JOIN:
# comma-separated domids or ""); its summary goes to $T/NAME.json
pp_guest() {
	local args=(--clock "$3" --rounds "$6" --summary "$T/$1.json")
	[ -n "$4" ] && args+=(--serve "$4")
	[ -n "$5" ] && args+=(--join "$5")
	guest "$1" --domid "$2" -- "$PINGPONG" "${args[@]}" >/dev/null
}

xs_read() { "$SIMXEN" --dir "$SIM" xs-read "$1" 2>/dev/null; }

# pp_link A B: the port A offers B, handed to B (what a toolstack or a frontend's
# xenstore handshake does; guests cannot read each other's keys)
pp_link() {
	local key=/local/domain/$1/data/pingpong/serve-$2 v
	wait_until 30 xs_read "$key" >/dev/null || fail "dom$1 offered dom$2 no port"
	v=$(xs_read "$key")
	"$SIMXEN" --dir "$SIM" xs-write "/local/domain/$2/data/pingpong/join-$1" "$v" ||
		fail "xs-write join-$1 for dom$2"
}

# record NAME: mtrace-cat records everything from now on into $T/NAME.mtr (pid RECPID)
record() {
	"$CAT" -s "$SOCK" -f proto -O "$T/$1.mtr" 2>"$T/$1.rec.err" &
	RECPID=$!
	PIDS+=($RECPID)
	wait_clients 1 # subscribed: it sees the guests' first events
}

# record_stop: the recorder ends (SIGINT writes out what it received)
record_stop() {
	kill -INT "$RECPID"
	wait_pid "$RECPID" 20 || fail "the recorder exited $?"
}

# web_model NAME EVENTS: mtrace-web serves $T/NAME.mtr; its /events, once it holds all
# EVENTS events, fed to the page's model.js: $T/NAME.page.json.  The history and a
# browser's lag are made large enough for the whole recording: a browser that comes
# once mtrace-web has read it all would otherwise start past its beginning.
web_model() {
	local url got=0 end=$((SECONDS + 90))
	"$WEB" -i "$T/$1.mtr" -l 127.0.0.1:0 --no-token --history 256 --queue 256 \
		>"$T/$1.web.out" 2>"$T/$1.web.err" &
	local wpid=$!
	PIDS+=($wpid)
	wait_until 10 grep -q 'serving http' "$T/$1.web.out" || fail "mtrace-web did not start"
	url=$(sed -n 's|^mtrace-web: serving \(http://[^ ]*/\).*|\1|p' "$T/$1.web.out")
	curl -sN "${url}events" >"$T/$1.sse" 2>"$T/$1.curl.err" &
	local cpid=$!
	PIDS+=($cpid)
	while [ "$SECONDS" -lt "$end" ]; do
		got=$("$PYTHON" - "$T/$1.sse" <<'PY'
import json, sys
n = 0
for msg in open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n\n")[:-1]:
    if msg.startswith("event: b\n") or "\nevent: b\n" in msg:
        data = "".join(l[5:].lstrip(" ") for l in msg.split("\n") if l.startswith("data:"))
        n += len(json.loads(data)["op"])
print(n)
PY
)
		[ "$got" -ge "$2" ] && break
		sleep 0.5
	done
	kill -TERM "$cpid" "$wpid" 2>/dev/null
	wait "$cpid" "$wpid" 2>/dev/null
	[ "$got" -ge "$2" ] || fail "the page's feed has $got of $2 events: $(grep -c '^event: dropped' "$T/$1.sse") dropped notices"
	"$PYTHON" -c 'import sys; d=open(sys.argv[1],"rb").read(); open(sys.argv[1],"wb").write(d[:d.rfind(b"\n\n")+2])' "$T/$1.sse"
	node "$HERE/page-times.js" "$T/$1.sse" "$MTRACE_SRC/client/web/page/model.js" \
		>"$T/$1.page.json" || fail "model.js"
}

# events_in NAME: events in $T/NAME.jsonl
events_in() { grep -c '"type":"event"' "$T/$1.jsonl"; }
