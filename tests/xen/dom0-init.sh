#!/bin/sh
# dom0 /init: bring up the Xen control plane (no udev, no systemd), run the tests in
# /root/tests.sh, and report "XENTEST ALL DONE rc=N" for the host to collect.
export PATH=/bin:/sbin:/usr/lib/xen-4.17/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run; mkdir -p /run/xen /run/xenstored /run/mtrace
mount -t tmpfs tmpfs /tmp
# xenconsoled needs ptys: without devpts `xl create` times out on the console
mkdir -p /dev/pts; mount -t devpts -o ptmxmode=666 devpts /dev/pts
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
echo "DOM0 USERSPACE UP uptime=$(cut -d' ' -f1 /proc/uptime)"
# Debian builds these as modules without dependencies between them, except
# xenfs -> privcmd, hence the order
for m in xen-evtchn xen-privcmd xenfs xen-gntdev xen-gntalloc; do
	insmod /lib/modules/$m.ko || echo "XENTEST FAIL insmod_$m"
done
mount -t xenfs xenfs /proc/xen
# the /usr/sbin wrappers look at the running Xen version; call the real binaries
xenstored --pid-file /run/xenstored.pid
i=0; while [ ! -S /run/xenstored/socket ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
xen-init-dom0 >/dev/null || echo "XENTEST FAIL xen_init_dom0"
# dom0 first: on a loaded host the domUs' vCPUs would starve dom0, and xl create gives
# up when xenconsoled does not answer within 10 s ("console tty: timed out")
xl sched-credit2 -d 0 -w 2048 >/dev/null 2>&1 || echo "XENTEST INFO sched-credit2 failed"
xenconsoled --log=guest --log-dir=/var/log/xen
renice -n -10 -p $(pidof xenconsoled) >/dev/null || echo "XENTEST INFO renice failed"
echo "XENTEST INFO phase control-plane-up uptime=$(cut -d' ' -f1 /proc/uptime)"
# a heartbeat, so that the host's stall watchdog (meant for the rare silent boot
# hang) does not fire while a slow, loaded host creates domUs quietly
(while sleep 20; do echo "XENTEST INFO alive uptime=$(cut -d' ' -f1 /proc/uptime)"; done) &
HB=$!
rc=0
sh /root/tests.sh || rc=1
kill $HB
echo "XENTEST ALL DONE rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
poweroff -f
