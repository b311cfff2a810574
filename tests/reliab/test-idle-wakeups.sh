#!/bin/bash
# An idle mtraced sleeps: with guests announced that write nothing and a client
# connected, its event loop wakes a few times a second, counted as the voluntary
# context switches of its main thread (each a sleep in epoll_wait or a wait for
# xenstore's reply) over an interval: the periodic drain, backed off to once a second,
# the status timer (1/s) and the safety-net rescan (every 5 s, ~11 xenstore round
# trips a guest: ~9/s with 4 guests).  A behaviour, not a speed: before, the periodic
# drain alone woke it every 20 ms (50 a second, whatever the machine), which cost
# 15-30 % of a dom0 vCPU under an emulated CPU.
# Then data wakes it again at once: a guest's events still arrive promptly.
. "$MTRACE_SRC/tests/rig.sh"
HC="$RELIAB_DIR/hostile-client.py"
MAX_PER_S=25
SECONDS_IDLE=4

vcs() { sed -n 's/^voluntary_ctxt_switches:[^0-9]*//p' "/proc/$1/status"; }

sim_start
daemon_start
PID=$DPID
for n in 1 2 3 4; do
	G[n]=$(guest "idle$n" -- "$HOSTILE" count 10)
done
for n in 1 2 3 4; do wait_match "${G[n]}" events '^1[0-9]$' 10; done
# a client subscribed to everything, receiving nothing
"$CAT" -s "$SOCK" -f count --time 60 >"$T/cat.out" 2>&1 &
PIDS+=($!)
sleep 1.5 # the drain's back-off reaches its longest period (20 ms doubled to 1 s)
v0=$(vcs "$PID") t0=$(date +%s.%N)
sleep $SECONDS_IDLE
v1=$(vcs "$PID") t1=$(date +%s.%N)
rate=$(echo "($v1 - $v0) / ($t1 - $t0)" | bc -l)
note "idle: $((v1 - v0)) wake-ups in $(printf %.1f "$(echo "$t1 - $t0" | bc)") s ($(printf %.1f "$rate")/s) with 4 idle guests and a client"
[ "$(echo "$rate <= $MAX_PER_S" | bc)" = 1 ] ||
	fail "idle mtraced woke $(printf %.1f "$rate") times a second (at most $MAX_PER_S)"

# and it is not asleep for data: a new guest's events are counted promptly
G5=$(guest busy -- "$HOSTILE" count 500)
wait_match "$G5" events '^50[0-9]$' 5
alive
daemon_stop
