#!/bin/bash
# max_pages_total: the ring pages mapped across all guests stay under the cap.  Guests
# that fit are traced exactly (a guest that brings the total exactly to the cap fits);
# one that would pass it is refused with a clear "bad: ..." state, counted nowhere and
# maps nothing; a destroyed guest's pages are released, so that a new guest fits again
# and refused guests are taken on by the periodic rescan once they fit.
#
# A guest of R rings of P data pages needs R * (1 + P) pages (a header page per ring).
. "$MTRACE_SRC/tests/rig.sh"

CAP=148

# grant_pages: pages of simulated grants mapped in mtraced (the kernel merges adjacent
# pages of one grant into one mapping: sum the sizes)
grant_pages() {
	local range s e n=0
	while read -r range _; do
		s=${range%-*}; e=${range#*-}
		n=$(( n + (16#$e - 16#$s) / 4096 ))
	done < <(grep 'mtrace-sim-grant' "/proc/$DPID/maps")
	echo "$n"
}

# wait_pages N: until mtraced has exactly N grant pages mapped (10 s)
wait_pages() {
	for _ in $(seq 100); do
		[ "$(grant_pages)" = "$1" ] && return 0
		sleep 0.1
	done
	fail "$(grant_pages) grant pages mapped, expected $1"
}

# traced DOMID NAME: running, every event the guest wrote counted, nothing lost
traced() {
	local e
	e=$(json_events "$2")
	wait_field "$1" state running 20
	wait_field "$1" events "$e" 20
	[ "$(field "$1" alive)" = 1 ] && [ "$(field "$1" lost)" = 0 ] &&
		[ "$(field "$1" corrupt)" = 0 ] || fail "guest $2 ($1): not alive, or loss or corruption"
}

# refused DOMID: not traced, nothing counted
refused() {
	[ "$(field "$1" alive)" = 0 ] && [ "$(field "$1" events)" = 0 ] &&
		[ "$(field "$1" rings)" = 0 ] || fail "refused guest $1 is counted: $(grep "^dom $1 " "$T/stats")"
}

sim_start
daemon_start --set max_pages_total=$CAP

# a: 65 pages, b: 66 pages -> 131 mapped
A=$(guest a -- "$HOSTILE" --rings 1 --pages 64 count 3000)
B=$(guest b -- "$HOSTILE" --rings 2 --pages 32 count 4000)
traced "$A" a
traced "$B" b
wait_pages 131
note "a and b traced: 131 pages"

# c: 129 pages would make 260: refused, nothing mapped
C=$(guest c -- "$HOSTILE" --rings 1 --pages 128 count 2000)
wait_field "$C" state "bad: 129 pages would pass max_pages_total $CAP (131 mapped)"
refused "$C"
[ "$(grant_pages)" = 131 ] || fail "refused guest mapped something: $(grant_pages) pages"
grep -q "domain $C (c): not traced: 129 pages would pass max_pages_total $CAP" "$DLOG" ||
	fail "refusal not logged"
note "c refused"

# d: 17 pages bring the total exactly to the cap: it fits
D=$(guest d -- "$HOSTILE" --rings 1 --pages 16 count 1000)
traced "$D" d
wait_pages $CAP
# the periodic rescan (5 s) re-evaluates c: still refused, now against the full cap
wait_field "$C" state "bad: 129 pages would pass max_pages_total $CAP ($CAP mapped)" 15
refused "$C"
[ "$(grant_pages)" = $CAP ] || fail "$(grant_pages) pages mapped after c's re-evaluation"
note "d fills the cap exactly; c still refused"

# a destroyed: its 65 pages are released, e (65 pages) fits again
"$SIMXEN" --dir "$SIM" destroy "$A" >/dev/null || fail "destroy a"
wait_field "$A" state destroyed
wait_pages 83
E=$(guest e -- "$HOSTILE" --rings 1 --pages 64 count 2500)
traced "$E" e
wait_pages $CAP
# at the cap, even the smallest guest (one ring of one page: 2 pages) is refused
F=$(guest f -- "$HOSTILE" --rings 1 --pages 1 count 40)
wait_field "$F" state "bad: 2 pages would pass max_pages_total $CAP ($CAP mapped)"
refused "$F"
snap
refused "$C"
field "$C" state | grep -q '^bad: 129 pages would pass' || fail "c: $(field "$C" state)"
[ "$(grant_pages)" = $CAP ] || fail "$(grant_pages) pages mapped at the cap"
# its state followed the pages mapped by the others; the warning was logged once
n=$(grep -c "domain $C (c): not traced" "$DLOG")
[ "$n" = 1 ] || fail "c's refusal logged $n times"
note "a's pages released: e traced; f refused at the cap"

# b and e destroyed: 17 pages left, c (129) and f (2) fit and are taken on by the
# rescan, their rings read from the start: exact counts
"$SIMXEN" --dir "$SIM" destroy "$B" >/dev/null || fail "destroy b"
"$SIMXEN" --dir "$SIM" destroy "$E" >/dev/null || fail "destroy e"
wait_field "$B" state destroyed
wait_field "$E" state destroyed
traced "$C" c
traced "$F" f
wait_pages $CAP
grep -q "domain $C (c): traced: 1 rings, .*, 129 pages" "$DLOG" || fail "c's attach not logged"
note "refused guests traced once they fit"

# every survivor's count is still exact, the dead keep their statistics
snap
for pair in "$A:a" "$B:b" "$E:e"; do
	d=${pair%%:*}; n=${pair##*:}
	[ "$(field "$d" events)" = "$(json_events "$n")" ] || fail "dead guest $n lost its statistics"
done
[ "$(field "$D" state)" = running ] && [ "$(field "$D" events)" = "$(json_events d)" ] ||
	fail "bystander d disturbed"

alive
daemon_stop
echo "ok: max_pages_total"
