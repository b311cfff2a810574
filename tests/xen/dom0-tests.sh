#!/bin/sh
# The real-Xen checks, run in dom0 by /init.  Each check prints one
# "XENTEST PASS name" or "XENTEST FAIL name: why" line; exit status 1 if any failed.
RC=0
PHASES=$(cat /root/phases 2>/dev/null || echo all)
want() { case ",$PHASES," in *,all,*|*,$1,*) return 0;; esac; return 1; }
pass() { echo "XENTEST PASS $1"; }
fail() { echo "XENTEST FAIL $*"; RC=1; }
info() { echo "XENTEST INFO $*"; }
up() { cut -d' ' -f1 /proc/uptime; }
phase() { info "phase $1 uptime=$(up)"; }

# libxenguest gunzips the domU kernel on every `xl create` (~4 s under TCG): once is
# enough.  Renamed when complete, for domu() below.
(gunzip -c /root/vmlinux.gz > /run/vmlinux.part && mv /run/vmlinux.part /run/vmlinux) &

# start a PV domU whose /init runs the given command; prints its domid
# (DOMU_MEM: MB, default 96; DOMU_RAMDISK: its image, default the common one)
domu() { # name cmd...
	name=$1; shift
	cmd=$(echo "$*" | sed 's/ + /+/g' | tr ' ' ':')
	cat > /run/$name.cfg <<CFG
name = "$name"
type = "pv"
memory = ${DOMU_MEM:-96}
vcpus = 1
kernel = "/run/vmlinux"
ramdisk = "${DOMU_RAMDISK:-/root/domU.cpio}"
extra = "console=hvc0 rdinit=/init ${DOMU_QUIET-quiet} mitigations=off cryptomgr.notests mtrace=$cmd"
on_poweroff = "destroy"
on_crash = "destroy"
CFG
	# (waits poll at 0.5 s: each turn forks, which is dear in a PV dom0 under TCG and
	# takes the CPU the booting domUs need)
	i=0; while [ ! -f /run/vmlinux ] && [ $i -lt 600 ]; do sleep 0.5; i=$((i+1)); done
	for try in 1 2; do
		if xl create -q /run/$name.cfg >/run/$name.xl 2>&1; then
			echo "XENTEST INFO created $name at $(up)" >&2
			xl domid "$name"
			return 0
		fi
		sed "s/^/[xl $name] /" /run/$name.xl >&2
		xl destroy "$name" >/dev/null 2>&1
	done
	return 1
}
# the domid of a domU created in the background (waits for it, up to 10 min on a
# loaded host where one `xl create` can take a minute)
dom_of() { # name
	i=0
	while [ ! -f /run/dom.$1 ] && [ $i -lt 1200 ]; do sleep 0.5; i=$((i+1)); done
	d=$(cat /run/dom.$1 2>/dev/null)
	[ -n "$d" ] && echo "$d"
}
dump_domu() { # name
	sed "s/^/[$1 console] /" /var/log/xen/guest-$1.log 2>/dev/null | tail -${2:-30}
}

# -------------------------------------------------------------------------------
# mtraced first, then every domU is created in the background while the dom0-only
# checks run: domain building is the slow part under TCG
if want mtrace; then
	. /root/mtrace-tests.sh
	. /root/service-tests.sh
	phase mtrace-start
	start_mtraced && pass mtraced_starts || fail mtraced_starts
fi
if want clock; then
	[ -n "${SOCK:-}" ] || . /root/mtrace-tests.sh
	. /root/clock-tests.sh
fi
# Booting a domU is what costs most under TCG, so few domUs do several jobs: with
# mtrace, the peer side of check 2 runs in the background of domU B.
(
	if want mtrace; then
		for n in mtA mtB mtLO; do
			[ $n = mtA ] && DOMU_QUIET= || unset DOMU_QUIET
			eval "domu $n \$DOMU_$n" > /run/dom.$n.tmp; mv /run/dom.$n.tmp /run/dom.$n
			[ $n = mtB ] && ln -s dom.mtB /run/dom.peer
		done
	elif want peer; then
		domu peer xenif-selftest domu > /run/dom.peer.tmp; mv /run/dom.peer.tmp /run/dom.peer
	fi
	# the clock phase's two: they boot now and wait for their go key
	if want clock; then
		for n in mtCA mtCB; do
			eval "domu $n \$DOMU_$n" > /run/dom.$n.tmp; mv /run/dom.$n.tmp /run/dom.$n
		done
	fi
) &

# 1. the real backend of the seam, on its own: everything looped back to dom0
if want selftest; then
	phase selftest
	xenif-selftest selftest || RC=1
fi

# 2. the seam between dom0 and a real domU: grant map, event channel round trip,
#    and `xl destroy` while dom0 still maps the domU's pages
if want peer; then
	phase peer
	if id=$(dom_of peer); then
		pass xl_create_peer
		# a domU shared with the mtrace checks is not destroyed here
		want mtrace && nd=--no-destroy || nd=
		xenif-selftest peer "$id" xen $nd || { RC=1; dump_domu peer; }
	else
		fail xl_create_peer
	fi
fi

if want mtrace; then
	mtrace_checks
	for n in mtA mtB mtLO; do
		[ $RC = 0 ] || dump_domu $n 15
		xl destroy $n 2>/dev/null
	done
	# where a domU's boot goes under TCG: mtA boots without "quiet"
	grep -E '^\[ *[0-9]+\.[0-9]+\]' /var/log/xen/guest-mtA.log 2>/dev/null |
		awk '{ t = substr($0, 2, index($0, "]") - 2) + 0; if (t - last >= 0.5 || NR <= 2) print; last = t }' |
		head -60 | sed 's/^/XENTEST INFO mtA boot | /'
fi

# one timeline: two domUs on two clocks signalling each other, and a dom0 witness
# (clock-tests.sh), once the mtrace domUs are gone
want clock && clock_checks
# mtraced's hypervisor source (issue 38): Xen's trace buffers against xl vcpu-list, two
# domUs pinned to one physical CPU, then free on two (vcpu-tests.sh)
if want vcpu; then
	[ -n "${SOCK:-}" ] || . /root/mtrace-tests.sh
	. /root/vcpu-tests.sh
	vcpu_checks
	[ $RC = 0 ] || { dump_domu vH 15; dump_domu vL 15; }
	xl destroy vH 2>/dev/null; xl destroy vL 2>/dev/null
fi
# What follows may have company on the host: run-xen.sh tells ./check (MTRACE_XEN_QUIET_MARK),
# which starts the sanitizer build's tests beside the rest.  What came before may not:
# the vcpu checks hold Xen's figures to 10 %, and QEMU's share of the host is in them.
info "quiet phases done uptime=$(up)"

# the Lwt program through ppx_mtrace in a domU of its own, once the others are gone
# (ocaml-tests.sh); its image is there only where the OCaml part was built
if want ocaml; then
	if [ -f /root/domU-ocaml.cpio ]; then
		[ -n "${SOCK:-}" ] || . /root/mtrace-tests.sh
		. /root/ocaml-tests.sh
		ocaml_checks
	else
		info "ocaml: the OCaml program was not built: no OCaml domU"
	fi
fi
exit $RC
