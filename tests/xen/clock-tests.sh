# One timeline on real Xen (issue 37; sourced by dom0-tests.sh after the mtrace checks,
# using their helpers): two domUs, CA on the monotonic clock and CB on the TSC clock,
# signal each other through an interdomain event channel (mtrace-load --pingpong), then
# each does round trips with a dom0 witness (xen-clock witness) that stamps dom0's
# CLOCK_REALTIME.  dom0 sends the host what it saw, and tests/xen/check_clock.py judges:
#   (i)   each guest's clock-sync parses, and its Xen time lies between dom0's own
#         readings of Xen time before the guest started and after the key appeared
#   (ii)  mtraced's own mapping (check_clock_mtraced.py), from what mtraced.service in
#         dom0 sent a client (mtrace-cat -f json: host_ns on every event, clock_map,
#         evtchn_link and mtrace-cat's evtchn_pair lines, reduced by clock-reduce.awk):
#         every map from Xen system time with its uncertainty, every send before its
#         receive as mtrace-cat judged the pairs, the witness round trips within 1 ms of
#         dom0's wall clock on mtraced's host times
#   (iii) the same two on a timeline computed on the host from the raw announcements and
#         dom0's clock_sample (the cross-check; mtraced's maps must agree with it)
NCLK_AB=${NCLK_AB:-1000} NCLK_W=${NCLK_W:-200}
CLOCK_LOAD="mtrace-load --rings 1 --pages 64 --backend xen --pingpong-timeout 600 --pingpong ab,$NCLK_AB --pingpong w,$NCLK_W --linger 60"
DOMU_mtCA="go $CLOCK_LOAD --clock monotonic"
DOMU_mtCB="go $CLOCK_LOAD --clock tsc"

pp_key() { echo /local/domain/$1/data/mtrace-pingpong/$2; }
clock_clients() { journalctl -u mtraced --no-pager -o cat 2>/dev/null | grep -c mtrace-cat; }
wait_xs() { # path [tenths of a second]: its value once it exists
	local end=$(( $(now_s) + ${2:-1200} / 10 ))
	while ! xenstore-read "$1" 2>/dev/null; do
		[ "$(now_s)" -gt $end ] && return 1
		sleep 0.5
	done
}
d0_sample() { # label: one line of dom0's Xen time against CLOCK_REALTIME, to the account
	xen-clock sample 1 > /run/clock.s 2>&1
	local rc=$?
	sed "s/^/d0 $1 /" /run/clock.s >> /run/clock.account
	return $rc
}

clock_checks() {
CA=$(dom_of mtCA) || fail xl_create_CA
CB=$(dom_of mtCB) || fail xl_create_CB
[ -n "$CA" ] && [ -n "$CB" ] && clock_run
# whatever happened, the domUs go (the OCaml domU comes next) and so does mtraced
[ $RC = 0 ] || { dump_domu mtCA 15; dump_domu mtCB 15; }
xl destroy mtCA 2>/dev/null; xl destroy mtCB 2>/dev/null
[ -z "$MTRACED_PID" ] || stop_mtraced
}

clock_run() {
info "clock domUs: CA=dom$CA (monotonic) CB=dom$CB (tsc)"
phase clock
: > /run/clock.account
echo "domains $CA $CB" >> /run/clock.account
echo "counts $NCLK_AB $NCLK_W" >> /run/clock.account
# Xen system time in dom0 (xenif clock_sample), and how it is read here
if d0_sample before; then
	pass "dom0_reads_xen_time ($(cut -d' ' -f5- /run/clock.s | head -1), width $(cut -d' ' -f4 /run/clock.s | head -1) ns)"
else
	fail "dom0_reads_xen_time: $(cat /run/clock.s)"
	return
fi
xen-clock sample 5 monotonic | sed 's/^/XENTEST INFO dom0 monotonic /'
# no source, no figure: a process that may not use privcmd (not root) is told ENOTSUP
# (exit 3), as a guest without it announces no clock-sync
/usr/bin/setpriv --reuid=outsider --regid=outsider --init-groups xen-clock sample 1 > /run/clock.nosrc 2>&1
nrc=$?
[ $nrc = 3 ] && grep -q '^unsupported' /run/clock.nosrc &&
	pass "no_source_no_figure (uid outsider: $(head -1 /run/clock.nosrc))" ||
	fail "no_source_no_figure: exit $nrc: $(head -c 300 /run/clock.nosrc)"
[ -n "$MTRACED_PID" ] || start_mtraced || { fail clock_mtraced_starts; return; }
# every event of both, from before they start; as many as they will write
nev=$(( 2 * (2 * NCLK_AB + 2 * NCLK_W + 1) ))
c0=$(clock_clients)
mtrace-cat -f json --summary -D $CA -D $CB -n $nev --time 900 > /run/clock.json 2> /run/clock.cat.err &
CCAT=$!
# subscribed once mtraced's journal names the client (its events from the first on)
i=0; while [ "$(clock_clients)" = "$c0" ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i+1)); done
go $CA; go $CB
# every value of each guest's clock-sync, as it changes (a watch fires once at once)
for d in $CA $CB; do
	xenstore-watch /local/domain/$d/data/mtrace/clock-sync | while read -r p; do
		v=$(xenstore-read "$p" 2>/dev/null) && echo "sync $d $v" >> /run/clock.sync.$d
	done &
	eval SW$d=$!
done
for d in $CA $CB; do
	if s=$(wait_xs /local/domain/$d/data/mtrace/clock-sync 1800); then
		echo "clock $d $(xenstore-read /local/domain/$d/data/mtrace/clock)" >> /run/clock.account
		info "dom$d clock-sync $s ($(xenstore-read /local/domain/$d/data/mtrace/clock))"
	else
		fail "clock_sync_announced_dom$d: no data/mtrace/clock-sync; $(stdout_of $d stderr-0 2>&1 | head -c 600)"
	fi
done
d0_sample seen
# A offers, B connects (dom0 carries the port: a domU cannot read another's home)
xenstore-write $(pp_key $CA ab)/role "offer $CB"
if p=$(wait_xs $(pp_key $CA ab)/port 1200); then
	xenstore-write $(pp_key $CB ab)/role "connect $CA $p"
else
	fail "pingpong_offer: dom$CA wrote no port"
fi
# the witnesses: dom0 offers, each domU connects once done with the other
for d in $CA $CB; do
	xen-clock witness $d $NCLK_W 900 > /run/witness.$d 2>&1 &
	eval W$d=$!
done
for d in $CA $CB; do
	i=0; while ! grep -q '^port ' /run/witness.$d && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
	xenstore-write $(pp_key $d w)/role "connect 0 $(sed -n 's/^port //p' /run/witness.$d)"
done
for d in $CA $CB; do
	eval wait \$W$d && pass "witness_round_trips_dom$d ($NCLK_W)" ||
		fail "witness_round_trips_dom$d: $(tail -3 /run/witness.$d)"
	sed "s/^/w $d /" /run/witness.$d >> /run/clock.account
done
for d in $CA $CB; do
	if wait_key $d rc-0-n 3000; then
		rc=$(stdout_of $d rc-0 | tr -d ' \n')
		[ "$rc" = 0 ] && pass "pingpong_ran_dom$d" ||
			fail "pingpong_ran_dom$d: rc=$rc: $(stdout_of $d stderr-0 | head -c 800)"
		echo "summary $d $(stdout_of $d stdout-0 | tr -d '\n' | grep -o '"per_op": {[^}]*}')" >> /run/clock.account
	else
		fail "pingpong_finished_dom$d: $(stdout_of $d stderr-0 2>&1 | head -c 600)"
	fi
done
wait $CCAT; crc=$?
[ $crc = 0 ] || info "mtrace-cat: rc=$crc $(head -c 300 /run/clock.cat.err)"
for d in $CA $CB; do
	eval kill \$SW$d 2>/dev/null
	uniq /run/clock.sync.$d >> /run/clock.account 2>/dev/null
done
d0_sample after
# mtraced's account, reduced (dom0 has no python; clock-reduce.awk): the events with
# their guest and host times, the clock maps, the links Xen told, the pairs mtrace-cat made
awk -f /root/clock-reduce.awk /run/clock.json >> /run/clock.account
# and mtrace-cat's own count of them
grep -o '"evtchn_pairs":{[^}]*}' /run/clock.cat.err | sed 's/^/catsum /' >> /run/clock.account
info "clock account: $(grep -c '^ev ' /run/clock.account) events of $nev, $(grep -c '^pair ' /run/clock.account) pairs, $(grep -c '^map ' /run/clock.account) maps, $(wc -c < /run/clock.account) bytes"
gzip -c /run/clock.account > /run/clock.account.gz
blob clock.account.gz /run/clock.account.gz
}
