#!/bin/sh
# domU /init: run the guest program named on the kernel command line
# (mtrace=PROG:ARG:ARG..., colons for spaces since xl's `extra` is one string) with
# real gntalloc, event channels and xenstore, then publish its stdout in xenstore
# under data/mtrace-test/ (relative: this domain's home) for dom0 to check.
export PATH=/bin:/sbin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
for m in xen-evtchn xen-gntalloc xen-gntdev; do insmod /lib/modules/$m.ko; done
cmd=
for w in $(cat /proc/cmdline); do
	case $w in mtrace=*) cmd=$(echo "${w#mtrace=}" | tr ':' ' ');; esac
done
echo "DOMU USERSPACE UP uptime=$(cut -d' ' -f1 /proc/uptime) cmd=$cmd"
xenstore-write data/mtrace-test/state running
# "go:PROG..." waits for dom0 to write data/mtrace-test/go first (for programs that
# cannot wait themselves, like mtrace-load)
case $cmd in
go\ *)
	cmd=${cmd#go }
	until xenstore-read data/mtrace-test/go >/dev/null 2>&1; do sleep 0.1; done;;
esac
$cmd > /tmp/out 2> /tmp/err
rc=$?
cat /tmp/out /tmp/err
# one xenstore value holds at most 4096 bytes
xenstore-write data/mtrace-test/stdout "$(head -c 4000 /tmp/out)"
xenstore-write data/mtrace-test/stderr "$(tail -c 2000 /tmp/err)"
xenstore-write data/mtrace-test/rc "$rc"
xenstore-write data/mtrace-test/state done
# stay up until dom0 is done with us (it destroys or shuts us down)
while :; do sleep 3600; done
