#!/bin/bash
# Shared memory stays within client_shm_total however long clients keep their regions
# (issue 36 #10): a client takes a region, maps it, waits until mtraced has written all
# of it, then drops its connection but keeps the region (fd and mapping) and connects
# again, 12 times.  Every region alive on the host (mtraced's and the client's memfds,
# from /proc: distinct inodes) is within client_shm_total, in size and in the pages
# they hold.  Before: mtraced counted only the regions it still had, so each reconnect
# made a new one; 24 regions held took host shared memory from 29 to 217 MB under a
# 64 MiB cap.
. "$MTRACE_SRC/tests/rig.sh"
SHM=$HERE/shm_client.py
TOTAL=$((16 << 20))

# memfds NAME PID: one line per shared-memory region PID holds, "INODE SIZE BYTES"
memfds() {
	local f
	for f in /proc/"$2"/fd/*; do
		case $(readlink "$f" 2>/dev/null) in
		/memfd:mtraced-stream*) stat -L -c "%i %s $((512)) %b" "$f" 2>/dev/null ;;
		esac
	done | awk '{ print $1, $2, $3 * $4 }'
}

sim_start
daemon_start --set client_shm_bytes=4M --set client_shm_total=16M
# 2 rings x 100 k events/s: a 4 MiB region is written through in about a second
load_guest g1 5 "$T/g1.json" --rings 2 -p 256 --rate 100000 --duration 60 >/dev/null
"$PYTHON" "$SHM" cycle "$SOCK" 12 4 >"$T/cycle.out" 2>"$T/cycle.err" &
CL=$!
PIDS+=("$CL")
wait_until 90 grep -q '^ready' "$T/cycle.out" || fail "the client did not finish: $(cat "$T/cycle.err")"
cat "$T/cycle.out" | sed 's/^/# /'
rounds=$(grep -c '^round [0-9]* [0-9]' "$T/cycle.out")
[ "$rounds" -ge 4 ] || fail "only $rounds regions given: the test proves nothing"
full=$(awk '$1 == "round" && $5 >= $4 - 256 { n++ } END { print n + 0 }' "$T/cycle.out")
{ memfds client "$CL"; memfds mtraced "$DPID"; } | sort -u -k1,1 >"$T/regions"
read -r n size bytes < <(awk '{ n++; s += $2; b += $3 } END { print n + 0, s + 0, b + 0 }' "$T/regions")
note "$rounds regions taken ($full of them written through), $n distinct on the host: $size bytes, $bytes in pages"
shmem=$(sed -n 's/^Shmem: *\([0-9]*\) kB/\1/p' /proc/meminfo)
note "host Shmem now $shmem kB (every process's; printed only)"
[ "$size" -le "$TOTAL" ] || fail "regions of $size bytes alive on the host, client_shm_total is $TOTAL"
[ "$bytes" -le "$TOTAL" ] || fail "regions holding $bytes bytes of pages, client_shm_total is $TOTAL"
pass "$n regions alive for $rounds taken: $size bytes ($bytes in pages), within client_shm_total"
# the regions still work: a new client is given one of them (given back, mapped by the
# first client still) and reads every event of a new guest through it, across a new
# Subscribe of another filter (domain 6 only, the guest's) that gives its region back
# and takes it again, the same memfd, for the new filter's group
"$SIMXEN" --dir "$SIM" destroy 5 >/dev/null
SUB6=09120708062801800501	# a Subscribe to domain 6's events with shared_memory
"$PROBE" -s "$SOCK" -S -M -P 6 -a 1000 -x "$SUB6" -T 60 -d 6 >"$T/after.out" 2>&1 &
AP=$!
PIDS+=("$AP")
# subscribed before the guest exists: mtraced answers the Ping after the Subscribe before
# it (half a second of sleep was not enough on a loaded machine: 98325 of 100000 read)
wait_until 30 grep -q '^pong 6' "$T/after.out" || fail "the client after them: no Pong ($(head -3 "$T/after.out"))"
# rings of 1 s of these events: with 64 pages (0.3 s), beside a ./check at load 10, the
# client once got 65 events fewer than were written, none dropped for it (the rings
# overwritten while mtraced lagged, by all signs: the failure now prints its Loss lines)
load_guest g2 6 "$T/g2.json" --rings 2 -p 256 --rate 50000 -n 50000 --seed 2 >/dev/null
wait_guests "$T/g2.json"
total=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"])' "$T/g2.json")
wait_pid "$AP" 90 || fail "the client after them exited $?"
grep -q '^shared 1' "$T/after.out" || fail "a client after them: no region ($(head -3 "$T/after.out"))"
grep -q "^summary events=$total dropped=0" "$T/after.out" ||
	fail "a client after them: $(tail -1 "$T/after.out"), the guest wrote $total; its losses: $(grep '^loss' "$T/after.out" | tr '\n' ';')"
pass "a client after them read all $total events of a new guest through a region given back, across a new Subscribe"
kill -TERM "$CL"
wait "$CL" 2>/dev/null
daemon_stop
reused=$(sed -n 's/.*shared memory: [0-9]* bytes of regions, reused \([0-9]*\) times.*/\1/p' "$DLOG")
note "mtraced at exit: regions reused ${reused:-?} times"
# each round but the first, the client after them, and its second Subscribe
[ "${reused:-0}" -ge $((rounds + 1)) ] || fail "regions reused ${reused:-0} times for $rounds rounds"
