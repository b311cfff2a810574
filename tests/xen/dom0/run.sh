#!/bin/sh
# mtrace-xen-tests.service's ExecStart: run the checks in /root/tests.sh and report
# "XENTEST ALL DONE rc=N" for the host to collect (it then stops QEMU).
up() { cut -d' ' -f1 /proc/uptime; }
echo "XENTEST INFO phase systemd-up uptime=$(up) state=$(systemctl is-system-running)"
systemctl --failed --no-legend --plain | sed 's/^/XENTEST INFO failed unit: /'
# a heartbeat, so that the host's stall watchdog (meant for the rare silent boot
# hang) does not fire while a slow, loaded host creates domUs quietly; every minute
# with the domains' states and CPU seconds, to see a stuck one (bounded: the
# heartbeat itself must never wait)
(n=0; while sleep 20; do
	echo "XENTEST INFO alive uptime=$(up)"
	n=$((n + 1)); [ $((n % 3)) = 0 ] || continue
	timeout 10 sh /root/diag.sh
done) &
HB=$!
rc=0
sh /root/tests.sh || rc=1
kill $HB
echo "XENTEST INFO dom0 memory: $(free -m | awk '/^Mem/{print "used " $3 " MiB of " $2}')"
echo "XENTEST ALL DONE rc=$rc uptime=$(up)"
systemctl --no-block poweroff
