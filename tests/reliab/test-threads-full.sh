#!/bin/bash
# A well-behaved guest with more live threads than max_threads_per_guest (none finished
# yet): the thread table is full of pending threads, the oldest are evicted and counted
# (threads_evicted, reported to clients), mtraced keeps going and every event of this
# guest and of another one is decoded.  Before: SIGSEGV in thr_alloc (an index of NO_IDX
# with the finished list empty); with a cap that is not a power of two, a hang (the id
# hash was sized 2 * cap and used as a mask).
. "$MTRACE_SRC/tests/rig.sh"
: "${LOAD:?}"

sim_start
for cap in 1024 1000; do
	daemon_start --set max_threads_per_guest=$cap
	A=$(guest a$cap --preserve-poweroff -- "$LOAD" -N 3000 -n 10000 -p 128 --wait-reader 10 --linger 10)
	B=$(guest b$cap --preserve-poweroff -- "$LOAD" -N 8 -n 10000 -p 128 --seed 3 --wait-reader 10 --linger 10)
	EA=$(json_events a$cap); EB=$(json_events b$cap)
	note "cap $cap: a wrote $EA events with 3000 threads, b $EB"
	alive
	wait_field "$A" events "$EA" 20
	wait_field "$B" events "$EB" 20
	snap
	alive
	for d in $A $B; do
		[ "$(field $d lost)" = 0 ] && [ "$(field $d corrupt)" = 0 ] ||
			fail "domain $d: lost $(field $d lost) corrupt $(field $d corrupt)"
	done
	[ "$(field "$A" live)" -le $cap ] || fail "domain a: $(field "$A" live) live threads past $cap"
	[ "$(field "$A" evicted)" -gt 0 ] || fail "domain a: no eviction counted"
	[ "$(field "$B" evicted)" = 0 ] || fail "domain b: evictions it did not cause"
	note "cap $cap: a live $(field "$A" live) evicted $(field "$A" evicted); b exact"
	daemon_stop
	"$SIMXEN" --dir "$SIM" destroy "$A" >/dev/null
	"$SIMXEN" --dir "$SIM" destroy "$B" >/dev/null
done
