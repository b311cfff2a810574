#!/bin/sh
# mtrace-xen-tests.service's ExecStart: run the checks in /root/tests.sh and report
# "XENTEST ALL DONE rc=N" for the host to collect (it then stops QEMU).
up() { cut -d' ' -f1 /proc/uptime; }
echo "XENTEST INFO phase systemd-up uptime=$(up) state=$(systemctl is-system-running)"
systemctl --failed --no-legend --plain | sed 's/^/XENTEST INFO failed unit: /'
# a heartbeat, so that the host's stall watchdog (meant for the rare silent boot
# hang) does not fire while a slow, loaded host creates domUs quietly; with the
# domains' states and CPU seconds, to see a stuck one
(while sleep 20; do
	m=$(pidof mtraced)
	echo "XENTEST INFO alive uptime=$(up) mtraced-cpu=$([ -n "$m" ] &&
		awk '{ printf "%.1fs", ($14 + $15) / 100 }' /proc/${m%% *}/stat) domains: $(xl list 2>/dev/null |
		awk 'NR > 1 { printf "%s:%s:%.0fs ", $1, $5, $6 }')"
	for f in /var/log/xen/guest-*.log; do
		[ -s "$f" ] && echo "XENTEST INFO   ${f##*/guest-}: $(tail -1 "$f" | cut -c1-120)"
	done
done) &
HB=$!
rc=0
sh /root/tests.sh || rc=1
kill $HB
echo "XENTEST INFO dom0 memory: $(free -m | awk '/^Mem/{print "used " $3 " MiB of " $2}')"
echo "XENTEST ALL DONE rc=$rc uptime=$(up)"
systemctl --no-block poweroff
