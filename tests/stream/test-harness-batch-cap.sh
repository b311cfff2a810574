#!/bin/bash
# client_batch_total holds the batches being built (every filter, every ring) to a
# total: 16 clients with 16 distinct filters over 8 domains x 8 rings need several MiB
# of batches without it; with a 1 MiB total every client still gets exactly what its
# filter selects (batches go out early, nothing is dropped) and the batches never held
# more than the total plus one string table.  Below the smallest batch, each event is
# dropped for the client, counted and reported to it: nothing is lost silently.  And clients
# whose filters take every event of a domain share its batches (encoded once).
. "$MTRACE_SRC/tests/rig.sh"

FILTERS=("" "-D 1" "-D 2" "-D 3" "-D 4" "-D 5" "-D 6" "-D 7" "-D 8" "-o read"
	"-o creates,read" "--label net/" "--label net/rx" "--label disk -D 2" "-o switch -D 3" "-D guest4 -D 1")
CAP=$((1 << 20))

peak() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' \
	"$T/harness.json" "$1"; }

run() {	# harness options...: 16 filtered clients until they end
	local p
	rm -f "$SOCK"
	start_harness -N 400000 -D 8 -R 8 -w 16 "$@"
	filter_clients "${FILTERS[@]}"
	for p in "${CPIDS[@]}"; do wait_pid "$p" 60 || fail "mtrace-cat exited with $?"; done
	wait_pid "$HPID" 20 || fail "harness exited with $?"
	[ "$(peak batch_left)" = 0 ] || fail "batches hold $(peak batch_left) bytes after all left"
}

# The same clients with no total: what they would take.
run -B 0
free_peak=$(peak batch_peak)
[ "$free_peak" -gt $((2 * CAP)) ] ||
	fail "without a total the batches peaked at $free_peak bytes: the test needs more than $((2 * CAP))"
note "no total: batches peaked at $free_peak bytes"

run -B $CAP
python3 "$HERE/client_counts.py" harness "$T/harness.json" "$T" 16 || fail "16 clients under the total"
capped=$(peak batch_peak)
[ "$capped" -le $((CAP + (1 << 20))) ] || fail "batches peaked at $capped bytes, total $CAP"
[ "$(peak batch_pressure)" -gt 0 ] || fail "the total was never reached"
pass "1 MiB total: peak $capped bytes (no total: $free_peak), $(peak batch_pressure) early sends, every client got all its events"

# Filters that take every event of a domain, however they say it, share its batches:
# four such clients cost the encodings of one.
enc() {	# filters...: batches encoded for them
	local p
	rm -f "$SOCK"
	start_harness -N 100000 -D 1 -R 1 -w $#
	filter_clients "$@"
	for p in "${CPIDS[@]}"; do wait_pid "$p" 60 || fail "mtrace-cat exited with $?"; done
	wait_pid "$HPID" 20 || fail "harness exited with $?"
	python3 "$HERE/client_counts.py" harness "$T/harness.json" "$T" $# >/dev/null ||
		fail "clients of $*"
	peak batches_encoded
}
one=$(enc "")
four=$(enc "" "-d 1" "-d 1 -d 2" "-d guest1")
[ "$four" -le $((one + 2)) ] || fail "4 clients taking everything: $four batches encoded, 1 client: $one"
pass "4 filters taking everything of a domain: $four batches encoded, 1 client $one"

# A total below the smallest batch: every event is the client's counted loss.
rm -f "$SOCK"
start_harness -N 20000 -D 1 -R 1 -w 1 -B 1000
filter_clients ""
wait_pid "${CPIDS[0]}" 60 || fail "mtrace-cat exited with $?"
wait_pid "$HPID" 20
python3 - "$T/c0.sum" <<'PY' || fail "the drops were not reported"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
print("got %d dropped %d" % (s["events"], s["dropped_for_client"]))
sys.exit(0 if s["events"] == 0 and s["dropped_for_client"] == 20000 and s["goodbye"] else 1)
PY
pass "below the smallest batch: all 20000 events reported dropped to the client"
