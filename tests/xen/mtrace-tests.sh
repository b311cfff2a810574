# mtrace on real Xen (sourced by dom0-tests.sh, whose helpers it uses); mtraced runs
# as the installed mtraced.service under systemd (PID 1).
#
# Three domUs run xen-guest on the guest library (real gntalloc, event channels,
# xenstore); each waits for dom0 to write a data/mtrace-test/go key, so that every
# check starts at a known moment:
#   A  2 rings x 256 pages: 5000 events each (with labels) in one burst; later it
#      turns hostile (garbage in its rings, event-channel storm) and is destroyed
#   B  1 ring x 64 pages: 9000 events paced at 2000/s (more than its 8192 records, so
#      mtraced must drain it live), then 100 events/s for the rest of the test
#   S  first in L's domain, at boot: sites-guest (tests/sites: -g, PIE, threads made
#      from several lines and functions, some inlined); mtraced in dom0 finds its debug
#      info by build-id under /usr/lib/debug, and the host compares every site with
#      addr2line on the same binary and the creation graph with the guest's account
#   L  mtrace-load (the ring area's workload guest): 2 rings x 64 pages, 2000 events
#      each of its deterministic whole-vocabulary mix at 1000/s per ring; its JSON
#      summary is compared with what arrived.  It closes its session when done; then
#   O  (the same domU) opens a new one, 1 ring x 1 page (128 records), only while
#      mtraced is stopped, and writes 5000 events: the loss is exactly what the ring
#      could not hold
#   K  (the same domU) once dom0 writes go3, O closes its session and mtrace-load
#      opens one again: 2 rings x 64 pages, 4000 events each at 250/s (16 s), running while
#      mtraced is killed (kill -9) and restarted by systemd (service-tests.sh)
# (B also runs the domU side of xenif-selftest's dom0<->domU check in the background)
SOCK=/run/mtrace/mtraced.sock
MTRACED_PID=
NA=5000 NB=9000 NO=5000 NL=2000 NK=4000
DOMU_mtA="xen-guest load --rings 2 --pages 256 --events $NA --labels --wait-go --then-garbage 5 --linger 3000"
DOMU_mtB="bg xenif-selftest domu + xen-guest load --rings 1 --pages 64 --events $NB --rate 2000 --wait-go --then-rate 100 --linger 3000"
DOMU_mtLO="sites-guest --linger 12 + go mtrace-load --rings 2 --pages 64 --events $NL --rate 1000 --seed 7 --backend xen --linger 20 + xen-guest load --rings 1 --pages 1 --events $NO --go-first --go-key go2 --linger 3000 --until-key go3 + mtrace-load --rings 2 --pages 64 --events $NK --rate 250 --seed 9 --backend xen --linger 120"

# mtraced runs as the installed mtraced.service, socket from mtraced.socket
mtraced_pid() { systemctl show -p MainPID --value mtraced.service; }
start_mtraced() {
	local st
	if ! systemctl start mtraced.service; then
		systemctl status --no-pager mtraced.service | tail -20
		journalctl -u mtraced --no-pager -n 20
		return 1
	fi
	# Type=notify: start returns once mtraced said READY=1, so it is serving now.
	# (one systemctl for every property: each one costs a second or two under TCG)
	systemctl show -p ActiveState -p MainPID -p StatusText mtraced.service > /run/mtraced.show
	st=$(sed -n 's/^ActiveState=//p' /run/mtraced.show)
	MTRACED_PID=$(sed -n 's/^MainPID=//p' /run/mtraced.show)
	[ "$st" = active ] && [ "${MTRACED_PID:-0}" -gt 0 ] && [ -S $SOCK ] || {
		echo "mtraced.service: $st, MainPID=$MTRACED_PID"; return 1; }
	timeout 30 mtrace-cat -f json --no-events --stats 200 -n 1 > /run/serving.json 2>&1 || {
		echo "not serving: $(cat /run/serving.json)"; return 1; }
	info "mtraced.service active, MainPID $MTRACED_PID, serving; $(sed -n 's/^StatusText=//p' /run/mtraced.show)"
}
stop_mtraced() {
	local r a
	timeout 30 systemctl stop mtraced.service || fail mtraced_stops
	systemctl show -p ActiveState -p Result mtraced.service > /run/mtraced.show
	r=$(sed -n 's/^Result=//p' /run/mtraced.show) a=$(sed -n 's/^ActiveState=//p' /run/mtraced.show)
	[ "$a" = inactive ] && [ "$r" = success ] || fail "mtraced_stops_cleanly: $a, Result=$r"
	kill -0 $MTRACED_PID 2>/dev/null && fail "mtraced_stops: pid $MTRACED_PID still there"
	MTRACED_PID=
}
go() { xenstore-write /local/domain/$1/data/mtrace-test/${2:-go} 1; }
stdout_of() { # domid key: what domU-init published (xen-guest publish), reassembled
	local n k=0
	n=$(xenstore-read /local/domain/$1/data/mtrace-test/$2-n) || return 1
	while [ $k -lt $n ]; do
		xenstore-read /local/domain/$1/data/mtrace-test/$2-$k
		k=$((k + 1))
	done
}
now_s() { cut -d. -f1 /proc/uptime; }
wait_key() { # domid key [tenths of a second]: by the clock, not by loop turns, which
	local end=$(( $(now_s) + ${3:-1200} / 10 ))	# a loaded host makes slow
	while ! xenstore-read /local/domain/$1/data/mtrace-test/$2 >/dev/null 2>&1; do
		[ "$(now_s)" -gt $end ] && { dump_domu "$(xl domname $1 2>/dev/null)" 20; return 1; }
		sleep 0.5
	done
}
json() { sed -n "s/.*\"$1\":\\([^,}]*\\).*/\\1/p"; }	# key < json
stat_of() { sed -n "s/^dom=$2 .*[ ]$3=\\([^ ]*\\).*/\\1/p" "$1"; }	# file domid key
# grant pages mtraced has mapped (its gntdev VMAs) and event channels it has bound
gnt_pages() {	# (the gntdev lines only: a shell loop over every line costs seconds)
	local n=0 r
	for r in $(grep gntdev /proc/$MTRACED_PID/maps | cut -d' ' -f1); do
		n=$((n + (0x${r#*-} - 0x${r%-*}) / 4096))
	done
	echo $n
}
evt_ports() { grep -c 'evtchn:mtraced' /proc/interrupts; }
# what mtraced should hold: "pages ports" over the guests announced as ready
announced() {
	local pg=0 pt=0 d i n
	for d in $(xenstore-list /local/domain); do
		[ "$(xenstore-read /local/domain/$d/data/mtrace/state 2>/dev/null)" = ready ] || continue
		n=$(xenstore-read /local/domain/$d/data/mtrace/rings)
		i=0
		while [ $i -lt $n ]; do
			pg=$((pg + 1 + $(xenstore-read /local/domain/$d/data/mtrace/ring/$i/pages)))
			i=$((i + 1))
		done
		pt=$((pt + 1))
	done
	echo $pg $pt
}
# An idle mtraced, with guests announced that write nothing, must cost next to nothing:
# its main thread's voluntary context switches (each one a sleep in the event loop, so
# a wake-up when it returns) and CPU ticks (utime + stime, 1/100 s) over an interval.
# A behaviour, not a speed: the periodic drain alone woke it 50 times a second.  The
# CPU bound only catches a spinning daemon: under TCG on a loaded host a tick is
# charged to whatever runs when it fires, and a few wake-ups showed as 19 %.
proc_cpu() { awk '{ print $14 + $15 }' /proc/$1/stat; }
proc_vcs() { sed -n 's/^voluntary_ctxt_switches:[^0-9]*//p' /proc/$1/status; }
IDLE_WAKE_MAX=25 IDLE_CPU_MAX=50
idle_check() { # label seconds
	local c0 v0 c1 v1 t0 t1 p=$MTRACED_PID w c
	c0=$(proc_cpu $p) v0=$(proc_vcs $p) t0=$(cut -d' ' -f1 /proc/uptime)
	sleep $2
	c1=$(proc_cpu $p) v1=$(proc_vcs $p) t1=$(cut -d' ' -f1 /proc/uptime)
	w=$(awk -v a=$v0 -v b=$v1 -v t0=$t0 -v t1=$t1 'BEGIN { printf "%.1f", (b - a) / (t1 - t0) }')
	c=$(awk -v a=$c0 -v b=$c1 -v t0=$t0 -v t1=$t1 'BEGIN { printf "%.1f", (b - a) / (t1 - t0) }')
	if awk -v w=$w -v c=$c -v W=$IDLE_WAKE_MAX -v C=$IDLE_CPU_MAX 'BEGIN { exit !(w <= W && c <= C) }'; then
		pass "idle_mtraced_sleeps_$1 ($w wake-ups/s <= $IDLE_WAKE_MAX, $c% CPU <= $IDLE_CPU_MAX%)"
	else
		fail "idle_mtraced_sleeps_$1: $w wake-ups/s (max $IDLE_WAKE_MAX), $c% CPU (max $IDLE_CPU_MAX%)"
	fi
}
# a file to the host, which checks it with its own tools (run-xen.sh's host_checks)
blob() { # name file
	info "blob $1 begin $(md5sum < "$2" | cut -c1-32)"
	base64 < "$2" | sed "s/^/XENTEST BLOB $1 /"
	info "blob $1 end"
}
verify() { # name args...: run xen-verify, show and judge its output
	local vn=$1 vr; shift
	xen-verify --name "$vn" --stats-file /run/$vn.stats "$@" > /run/$vn.out 2>&1
	vr=$?
	cat /run/$vn.out
	[ $vr = 0 ] || RC=1
}

mtrace_checks() {
A=$(dom_of mtA) || fail xl_create_A
B=$(dom_of mtB) || fail xl_create_B
L=$(dom_of mtLO) || fail xl_create_LO
O=$L
[ -n "$A" ] && [ -n "$B" ] && [ -n "$L" ] && [ -n "$O" ] || return
info "domUs: A=dom$A B=dom$B L=dom$L O=dom$O"
wait_key $A announced 3000 || fail "announce_A"
wait_key $B announced 3000 || fail "announce_B"
wait_key $L state 3000 || fail "boot_LO"

# -------------------------------------------------------------------------------
# creation sites in a domU: S runs first in L's domain, lingers 12 s and withdraws;
# its threads and sites stay in mtraced's account of the domain (L's session adds
# to it).  dom0 takes mtraced's account once every site was looked up and two looks
# agree, and, after the exact phase (S's stdout is published when it exits), sends
# the guest's own account and mtraced's to the host (run-xen.sh), which has addr2line
# and python3 for tests/sites/check_sites.py.
phase sites-in-domU
# every address site looked up (a named site is never "resolved": it is its name)
sites_ready() { grep -q '"sites":\[{' "$1" && ! grep -Eq '"named":false,[^{}]*"resolved":false' "$1"; }
end=$(( $(now_s) + 60 )) prev=
while :; do
	timeout 30 mtrace-cat -D $L --no-events --stats 100 --site-stats --top 1000 \
		--finished -n 1 -f json 2>&1 | tail -1 > /run/sites.try
	ev=$(grep -o "\"domid\":$L,\"name\":[^}]*" /run/sites.try | grep -o '"events":[0-9]*' | tail -1)
	# two ready looks in a row that agree: a look that is not ready restarts the pair
	if sites_ready /run/sites.try; then
		cp /run/sites.try /run/sites.stats
		[ "$ev" = "$prev" ] && break
		prev=$ev
	else
		prev=
	fi
	[ "$(now_s)" -gt $end ] && break
	sleep 0.5
done
if sites_ready /run/sites.stats 2>/dev/null; then
	pass "sites_looked_up_in_dom0 ($(grep -o '"resolved":true' /run/sites.stats | wc -l) resolved, ${ev#*:} events)"
else
	fail "sites_looked_up_in_dom0: $(grep -o '"sites":.*' /run/sites.try | head -c 1500)"
fi
# S's events stay counted in L's domain: the check below counts those of L's session
L0=$(grep -o "\"domid\":$L,\"name\":[^}]*" /run/sites.stats 2>/dev/null | grep -o '"events":[0-9]*' |
	tail -1 | cut -d: -f2)

# -------------------------------------------------------------------------------
# three guests announced or withdrawn, none writing: mtraced sleeps
phase idle
idle_check three-idle-guests 5

# -------------------------------------------------------------------------------
phase exact-two-domUs
# A's and B's RING_START (seq 0) was read when they announced, before this client
# subscribed: their rings are judged from seq 1 (--resume), L's from seq 0
xen-verify --name exact --timeout 400 --grace 1500 --stats-file /run/exact.stats \
	--expect $A:0:$((NA + 1)) --expect $A:1:$((NA + 1)) --expect $B:0:$((NB + 1)) \
	--resume $A --resume $B --expect $L:0:$NL --expect $L:1:$NL --up $A --up $B --up $L \
	> /run/exact.out 2>&1 &
V=$!
mtrace-cat -f count --summary -D $A --time 450 2> /run/cat.summary &
CAT=$!
i=0; while ! grep -q subscribed /run/exact.out && kill -0 $V 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
sleep 0.5
go $A; go $B; go $L
wait $V || RC=1
cat /run/exact.out
sleep 1; kill -INT $CAT; wait $CAT
for r in 0 1; do
	grep -q "exact ring dom=$A ring=$r .* first_seq=1 next_seq=$((NA + 1))" /run/exact.out &&
		pass "exact_from_seq1_d${A}_r$r" || fail "exact_from_seq1_d${A}_r$r"
done
grep -q "exact ring dom=$B ring=0 .* first_seq=1 " /run/exact.out && pass "exact_from_seq1_d${B}_r0" ||
	fail "exact_from_seq1_d${B}_r0"
ev=$(json events < /run/cat.summary)
[ "$ev" = $((2 * NA)) ] && pass "mtrace_cat_exact_count ($ev events of dom$A)" ||
	fail "mtrace_cat_exact_count: got '$ev' want $((2 * NA)): $(cat /run/cat.summary)"
for d in A B; do
	eval id=\$$d
	s=$(xenstore-read /local/domain/$id/data/mtrace-test/summary)
	info "dom$id summary $s"
	n=$(echo "$s" | json records_per_ring); r=$(echo "$s" | json rings)
	ev=$(stat_of /run/exact.stats $id events); lo=$(stat_of /run/exact.stats $id lost)
	co=$(stat_of /run/exact.stats $id corrupt)
	# B keeps writing after its 20000: at least, and nothing lost or corrupt
	[ -n "$n" ] && [ "${ev:-0}" -ge $((n * r)) ] && [ "$lo" = 0 ] && [ "$co" = 0 ] &&
		pass "daemon_stats_exact_$d" ||
		fail "daemon_stats_exact_$d: guest wrote $r x $n, daemon events=$ev lost=$lo corrupt=$co"
done

# S's own account, now that it exited, and mtraced's, to the host
if wait_key $L rc-0-n 600; then
	src=$(stdout_of $L rc-0 | tr -d ' \n')
	[ "$src" = 0 ] && pass sites_guest_ran || fail "sites_guest_ran: rc=$src: $(stdout_of $L stderr-0)"
	# (publish cut it into 1 KiB nodes, xenstore-read shows its final newline as \n;
	# the account is one JSON line)
	{ stdout_of $L stdout-0 | tr -d '\n' | sed 's/\\n$//'; echo; } > /run/sites-guest.out
	info "sites domid $L"
	blob sites-guest.out /run/sites-guest.out
	[ -s /run/sites.stats ] && blob sites.stats /run/sites.stats
else
	fail "sites_guest_ran: $(stdout_of $L stderr-0 2>&1)"
fi

# mtrace-load's own account of what it wrote (published by the domU's /init)
if wait_key $L rc-1-n 900; then
	s=$(stdout_of $L stdout-1 | tr -d '\n')
	rc=$(stdout_of $L rc-1 | tr -d ' \n')
	info "mtrace-load rc=$rc summary: $(echo "$s" | cut -c1-300)..."
	per=$(echo "$s" | sed 's/.*"per_ring": *\[//' | grep -o '"events": *[0-9]*' | grep -o '[0-9]*$' | tr '\n' ' ')
	ev=$(stat_of /run/exact.stats $L events); lo=$(stat_of /run/exact.stats $L lost)
	co=$(stat_of /run/exact.stats $L corrupt)
	ev=$((${ev:-0} - ${L0:-0}))
	[ "$rc" = 0 ] && [ "$per" = "$NL $NL " ] && [ "$ev" = $((2 * NL)) ] && [ "$lo" = 0 ] &&
		[ "$co" = 0 ] && pass mtrace_load_summary_matches_daemon ||
		fail "mtrace_load_summary_matches_daemon: rc=$rc per_ring='$per' daemon events=$ev (after S's ${L0:-?}) lost=$lo corrupt=$co"
else
	fail "mtrace_load_finished: $(stdout_of $L stderr-1 2>&1)"
fi

# -------------------------------------------------------------------------------
# mtraced stops; O writes 5000 events into a 128-record ring meanwhile; mtraced
# restarts and must find A and B again, B still flowing, and count O's loss exactly
phase restart-and-overrun
# mtrace-load closed its session (L); O will announce a new one in the same domain
i=0; while [ "$(xenstore-read /local/domain/$L/data/mtrace/state 2>/dev/null)" = ready ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
stop_mtraced
go $O go2
wait_key $O summary 900 || fail overrun_burst_written
start_mtraced && pass mtraced_restarts || fail mtraced_restarts
s=$(xenstore-read /local/domain/$O/data/mtrace-test/summary)
info "dom$O summary $s"
n=$(echo "$s" | json records_per_ring)
# mtraced drains O's ring as it attaches at start-up, before any client can subscribe:
# O's loss is judged on the daemon's statistics; the client checks A, B and O come
# back and B's stream goes on in order
verify restart --timeout 300 --grace 1500 --up $A --up $B --up $O --flowing $B
lo=$(stat_of /run/restart.stats $O lost); ev=$(stat_of /run/restart.stats $O events)
info "overrun: dom$O wrote $n records into a 128-record ring; mtraced: events=$ev lost=$lo"
[ -n "$lo" ] && [ "$lo" -gt 0 ] && [ $((ev + lo)) = "$n" ] && [ "$ev" -le 128 ] &&
	pass overrun_exact_loss || fail "overrun_exact_loss: wrote $n, events=$ev lost=$lo"

# -------------------------------------------------------------------------------
# A turns hostile; then it is destroyed under mtraced's feet; B must not notice
phase garbage-and-destroy
bl=$(stat_of /run/restart.stats $B lost); bc=$(stat_of /run/restart.stats $B corrupt)
xen-verify --name live --timeout 300 --grace 500 --stats-file /run/live.stats \
	--ignore $A --flowing $B --down $A > /run/live.out 2>&1 &
V=$!
i=0; while ! grep -q subscribed /run/live.out && kill -0 $V 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
go $A go2
sleep 2
# responsive during the storm: a fresh client gets its statistics promptly
t0=$(date +%s)
if timeout 10 mtrace-cat -f json --no-events --stats 200 -n 1 > /run/storm.stats 2>&1; then
	pass "daemon_responsive_during_storm ($(( $(date +%s) - t0 )) s)"
else
	fail daemon_responsive_during_storm; cat /run/storm.stats
fi
wait_key $A garbage-done 600 || fail garbage_ran
sleep 1
p0=$(gnt_pages); e0=$(evt_ports)
info "before destroy: mtraced maps $p0 grant pages, binds $e0 event channels"
xl destroy $A && pass xl_destroy_A || fail xl_destroy_A
# a destroyed domain stays a zombie while dom0 maps any of its pages: its leaving
# the hypervisor's list proves that mtraced unmapped everything of A
i=0; while xl list $A >/dev/null 2>&1 && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
xl list $A >/dev/null 2>&1 && fail "destroyed_domain_released: dom$A still listed" ||
	pass destroyed_domain_released
sleep 1
p1=$(gnt_pages); e1=$(evt_ports)
info "after destroy: $p1 grant pages, $e1 event channels"
set -- $(announced)
[ "$p1" = "$1" ] && pass "destroy_unmaps_all_pages ($p0 -> $p1)" ||
	fail "destroy_unmaps_all_pages: $p0 -> $p1, want $1 for the guests still announced"
[ "$e1" = "$2" ] && pass "destroy_unbinds_evtchn ($e0 -> $e1)" ||
	fail "destroy_unbinds_evtchn: $e0 -> $e1, want $2"
wait $V || RC=1
cat /run/live.out
grep "^dom=$A " /run/live.stats | sed 's/^/XENTEST INFO hostile /'
ac=$(stat_of /run/live.stats $A corrupt); as=$(stat_of /run/live.stats $A state)
{ [ "${ac:-0}" -gt 0 ] || case "$as" in bad*) true;; *) false;; esac; } &&
	pass "hostile_guest_counted (corrupt=$ac state=$as)" || fail "hostile_guest_counted: corrupt=$ac state=$as"
al=$(stat_of /run/live.stats $B lost); acr=$(stat_of /run/live.stats $B corrupt)
[ "$al" = "$bl" ] && [ "$acr" = "$bc" ] && pass other_guest_untouched ||
	fail "other_guest_untouched: dom$B lost $bl -> $al, corrupt $bc -> $acr"
# and B is still served after A is gone
verify after-destroy --timeout 200 --grace 200 --flowing $B
kill -0 $MTRACED_PID 2>/dev/null && pass mtraced_survives || fail mtraced_survives

service_checks

phase teardown
stop_mtraced
journalctl -u mtraced --no-pager -o cat | grep -iE 'error|warn' | head -40 | sed 's/^/[mtraced] /'
}
