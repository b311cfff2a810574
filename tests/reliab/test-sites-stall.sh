#!/bin/bash
# Four guests whose sites cost the most to look up (each: libc's build-id at a wrong
# load address, 1,024 sites in it that resolve to nothing, each failed lookup walking
# every compile unit of libc's debug info, then 62 more modules) beside a reference
# guest writing 25 k events/s into a 64-page ring: the reference loses nothing and
# mtraced answers meanwhile.  (The ring holds some 300 ms of it: the stalls below were
# seconds long, while a busy test machine that deschedules mtraced for the 75 ms a
# ring of 100 k events/s holds made the test fail without any stall.)  Before: each new module retried every unresolved site,
# and the per-tick cap bounded the number of lookups, not their time: the loop
# stalled and the reference guest lost events.
. "$MTRACE_SRC/tests/rig.sh"
: "${LOAD:?}" "${MODULE_GUEST:?}"

LIBC=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null || true)
[ -f "$LIBC" ] || { echo "no libc.so.6 here: skipped"; exit 77; }
ID=$(readelf -n "$LIBC" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -f "/usr/lib/debug/.build-id/${ID:0:2}/${ID:2}.debug" ] ||
	{ echo "no debug info for libc (libc6-dbg): skipped"; exit 77; }

sim_start
printf 'debug_dirs = /usr/lib/debug\nmax_sites_per_guest = 2048\n' >"$T/d.conf"
daemon_start -c "$T/d.conf"
REF=$(guest ref --preserve-poweroff -- "$LOAD" --rate 25000 -p 64 -n 375000 \
	--wait-reader 10 --linger 10)
S=()
for i in 1 2 3 4; do
	S+=("$(guest "s$i" --preserve-poweroff -- "$MODULE_GUEST" -r "$ID" -u 1024 -f 62 -A \
		-s "$i" -l 60)")
done
# mtraced answers a client throughout (each answer timed)
worst=0
while ! { [ -s "$T/ref.log" ] && tail -c 3 "$T/ref.log" | grep -q '}'; }; do
	t0=$(date +%s%N)
	timeout 10 "$MTRACED_PROBE" -s "$SOCK" stats >"$T/stats" 2>>"$T/probe.err" ||
		fail "mtraced did not answer within 10 s"
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$ms" -gt "$worst" ] && worst=$ms
	[ $SECONDS -lt 90 ] || fail "the reference guest did not finish"
	sleep 0.2
done
alive
E=$(json_events ref)
# every event it wrote accounted for, as read or as lost: waited for while the count
# still grows (a busy machine drains slowly), not for a fixed time
got=-1 since=$SECONDS
while :; do
	snap
	now=$(($(field "$REF" events) + $(field "$REF" lost)))
	[ "$now" -ge "$E" ] && break
	[ "$now" -gt "$got" ] && got=$now since=$SECONDS
	[ $((SECONDS - since)) -lt 10 ] ||
		fail "the reference guest wrote $E events, mtraced accounts for $now (no progress in 10 s)"
	sleep 0.2
done
note "reference: $E events, lost $(field "$REF" lost); slowest Stats answer ${worst} ms"
for d in "${S[@]}"; do
	note "stalling guest $d: events $(field "$d" events)"
done
[ "$(field "$REF" lost)" = 0 ] || fail "the reference guest lost $(field "$REF" lost) events"
alive
daemon_stop
