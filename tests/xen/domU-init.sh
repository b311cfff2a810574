#!/bin/sh
# domU /init: run the programs named on the kernel command line with real gntalloc,
# event channels and xenstore, and publish what they print in xenstore under
# data/mtrace-test/ (relative: this domain's home) for dom0 to check.
#   mtrace=PROG:ARG:...+PROG:ARG:...   colons for spaces (xl's `extra` is one string),
#                                      '+' between programs run one after the other
#   a program prefixed "go:" first waits for dom0 to write data/mtrace-test/go, one
#   prefixed "goN:" (N a digit) for data/mtrace-test/goN: a later program's own start
#   a program prefixed "bg:" runs in the background
export PATH=/bin:/sbin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
for m in xen-evtchn xen-gntalloc xen-gntdev; do insmod /lib/modules/$m.ko; done
# privcmd for Xen system time where the vDSO has no pvclock (docs/xen-time.md): in a
# domU, Linux lets its hypercalls through only when told to
insmod /lib/modules/xen-privcmd.ko unrestricted=1
list=
for w in $(cat /proc/cmdline); do
	case $w in mtrace=*) list=${w#mtrace=};; esac
done
echo "DOMU USERSPACE UP uptime=$(cut -d' ' -f1 /proc/uptime) programs=$list"
xenstore-write data/mtrace-test/state running
i=0
for prog in $(echo "$list" | tr '+' ' '); do
	cmd=$(echo "$prog" | tr ':' ' ')
	case $cmd in
	go\ *|go[0-9]\ *)
		key=${cmd%% *}
		cmd=${cmd#* }
		xen-guest wait $key;;
	bg\ *)
		${cmd#bg } > /tmp/bg.$i 2>&1 &
		i=$((i + 1))
		continue;;
	esac
	$cmd > /tmp/out.$i 2> /tmp/err.$i
	rc=$?
	cat /tmp/out.$i /tmp/err.$i
	# in chunks: xenstored takes at most 2048 bytes a node from a domU
	printf %s "$rc" > /tmp/rc.$i
	tail -c 1000 /tmp/err.$i > /tmp/err1k.$i
	xen-guest publish stdout-$i /tmp/out.$i
	xen-guest publish stderr-$i /tmp/err1k.$i
	xen-guest publish rc-$i /tmp/rc.$i
	i=$((i + 1))
done
xenstore-write data/mtrace-test/state done
# stay up until dom0 is done with us (it destroys us)
while :; do sleep 3600; done
