# mtraced as systemd runs it, on real Xen (sourced by dom0-tests.sh; uses the helpers
# of dom0-tests.sh and mtrace-tests.sh).  Run after mtrace_checks, while B still
# writes 100 events/s and O keeps its (overrun) session; K (O's domain) follows O.
#
# What an administrator does: enable the units, look at the socket, let a user of
# group mtrace read and see another refused, reload a changed mtraced.conf, let
# mtraced.socket start the service, kill -9 it and see Restart=on-failure bring it
# back with every guest, read its journal, and score its lockdown in place.

# the config file the installed unit passes with -c
unit_conf() {
	sed -n 's/^ExecStart=.* -c \([^ ]*\).*/\1/p' \
		"$(systemctl show -p FragmentPath --value mtraced.service)"
}
stats_once() { # out-file [setpriv args...]: one statistics message from mtraced
	local out=$1; shift
	timeout 30 "$@" mtrace-cat -f json --no-events --stats 200 -n 1 > "$out" 2>&1
}
domids_in() { grep -o '"domid": *[0-9]*' "$1" | grep -o '[0-9]*$' | sort -n | tr '\n' ' '; }
journal_since() { # cursor-file: mtraced's journal since the cursor was taken
	journalctl -u mtraced --no-pager -o cat --after-cursor="$(cat "$1")" 2>/dev/null
}
cursor() { journalctl -u mtraced -n 1 --show-cursor --no-pager -o cat | sed -n "s/^-- cursor: //p" > "$1"; }

service_checks() {
K=$O
conf=$(unit_conf)
info "mtraced.service: $(systemctl show -p FragmentPath --value mtraced.service), config $conf"

# -------------------------------------------------------------------------------
phase systemd-units
systemctl enable mtraced.service 2>&1 | sed 's/^/[systemctl] /'
[ "$(systemctl is-enabled mtraced.service)" = enabled ] &&
	[ -L /etc/systemd/system/multi-user.target.wants/mtraced.service ] &&
	[ -L /etc/systemd/system/sockets.target.wants/mtraced.socket ] &&
	pass systemctl_enable_service_and_socket ||
	fail "systemctl_enable_service_and_socket: $(systemctl is-enabled mtraced.service)"
s=$(stat -c '%a %U %G' $SOCK) d=$(stat -c %a /run/mtrace)
[ "$s" = "660 root mtrace" ] && [ "$d" = 755 ] && pass "socket_mode_group ($s, dir $d)" ||
	fail "socket_mode_group: socket '$s' dir '$d', want '660 root mtrace', 755"
st=$(systemctl show -p StatusText --value mtraced.service)
case $st in *guest*client*) pass "sd_notify_status ($st)";; *) fail "sd_notify_status: '$st'";; esac

# group mtrace may read; anyone else is refused (sysusers.d made the group and users).
# util-linux's setpriv by path: busybox's applets (timeout) prefer busybox's own
SETPRIV=/usr/bin/setpriv
info "tracer: $(id tracer 2>&1); outsider: $(id outsider 2>&1)"
if stats_once /run/tracer.json $SETPRIV --reuid=tracer --regid=tracer --init-groups &&
	grep -q domid /run/tracer.json; then
	pass group_member_served
else
	fail "group_member_served: $(head -c 300 /run/tracer.json)"
fi
if stats_once /run/outsider.json $SETPRIV --reuid=outsider --regid=outsider --init-groups; then
	fail "outsider_refused: served: $(head -c 300 /run/outsider.json)"
elif grep -qi 'permission denied' /run/outsider.json; then
	pass "outsider_refused ($(head -1 /run/outsider.json))"
else
	fail "outsider_refused: not for want of permission: $(head -c 300 /run/outsider.json)"
fi

# -------------------------------------------------------------------------------
# reload: a changed mtraced.conf takes effect (max_clients = 1: a second client is
# refused), the process, its guests and its clients stay
phase systemd-reload
stats_once /run/reload0.json; doms0=$(domids_in /run/reload0.json)
pid0=$(mtraced_pid)
cursor /run/cur.reload
cp "$conf" /run/mtraced.conf.orig
echo "max_clients = 1" >> "$conf"
timeout 30 systemctl reload mtraced.service && pass systemctl_reload || fail systemctl_reload
i=0; until journal_since /run/cur.reload | grep -q 'configuration reloaded' || [ $i -ge 100 ]; do
	sleep 0.1; i=$((i+1)); done
journal_since /run/cur.reload | grep -q 'configuration reloaded' &&
	pass reload_config_reread || fail "reload_config_reread: $(journal_since /run/cur.reload | tail -3)"
mtrace-cat -f count --summary --time 300 2> /run/hold.summary &
HOLD=$!
# the one client allowed is connected once sd_notify's STATUS= counts it
i=0; until systemctl show -p StatusText --value mtraced | grep -q ', 1 client$' || [ $i -ge 60 ]; do
	sleep 1; i=$((i+1)); done
if stats_once /run/second.json; then
	fail "reload_takes_effect: a second client was served with max_clients = 1"
else
	pass "reload_takes_effect ($(head -1 /run/second.json))"
fi
cp /run/mtraced.conf.orig "$conf"
timeout 30 systemctl reload mtraced.service || fail systemctl_reload_back
kill -0 $HOLD && kill -INT $HOLD && wait $HOLD && pass reload_keeps_clients ||
	fail "reload_keeps_clients: $(cat /run/hold.summary)"
stats_once /run/reload1.json; doms1=$(domids_in /run/reload1.json)
has_doms() { for d in $B $O; do case " $1" in *" $d "*) ;; *) return 1;; esac; done; }
[ "$(mtraced_pid)" = "$pid0" ] && [ "$(systemctl is-active mtraced)" = active ] &&
	has_doms "$doms0" && has_doms "$doms1" &&
	pass "reload_keeps_process_and_guests (pid $pid0, domains $doms1)" ||
	fail "reload_keeps_process_and_guests: pid $pid0 -> $(mtraced_pid), domains '$doms0' -> '$doms1'"

# -------------------------------------------------------------------------------
# socket activation: with only mtraced.socket listening, a client starts mtraced
phase systemd-socket-activation
timeout 30 systemctl stop mtraced.service mtraced.socket
[ ! -e $SOCK ] && [ "$(systemctl is-active mtraced.socket)" = inactive ] &&
	pass socket_removed_on_stop || fail "socket_removed_on_stop: $(ls -l $SOCK 2>&1)"
systemctl start mtraced.socket || fail start_socket
a=$(systemctl is-active mtraced.service)
cursor /run/cur.act
if [ "$a" = inactive ] && [ -S $SOCK ] && stats_once /run/activated.json &&
	grep -q domid /run/activated.json; then
	a2=$(systemctl is-active mtraced.service)
	[ "$a2" = active ] && pass "socket_activation (service $a -> $a2, domains $(domids_in /run/activated.json))" ||
		fail "socket_activation: served but service $a2"
else
	fail "socket_activation: service was $a before; $(head -c 300 /run/activated.json 2>&1)"
fi
journal_since /run/cur.act | grep -q 'socket-activated' && pass journal_socket_activated ||
	fail "journal_socket_activated: $(journal_since /run/cur.act | head -5)"
MTRACED_PID=$(mtraced_pid)

# -------------------------------------------------------------------------------
# kill -9 while K's mtrace-load writes: Restart=on-failure brings mtraced back, it
# finds every guest again, and K's stream goes on, every event delivered or counted lost
phase systemd-kill-restart
go $O go3	# O closes its session, K's mtrace-load opens one in the same domain
verify k-before --timeout 300 --grace 0 --up $K --flowing $K
pid0=$(mtraced_pid); nr0=$(systemctl show -p NRestarts --value mtraced.service)
cursor /run/cur.kill
kill -9 "$pid0"
end=$(( $(now_s) + 60 ))
while p=$(mtraced_pid); [ "$p" = "$pid0" ] || [ "$p" = 0 ] ||
	[ "$(systemctl is-active mtraced.service)" != active ]; do
	[ "$(now_s)" -gt $end ] && break
	sleep 0.2
done
nr1=$(systemctl show -p NRestarts --value mtraced.service)
[ "$p" != "$pid0" ] && [ "$p" != 0 ] && [ "$nr1" = $((nr0 + 1)) ] &&
	pass "restarted_after_kill_9 (pid $pid0 -> $p, NRestarts $nr0 -> $nr1)" ||
	fail "restarted_after_kill_9: pid $pid0 -> $p, NRestarts $nr0 -> $nr1, $(systemctl is-active mtraced.service)"
MTRACED_PID=$p
# K was read before: judged from the first sequence number this client sees, to the
# end of its 10000 a ring, any gap told by a Loss notice
verify k-after --timeout 300 --grace 1500 --resume $K --expect $K:0:$NK --expect $K:1:$NK \
	--any-lost $K:0 --any-lost $K:1 --up $B --up $K --flowing $B
ev=$(stat_of /run/k-after.stats $K events); lo=$(stat_of /run/k-after.stats $K lost)
co=$(stat_of /run/k-after.stats $K corrupt)
if wait_key $K rc-3-n 1500; then
	s=$(stdout_of $K stdout-3 | tr -d '\n'); rc=$(stdout_of $K rc-3 | tr -d ' \n')
	per=$(echo "$s" | sed 's/.*"per_ring": *\[//' | grep -o '"events": *[0-9]*' | grep -o '[0-9]*$' | tr '\n' ' ')
else
	rc=none per=none
fi
info "kill -9: dom$K mtrace-load rc=$rc per_ring='$per'; restarted mtraced: events=$ev lost=$lo corrupt=$co"
[ "$rc" = 0 ] && [ "$per" = "$NK $NK " ] && [ -n "$ev" ] && [ "$ev" -gt 0 ] && [ "$co" = 0 ] &&
	[ $((ev + lo)) = $((2 * NK)) ] && pass "counts_consistent_after_kill_9 ($ev + $lo lost = 2 x $NK)" ||
	fail "counts_consistent_after_kill_9: guest rc=$rc per_ring='$per', daemon events=$ev lost=$lo corrupt=$co, want events + lost = $((2 * NK))"

# the journal: the kill as systemd saw it, and the new mtraced's own lines
journalctl -u mtraced --no-pager -o cat > /run/journal.txt
info "journalctl -u mtraced: $(wc -l < /run/journal.txt) lines; since the kill:"
journal_since /run/cur.kill | head -8 | sed 's/^/XENTEST INFO journal | /'
journal_since /run/cur.kill | grep -q 'status=9/KILL' &&
	journal_since /run/cur.kill | grep -q 'ready: xen backend' &&
	grep -q 'configuration reloaded' /run/journal.txt && pass journalctl_shows_log ||
	fail "journalctl_shows_log: no kill/ready/reload lines"

# -------------------------------------------------------------------------------
# the lockdown as the running systemd applies it (tests/service scores the file offline)
phase systemd-security
systemd-analyze security --no-pager mtraced.service > /run/security.out 2>&1
score=$(sed -n 's/.*Overall exposure level for mtraced.service: \([0-9.]*\).*/\1/p' /run/security.out)
if [ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'; then
	pass "systemd_analyze_security_in_place (exposure $score <= 2.0)"
else
	grep '✗' /run/security.out | head -20
	fail "systemd_analyze_security_in_place: exposure '$score' (want <= 2.0): $(tail -2 /run/security.out)"
fi
}
