#!/bin/bash
# Shared-memory readers are woken through their region's eventfd, one write for all of
# them, not a SharedWake message each (issue 39; docs/stream-protocol.md §2.3):
#  1. sixteen shared-memory clients of one filter and mtrace-cat --shared-memory (the
#     session, on a libevent loop) read a guest that writes in small batches, so that
#     they are asleep and woken again and again.  Each ends at the domain's DomainDown,
#     which is in the region after its last events: only a wake-up brings it while
#     mtraced runs.  Each got every event, and mtraced sent no SharedWake at all, only
#     eventfd writes (its count at exit).  Before: one SharedWake message per reader
#     and wake-up, 16 socket writes for every one.
#  2. clients that do not take the eventfd (as before it) beside ones that do, in one
#     region: both kinds are woken and get every event; SharedWake messages went to
#     the first kind.
. "$MTRACE_SRC/tests/rig.sh"

# wakes: "EVENTFD_WRITES SHAREDWAKE_MESSAGES" of mtraced's last exit
wakes() {
	sed -n 's/.*wake-ups: \([0-9]*\) eventfd writes, \([0-9]*\) SharedWake messages.*/\1 \2/p' \
		"$DLOG" | tail -n 1
}

# readers_done SUMMARY DOMID OUT...: each client ended at the domain's DomainDown with
# every event the guest wrote, on shared memory
readers_done() {
	local sum=$1 domid=$2 total f
	shift 2
	total=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"])' "$sum")
	for f in "$@"; do
		grep -q '^shared 1' "$f" || fail "$(basename "$f"): not on shared memory"
		grep -q "^domain_down $domid" "$f" ||
			fail "$(basename "$f"): never woken for its domain's end: $(tail -3 "$f" | tr '\n' ' ')"
		grep -q "^summary events=$total dropped=0" "$f" ||
			fail "$(basename "$f"): $(tail -1 "$f"), the guest wrote $total"
	done
	TOTAL=$total
}

# mapped PID...: each of these clients has mapped its region (its Subscribe took effect:
# a guest started now has every event of it seen by all)
mapped() {
	local p
	for p in "$@"; do grep -q 'memfd:mtraced-stream' "/proc/$p/maps" 2>/dev/null || return 1; done
}

# One ring, 20 events a millisecond for 3 s: the readers catch up after each batch
# and sleep until the next.
GUEST_ARGS=(--rings 1 -p 256 --rate 20000 --batch-us 1000 -n 60000 --seed 3)
N=60000

sim_start
daemon_start
P=()
OUTS=()
for i in $(seq 0 15); do
	"$PROBE" -s "$SOCK" -S -M -d 5 -T 30 >"$T/new$i.out" &
	P+=($!)
	OUTS+=("$T/new$i.out")
done
"$CAT" -s "$SOCK" -f count --shared-memory -n "$N" --summary >/dev/null 2>"$T/cat.sum" &
CATPID=$!
PIDS+=("${P[@]}" "$CATPID")
wait_until 60 mapped "${P[@]}" "$CATPID" || fail "the clients did not all get their region"
load_guest g1 5 "$T/g1.json" "${GUEST_ARGS[@]}"
wait_guests "$T/g1.json"
for p in "${P[@]}"; do wait_pid "$p" 60 || fail "a probe exited $?"; done
wait_pid "$CATPID" 60 || fail "mtrace-cat --shared-memory exited $?: $(cat "$T/cat.sum")"
readers_done "$T/g1.json" 5 "${OUTS[@]}"
[ "$TOTAL" = "$N" ] || fail "the guest wrote $TOTAL events, not $N"
cat_got=$(tail -1 "$T/cat.sum" | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["events"])')
[ "$cat_got" = "$N" ] || fail "mtrace-cat --shared-memory got $cat_got of $N"
pass "16 shared-memory clients and mtrace-cat --shared-memory each got all $N events, woken up to the domain's end"
daemon_stop
read -r efd msgs < <(wakes)
[ -n "${efd:-}" ] || fail "mtraced did not say its wake-ups: $(grep 'shared memory' "$DLOG")"
note "mtraced: $efd eventfd writes, $msgs SharedWake messages"
[ "$msgs" -eq 0 ] || fail "mtraced sent $msgs SharedWake messages to readers that watch the eventfd"
[ "$efd" -ge 1 ] || fail "no eventfd write: the readers were never woken through it"
pass "woken by $efd eventfd writes for all 17 readers, no SharedWake message"

daemon_start
P=()
OUTS=()
for i in 0 1; do
	"$PROBE" -s "$SOCK" -S -M -W -d 6 -T 30 >"$T/old$i.out" &
	P+=($!)
	OUTS+=("$T/old$i.out")
	"$PROBE" -s "$SOCK" -S -M -d 6 -T 30 >"$T/mix$i.out" &
	P+=($!)
	OUTS+=("$T/mix$i.out")
done
PIDS+=("${P[@]}")
wait_until 60 mapped "${P[@]}" || fail "the clients did not all get their region"
load_guest g2 6 "$T/g2.json" "${GUEST_ARGS[@]}"
wait_guests "$T/g2.json"
for p in "${P[@]}"; do wait_pid "$p" 60 || fail "a probe exited $?"; done
readers_done "$T/g2.json" 6 "${OUTS[@]}"
daemon_stop
read -r efd msgs < <(wakes)
note "mtraced: $efd eventfd writes, $msgs SharedWake messages"
[ "${msgs:-0}" -ge 1 ] || fail "the clients without the eventfd were sent no SharedWake"
[ "${efd:-0}" -ge 1 ] || fail "no eventfd write for the clients that watch it"
pass "2 clients woken by SharedWake and 2 by the eventfd, in one region, each got all $TOTAL events"
