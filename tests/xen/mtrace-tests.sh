# mtrace on real Xen (sourced by dom0-tests.sh, whose helpers it uses); mtraced runs
# as the installed mtraced.service under systemd (PID 1).
#
# Three domUs run xen-guest on the guest library (real gntalloc, event channels,
# xenstore); each waits for dom0 to write a data/mtrace-test/go key, so that every
# check starts at a known moment:
#   A  2 rings x 256 pages: 20000 events each (with labels) in one burst; later it
#      turns hostile (garbage in its rings, event-channel storm) and is destroyed
#   B  1 ring x 64 pages: 20000 events paced at 2000/s (more than the ring holds, so
#      mtraced must drain it live), then 100 events/s for the rest of the test
#   L  mtrace-load (the ring area's workload guest): 2 rings x 64 pages, 10000 events
#      each of its deterministic whole-vocabulary mix at 1000/s per ring; its JSON
#      summary is compared with what arrived.  It closes its session when done; then
#   O  (the same domU) opens a new one, 1 ring x 1 page (128 records), only while
#      mtraced is stopped, and writes 5000 events: the loss is exactly what the ring
#      could not hold
#   K  (the same domU) once dom0 writes go3, O closes its session and mtrace-load
#      opens one again: 2 rings x 64 pages, 10000 events each at 250/s (40 s), running while
#      mtraced is killed (kill -9) and restarted by systemd (service-tests.sh)
# (B also runs the domU side of xenif-selftest's dom0<->domU check in the background)
SOCK=/run/mtrace/mtraced.sock
MTRACED_PID=
NA=20000 NB=20000 NO=5000 NL=10000 NK=10000
DOMU_mtA="xen-guest load --rings 2 --pages 256 --events $NA --labels --wait-go --then-garbage 8 --linger 3000"
DOMU_mtB="bg xenif-selftest domu + xen-guest load --rings 1 --pages 64 --events $NB --rate 2000 --wait-go --then-rate 100 --linger 3000"
DOMU_mtLO="go mtrace-load --rings 2 --pages 64 --events $NL --rate 1000 --seed 7 --backend xen --linger 20 + xen-guest load --rings 1 --pages 1 --events $NO --go-first --go-key go2 --linger 3000 --until-key go3 + mtrace-load --rings 2 --pages 64 --events $NK --rate 250 --seed 9 --backend xen --linger 120"

# mtraced runs as the installed mtraced.service, socket from mtraced.socket
mtraced_pid() { systemctl show -p MainPID --value mtraced.service; }
start_mtraced() {
	local st
	if ! systemctl start mtraced.service; then
		systemctl status --no-pager mtraced.service | tail -20
		journalctl -u mtraced --no-pager -n 20
		return 1
	fi
	# Type=notify: start returns once mtraced said READY=1, so it is serving now
	st=$(systemctl is-active mtraced.service)
	MTRACED_PID=$(mtraced_pid)
	[ "$st" = active ] && [ "${MTRACED_PID:-0}" -gt 0 ] && [ -S $SOCK ] || {
		echo "mtraced.service: $st, MainPID=$MTRACED_PID"; return 1; }
	timeout 30 mtrace-cat -f json --no-events --stats 200 -n 1 > /run/serving.json 2>&1 || {
		echo "not serving: $(cat /run/serving.json)"; return 1; }
	info "mtraced.service active, MainPID $MTRACED_PID, serving; $(systemctl show -p StatusText --value mtraced)"
}
stop_mtraced() {
	local r
	timeout 30 systemctl stop mtraced.service || fail mtraced_stops
	r=$(systemctl show -p Result --value mtraced.service)
	[ "$(systemctl is-active mtraced.service)" = inactive ] && [ "$r" = success ] ||
		fail "mtraced_stops_cleanly: $(systemctl is-active mtraced.service), Result=$r"
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
gnt_pages() {
	n=0
	while read -r r rest; do
		case $rest in *gntdev*) n=$((n + (0x${r#*-} - 0x${r%-*}) / 4096));; esac
	done < /proc/$MTRACED_PID/maps
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
phase exact-two-domUs
# A's and B's RING_START (seq 0) was read when they announced, before this client
# subscribed: their rings are judged from seq 1 (--resume), L's from seq 0
xen-verify --name exact --timeout 400 --grace 1500 --stats-file /run/exact.stats \
	--expect $A:0:$((NA + 1)) --expect $A:1:$((NA + 1)) --expect $B:0:$((NB + 1)) \
	--resume $A --resume $B --expect $L:0:$NL --expect $L:1:$NL --up $A --up $B --up $L \
	> /run/exact.out 2>&1 &
V=$!
mtrace-cat -f count --summary -d $A -t 450 2> /run/cat.summary &
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

# mtrace-load's own account of what it wrote (published by the domU's /init)
if wait_key $L rc-0-n 900; then
	s=$(stdout_of $L stdout-0 | tr -d '\n')
	rc=$(stdout_of $L rc-0 | tr -d ' \n')
	info "mtrace-load rc=$rc summary: $(echo "$s" | cut -c1-300)..."
	per=$(echo "$s" | sed 's/.*"per_ring": *\[//' | grep -o '"events": *[0-9]*' | grep -o '[0-9]*$' | tr '\n' ' ')
	ev=$(stat_of /run/exact.stats $L events); lo=$(stat_of /run/exact.stats $L lost)
	co=$(stat_of /run/exact.stats $L corrupt)
	[ "$rc" = 0 ] && [ "$per" = "$NL $NL " ] && [ "$ev" = $((2 * NL)) ] && [ "$lo" = 0 ] &&
		[ "$co" = 0 ] && pass mtrace_load_summary_matches_daemon ||
		fail "mtrace_load_summary_matches_daemon: rc=$rc per_ring='$per' daemon events=$ev lost=$lo corrupt=$co"
else
	fail "mtrace_load_finished: $(stdout_of $L stderr-0 2>&1)"
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
