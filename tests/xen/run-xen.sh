#!/bin/bash
# run-xen.sh - boot a real Xen 4.17 + Debian 6.1 dom0 under qemu-system-x86_64 (TCG)
# with Debian 12's systemd as PID 1 and mtrace installed by `meson install`, and run
# mtrace on it: xenif-selftest, mtraced as mtraced.service/mtraced.socket, mtrace-cat,
# and domUs started with `xl create` running mtrace-load, the in-tree Lwt program and an
# OCaml user's Lwt program built here against the installed mtrace (tests/ocaml/outside).
# Checks print "XENTEST PASS|FAIL name" on the serial console; this script collects them
# and adds its own (the outside program's build, the checks of what dom0 sends).
#
# usage: run-xen.sh BUILD_DIR SOURCE_DIR
# env:   MTRACE_XEN_CACHE   .deb + extracted kernel/hypervisor cache
#                           (default /var/cache/mtrace-xen, else ~/.cache/mtrace-xen)
#        MTRACE_XEN_REQUIRE=1  a missing package is a failure, not a skip
#        MTRACE_XEN_KEEP=1  keep the temporary work directory
#        MTRACE_XEN_QUIET_MARK=FILE  created once dom0 says the phases that must not
#                           have company on the host (through the vcpu checks) are done;
#                           it holds QEMU's pid
#        STALL_S, BOOT_TIMEOUT, SMP, MEM, TCG_THREAD, SHOP_ROUNDS   see below
# exit:  0 pass, 1 fail, 77 skipped (the Debian packages or QEMU cannot be had)
set -uo pipefail

BUILD=$(cd "${1:?build dir}" && pwd) && SRC=$(cd "${2:?source dir}" && pwd) ||
	{ echo "usage: run-xen.sh BUILD_DIR SOURCE_DIR" >&2; exit 1; }
HERE=$SRC/tests/xen
XENV=4.17
SMP=${SMP:-2}
MEM=${MEM:-1536}		# MiB for QEMU: Xen + dom0 (512) + up to 3 domUs (160 each)
DOM0_MEM=${DOM0_MEM:-512M}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-1200}	# hard cap on one QEMU run (s); ~150-250 s on an idle host
TCG_THREAD=${TCG_THREAD:-single}
STALL_S=${STALL_S:-120}	# no serial output this long => dump Xen state, kill (a loaded host
			# boots the kernel silently for over a minute)
ARTIFACT=$BUILD/meson-logs/xen-serial.log
T0=$(date +%s.%N)

say() { printf '[%6.1fs] %s\n' "$(echo "$(date +%s.%N) - $T0" | bc)" "$*"; }
skip() {
	if [ "${MTRACE_XEN_REQUIRE:-0}" = 1 ]; then say "FAIL (xen_tests=enabled): $*"; exit 1; fi
	say "SKIP: $*"; exit 77
}
die() { say "FAIL: $*"; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mtrace-xen.XXXXXX")
QPID=
cleanup() {
	[ -n "$QPID" ] && kill -TERM "$QPID" 2>/dev/null
	[ -n "$QPID" ] && wait "$QPID" 2>/dev/null
	jobs -p | xargs -r kill 2>/dev/null
	if [ "${MTRACE_XEN_KEEP:-0}" = 1 ]; then say "work dir kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ------------------------------------------------------------ host tools
missing=()
command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
command -v cpio >/dev/null || missing+=(cpio)
command -v bc >/dev/null || missing+=(bc)
command -v python3 >/dev/null || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ]; then
		say "installing host packages: ${missing[*]}"
		DEBIAN_FRONTEND=noninteractive timeout 300 apt-get -o DPkg::Lock::Timeout=120 \
			install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
			skip "host packages ${missing[*]} missing and not installable"
	else
		skip "host packages ${missing[*]} missing (not root, cannot install)"
	fi
fi
command -v apt-get >/dev/null || skip "no apt-get: cannot fetch Debian's Xen and kernel"

# ------------------------------------------------------------ binaries under test
# The freshly built ones from this build dir; a missing one is a failure, not a skip.
declare -A BIN=(
	[xenif-selftest]=$BUILD/tests/xen/xenif-selftest
	[mtraced]=$BUILD/daemon/mtraced
	[mtrace-cat]=$BUILD/client/cat/mtrace-cat
	[mtrace-load]=$BUILD/guest/mtrace-load
	[xen-guest]=$BUILD/tests/xen/xen-guest
	[xen-verify]=$BUILD/tests/xen/xen-verify
	[sites-guest]=$BUILD/tests/xen/sites-guest
	[xen-clock]=$BUILD/tests/xen/xen-clock
)
# MTRACE_XEN_PHASES (default all) selects the dom0 test phases, for working on one
PHASES=${MTRACE_XEN_PHASES:-all}
for b in "${!BIN[@]}"; do
	if [ ! -x "${BIN[$b]}" ]; then
		[ "$PHASES" = all ] && die "not built: ${BIN[$b]}"
		say "note: ${BIN[$b]} not built (phases $PHASES)"
		unset "BIN[$b]"
	fi
done
for b in mtraced mtrace-cat mtrace-load; do
	[ -n "${BIN[$b]:-}" ] || continue
	ldd "${BIN[$b]}" 2>/dev/null | grep -q 'asan\|ubsan' &&
		skip "$b is a sanitizer build: real-Xen images need a plain build (-Dxen_tests=disabled)"
done

# ------------------------------------------------------------ Debian packages (cached)
CACHE=${MTRACE_XEN_CACHE:-/var/cache/mtrace-xen}
mkdir -p "$CACHE" 2>/dev/null && [ -w "$CACHE" ] || CACHE=$HOME/.cache/mtrace-xen
mkdir -p "$CACHE/debs" || die "cannot create cache $CACHE"
exec 9>"$CACHE/.lock"
flock -w 600 9 || die "cache $CACHE locked by another run for 10 minutes"

KVER=${KVER:-$(apt-cache depends linux-image-amd64 2>/dev/null |
	awk '/Depends: linux-image-[0-9]/{sub("linux-image-","",$2); print $2; exit}')}
if [ -z "$KVER" ] && [ "$(id -u)" = 0 ]; then
	timeout 300 apt-get update -qq >/dev/null 2>&1
	KVER=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/{sub("linux-image-","",$2); print $2; exit}')
fi
[ -n "$KVER" ] || skip "apt does not know linux-image-amd64 (no Debian archive configured)"
DEBS=(xen-hypervisor-$XENV-amd64 linux-image-$KVER busybox-static xen-utils-$XENV
	xen-utils-common xenstore-utils)
# dom0 runs Debian's systemd as PID 1: systemd and everything it depends on, resolved
# by apt as for an empty system (no dpkg status: nothing counts as installed), plus
# util-linux (setpriv, for the check as a second uid)
SYSD_ROOTS=(systemd util-linux)
resolve_sysd() {
	apt-get install -s -qq --no-install-recommends -o Dir::State::status=/dev/null \
		-o Debug::NoLocking=1 "${SYSD_ROOTS[@]}" 2>/dev/null | awk '/^Inst /{print $2}'
}
# (a resolution costs seconds: kept per state of apt's package lists)
lists_id() { stat -c '%n %s %Y' /var/lib/apt/lists/*_Packages* 2>/dev/null | md5sum | cut -c1-12; }
resolved=$CACHE/systemd-closure-$(lists_id)
if [ -s "$resolved" ]; then
	mapfile -t SYSD_DEBS < "$resolved"
else
	mapfile -t SYSD_DEBS < <(resolve_sysd)
	if [ ${#SYSD_DEBS[@]} -lt ${#SYSD_ROOTS[@]} ] && [ "$(id -u)" = 0 ]; then
		timeout 300 apt-get update -qq >/dev/null 2>&1
		mapfile -t SYSD_DEBS < <(resolve_sysd)
		resolved=$CACHE/systemd-closure-$(lists_id)
	fi
	[ ${#SYSD_DEBS[@]} -ge ${#SYSD_ROOTS[@]} ] && printf '%s\n' "${SYSD_DEBS[@]}" > "$resolved"
fi
[ ${#SYSD_DEBS[@]} -ge ${#SYSD_ROOTS[@]} ] || skip "apt cannot resolve ${SYSD_ROOTS[*]} and their dependencies"
DEBS+=("${SYSD_DEBS[@]}")
need=()
for p in "${DEBS[@]}"; do ls "$CACHE/debs/${p}"_*.deb >/dev/null 2>&1 || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
	say "apt-get download ${need[*]} -> $CACHE/debs"
	if ! (cd "$CACHE/debs" && timeout 600 apt-get download -q "${need[@]}" >/dev/null 2>&1); then
		[ "$(id -u)" = 0 ] && timeout 300 apt-get update -qq >/dev/null 2>&1
		(cd "$CACHE/debs" && timeout 600 apt-get download -q "${need[@]}" >/dev/null 2>&1) ||
			skip "cannot download ${need[*]} from the Debian archive"
	fi
fi
deb() { ls "$CACHE/debs/${1}"_*.deb | tail -1; }

# The host's libxen* are copied into the guests next to Debian's xl/xenstored: the two
# must be the same Xen release or xl fails in odd ways.
hostxen=$(dpkg-query -W -f='${Version}' libxenmisc$XENV 2>/dev/null || true)
debxen=$(dpkg-deb -f "$(deb xen-utils-$XENV)" Version)
[ -z "$hostxen" ] || [ "$hostxen" = "$debxen" ] ||
	say "WARNING: host libxen $hostxen differs from xen-utils $debxen"

# Extract only what the images need (the kernel .deb unpacks to 400 MB of modules).
X=$CACHE/x-$KVER-$debxen
if [ ! -f "$X/.done" ]; then
	say "extracting packages into $X"
	rm -rf "$X" && mkdir -p "$X"
	for p in xen-hypervisor-$XENV-amd64 busybox-static xen-utils-$XENV xen-utils-common \
		xenstore-utils; do
		dpkg -x "$(deb "$p")" "$X" || die "dpkg -x $p"
	done
	dpkg-deb --fsys-tarfile "$(deb linux-image-$KVER)" |
		tar -x -C "$X" --wildcards "./boot/vmlinuz-$KVER" "./boot/System.map-$KVER" \
			'*/kernel/drivers/xen/*' || die "extract kernel"
	# QEMU's multiboot loader wants the plain ELF32 hypervisor
	zcat "$X/boot/xen-$XENV-amd64.gz" > "$X/xen" || die "unpack xen"
	# Xen and libxenguest would unpack the bzImage's xz payload under TCG (~9.5 s
	# each): hand dom0 the plain ELF, and the domU a gzip'ed one (libxenguest takes
	# gzip'ed ELF, not zstd/xz outside a bzImage; gunzip in dom0 costs ~4 s)
	python3 - "$X/boot/vmlinuz-$KVER" "$X/vmlinux" <<'PY' || die "unpack vmlinux"
import lzma, sys
d = open(sys.argv[1], 'rb').read()
off = d.find(b'\xfd7zXZ\x00')
assert off > 0, "no xz payload in bzImage"
open(sys.argv[2], 'wb').write(lzma.LZMADecompressor().decompress(d[off:]))
PY
	gzip -6 -c "$X/vmlinux" > "$X/vmlinux.gz" || die "gzip vmlinux"
	touch "$X/.done"
fi
# systemd's root: every package of the closure unpacked (no docs, man pages, locales)
SYSROOT=$CACHE/sysroot-$({ echo 2; for p in "${SYSD_DEBS[@]}"; do basename "$(deb "$p")"; done; } | md5sum | cut -c1-12)
if [ ! -f "$SYSROOT/.done" ]; then
	say "unpacking systemd and its ${#SYSD_DEBS[@]} packages into $SYSROOT"
	rm -rf "$SYSROOT" && mkdir -p "$SYSROOT"
	for p in "${SYSD_DEBS[@]}"; do
		dpkg-deb --fsys-tarfile "$(deb "$p")" | tar -x -C "$SYSROOT" \
			--exclude=./usr/share/doc --exclude=./usr/share/man --exclude=./usr/share/info \
			--exclude=./usr/share/locale --exclude=./usr/share/lintian \
			--exclude=./usr/share/zsh --exclude=./usr/share/bash-completion \
			--exclude='./usr/lib/x86_64-linux-gnu/gconv/*' ||
			die "unpack $p"
	done
	touch "$SYSROOT/.done"
fi
flock -u 9
MODS=$(find "$X" -type d -path "*/modules/$KVER/kernel/drivers/xen" | head -1)
[ -n "$MODS" ] || die "xen modules not found in $X"

# ------------------------------------------------------------ initramfs images
# copy a binary and every library ldd resolves for it (host bookworm == guest bookworm)
copy_libs() { # root elf [destdir]: the libraries ldd resolves for it, unless the root
	# has them; those under destdir go where it installs them (its path without destdir)
	local lib to
	ldd "$2" | awk '/=> \//{print $3} /^[ \t]*\/lib64\//{print $1}' | while read -r lib; do
		to=$lib
		[ -n "${3:-}" ] && to=${lib#"$3"}
		[ -e "$1$to" ] || install -D -m755 "$(readlink -f "$lib")" "$1$to"
	done
}
copy_bin() { # root src dst
	install -D -m755 "$2" "$1$3" || die "copy $2"
	copy_libs "$1" "$2"
}
base_tree() { # root
	local r=$1
	mkdir -p "$r"/{bin,sbin,proc,sys,dev,run,tmp,etc,lib/modules,lib64,var/lib,var/log,root}
	[ -e "$r/var/run" ] || ln -s /run "$r/var/run"
	cp "$X/bin/busybox" "$r/bin/busybox"
	# one process for ~400 applet links (a fork each is slow on a loaded host)
	"$X/bin/busybox" --list | python3 -c '
import os, sys
d = sys.argv[1]
for a in sys.stdin.read().split():
    if not os.path.lexists(os.path.join(d, a)):
        os.symlink("busybox", os.path.join(d, a))' "$r/bin"
	for m in xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xenfs/xenfs; do
		cp "$MODS/$m.ko" "$r/lib/modules/" || die "module $m"
	done
	# glibc dlopen()s libgcc_s for pthread_cancel (xs_close on a handle with a
	# watch thread): without it the process aborts
	install -D -m644 /lib/x86_64-linux-gnu/libgcc_s.so.1 "$r/lib/x86_64-linux-gnu/libgcc_s.so.1"
	copy_bin "$r" "$X/usr/bin/xenstore" /bin/xenstore
	for a in read write ls rm watch exists list chmod; do ln -s xenstore "$r/bin/xenstore-$a"; done
}
# uncompressed: copying a cpio beats gunzip inside a TCG guest
mkcpio() { (cd "$1" && find . | cpio -o -H newc --quiet) > "$2"; }

# mtrace as `meson install` puts it on a system: dom0's image, and what the outside
# program below is built against
INSTALLED=0
if [ "$PHASES" = all ] || [ -n "${BIN[mtraced]:-}" ]; then
	say "meson install --destdir"
	"${MESON:-meson}" install -C "$BUILD" --no-rebuild --quiet --destdir "$WORK/dest" \
		>"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; die "meson install"; }
	INSTALLED=1
fi

# the host-side checks' XENTEST lines, joined to the serial log's after the boot
HOST_LINES=$WORK/host.lines
: > "$HOST_LINES"
host_fail() { echo "XENTEST FAIL $*" >> "$HOST_LINES"; say "FAIL (host): $*"; }

# The outside program (tests/ocaml/outside: an OCaml user's Lwt program), built as
# tests/ocaml/test-outside.sh builds it for the simulated domain: against this build as
# installed (OCAMLPATH, LIBRARY_PATH into the destdir), with the dune files taken
# verbatim from docs/ocaml.md's blocks starting `(lang dune`, `; lib/dune`,
# `; bin/dune`, in dune's default dev profile; the build must say nothing.  It runs in
# the OCaml domU after lwt_threads (ocaml-tests.sh), SHOP_ROUNDS rounds (about 2,000
# events a round on ~1,000: well within its 64-page ring of 8,192 records even if
# mtraced read nothing until the end).
SHOP_ROUNDS=${SHOP_ROUNDS:-2}
SHOP=$WORK/shop
SHOP_CMD=
build_outside() { # -> SHOP_CMD, the command line that runs it in the domU
	local ocamlpath libdir
	command -v dune >/dev/null || { host_fail "outside_builds_from_docs: no dune on the host"; return; }
	ocamlpath=$(find "$WORK/dest" -path '*/mtrace/META' | head -1)
	libdir=$(find "$WORK/dest" -name 'libmtrace-guest.so.*' | head -1)
	[ -n "$ocamlpath" ] && [ -n "$libdir" ] ||
		{ host_fail "outside_builds_from_docs: meson install put no findlib package mtrace or libmtrace-guest.so"; return; }
	ocamlpath=$(dirname "$(dirname "$ocamlpath")") libdir=$(dirname "$libdir")
	mkdir -p "$SHOP/lib" "$SHOP/bin"
	cp "$SRC/tests/ocaml/outside/lib/shop.ml" "$SHOP/lib/" && cp "$SRC/tests/ocaml/outside/bin/main.ml" "$SHOP/bin/" ||
		{ host_fail "outside_builds_from_docs: no tests/ocaml/outside"; return; }
	if ! python3 -B "$SRC/tests/ocaml/outside_check.py" stanzas "$SRC/docs/ocaml.md" "$SHOP" \
		>"$WORK/shop-stanzas.log" 2>&1; then
		host_fail "outside_builds_from_docs: docs/ocaml.md has no dune stanzas to take: $(cat "$WORK/shop-stanzas.log")"
		return
	fi
	if ! (cd "$SHOP" && OCAMLPATH=$ocamlpath LIBRARY_PATH=$libdir timeout 300 \
		dune build --root . ./bin/main.exe) >"$WORK/shop-build.log" 2>&1; then
		host_fail "outside_builds_from_docs: it does not build in dune's dev profile: $(head -c 1500 "$WORK/shop-build.log")"
		return
	fi
	if grep -q 'ppx_mtrace\|Warning\|Error' "$WORK/shop-build.log"; then
		host_fail "outside_builds_from_docs: the build warned: $(head -c 1500 "$WORK/shop-build.log")"
		return
	fi
	echo "XENTEST PASS outside_builds_from_docs (host: dev profile, docs/ocaml.md's stanzas, the installed mtrace)" >> "$HOST_LINES"
	# in the image as installed: the program, and libmtrace-guest.so where `meson
	# install` puts it, found through LD_LIBRARY_PATH as a user without ldconfig would
	install -D -m755 "$SHOP/_build/default/bin/main.exe" "$WORK/rootO/bin/shop" || die "copy the outside program"
	LD_LIBRARY_PATH=$libdir copy_libs "$WORK/rootO" "$SHOP/_build/default/bin/main.exe" "$WORK/dest"
	libdir=${libdir#"$WORK/dest"}
	case $libdir in *[!A-Za-z0-9/._-]*) die "libdir $libdir cannot go on a kernel command line";; esac
	SHOP_CMD="env LD_LIBRARY_PATH=$libdir shop $SHOP_ROUNDS"
}

say "building initramfs images in $WORK"
base_tree "$WORK/rootU"
for b in xenif-selftest mtrace-load xen-guest sites-guest xen-clock; do
	[ -n "${BIN[$b]:-}" ] && copy_bin "$WORK/rootU" "${BIN[$b]}" "/bin/$b"
done
install -m755 "$HERE/domU-init.sh" "$WORK/rootU/init"
mkcpio "$WORK/rootU" "$WORK/domU.cpio"
# the OCaml domU's own image (ocaml-tests.sh): the Lwt program of tests/ocaml, where the
# OCaml part is built (ocaml/meson.build: the gcc build), and xen-guest for its /init
OCAML_LWT=$BUILD/ocaml/_build/default/test/lwt_threads.exe
OCAML_SRC=$SRC/ocaml/test/lwt_threads.ml
if [ -x "$OCAML_LWT" ] && [ -n "${BIN[xen-guest]:-}" ]; then
	base_tree "$WORK/rootO"
	copy_bin "$WORK/rootO" "${BIN[xen-guest]}" /bin/xen-guest
	copy_bin "$WORK/rootO" "$OCAML_LWT" /bin/lwt_threads
	if [ "$INSTALLED" = 1 ]; then
		say "building the outside program against the installed mtrace"
		build_outside
	else
		say "note: mtrace not installed (phases $PHASES): no outside program"
	fi
	install -m755 "$HERE/domU-init.sh" "$WORK/rootO/init"
	mkcpio "$WORK/rootO" "$WORK/domU-ocaml.cpio"
else
	say "note: $OCAML_LWT not built: no OCaml domU"
fi

# dom0: Debian's systemd root, busybox for the shell tools it lacks, the Xen tools, and
# mtrace as `meson install` puts it on a system (units, sysusers.d, tmpfiles.d, config)
R0=$WORK/root0
mkdir -p "$R0"
cp -a "$SYSROOT/." "$R0/" || die "copy the systemd root"
rm -f "$R0/.done"
base_tree "$R0"
# busybox's init tools would signal PID 1 the busybox way: systemctl does this here
rm -f "$R0"/bin/{init,linuxrc,halt,poweroff,reboot}
XBIN=$X/usr/lib/xen-$XENV/bin
for b in xenstored xen-init-dom0 xl xenconsoled; do
	copy_bin "$R0" "$XBIN/$b" "/usr/lib/xen-$XENV/bin/$b"
done
for b in xenif-selftest xen-verify xen-clock; do
	[ -n "${BIN[$b]:-}" ] && copy_bin "$R0" "${BIN[$b]}" "/bin/$b"
done
# the debug info of the domU's sites-guest where an administrator puts it: by build-id
# under the default debug_dirs (the same file: it is built with -g)
if [ -n "${BIN[sites-guest]:-}" ]; then
	SITES_BID=$(readelf -n "${BIN[sites-guest]}" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
	[ -n "$SITES_BID" ] || die "sites-guest has no build-id"
	install -D -m644 "${BIN[sites-guest]}" \
		"$R0/usr/lib/debug/.build-id/${SITES_BID:0:2}/${SITES_BID:2}.debug"
fi
if [ "$INSTALLED" = 1 ]; then
	cp -a "$WORK/dest/." "$R0/" || die "copy the install"
	find "$WORK/dest" -type f -perm -u+x | while read -r f; do
		ldd "$f" >/dev/null 2>&1 && copy_libs "$R0" "$f"
	done
	unit=$(find "$R0" -path '*/systemd/system/mtraced.service' | head -1)
	[ -n "$unit" ] || die "meson install put no mtraced.service in the image"
	exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")
	[ -x "$R0$exe" ] || die "mtraced.service's ExecStart=$exe is not installed in the image"
fi
echo "$PHASES" > "$R0/root/phases"
# MTRACE_XEN_VCPU_COST=1: the vCPU phase also measures what the source costs mtraced
# (a figure for bench/README.md, 30 s of the quiet part of the run: not in every ./check)
[ "${MTRACE_XEN_VCPU_COST:-0}" = 1 ] && : > "$R0/root/vcpu-cost"
mkdir -p "$R0"/etc/xen "$R0"/var/lib/xen "$R0"/var/lib/xenstored "$R0"/var/log/xen "$R0"/var/lock
: > "$R0/etc/xen/xl.conf"
cp "$X/vmlinux.gz" "$WORK/domU.cpio" "$R0/root/"
[ -f "$WORK/domU-ocaml.cpio" ] && cp "$WORK/domU-ocaml.cpio" "$R0/root/"
[ -n "$SHOP_CMD" ] && echo "$SHOP_CMD" > "$R0/root/shop.cmd"
# the system around systemd: root, a machine id (not a first boot), the test's units
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$R0/etc/passwd"
printf 'root:x:0:\n' > "$R0/etc/group"
printf 'root:*:19000:0:99999:7:::\n' > "$R0/etc/shadow"
od -An -tx1 -N16 /dev/urandom | tr -d ' \n' > "$R0/etc/machine-id"; echo >> "$R0/etc/machine-id"
echo dom0 > "$R0/etc/hostname"
[ -e "$R0/etc/os-release" ] || cp /usr/lib/os-release "$R0/etc/os-release" 2>/dev/null
D0=$HERE/dom0
install -D -m644 "$D0/mtrace-test.sysusers" "$R0/etc/sysusers.d/mtrace-test.conf"
mkdir -p "$R0/etc/systemd/system/multi-user.target.wants"
for u in xen.service mtrace-xen-tests.service; do
	install -m644 "$D0/$u" "$R0/etc/systemd/system/$u"
	ln -s "../$u" "$R0/etc/systemd/system/multi-user.target.wants/$u"
done
ln -sf /lib/systemd/system/multi-user.target "$R0/etc/systemd/system/default.target"
# What a diskless serial-console dom0 without dbus or a login prompt does not run
# (masked as an administrator would; each program costs seconds under TCG): no
# logind, getty, utmp, ldconfig, catalog, sysctl, module loading (xen.service loads
# the Xen modules), static /dev nodes (devtmpfs has them); no block devices, fstab or
# init scripts for the generators to turn into units.  Kept: journald, sysusers,
# tmpfiles (mtrace ships snippets for both).
for u in getty.target systemd-logind.service ldconfig.service \
	systemd-journal-catalog-update.service systemd-update-utmp.service \
	systemd-update-utmp-runlevel.service systemd-random-seed.service \
	dev-hugepages.mount dev-mqueue.mount sys-kernel-config.mount sys-kernel-tracing.mount \
	sys-fs-fuse-connections.mount proc-sys-fs-binfmt_misc.automount sys-kernel-debug.mount \
	modprobe@.service systemd-modules-load.service systemd-sysctl.service \
	systemd-tmpfiles-setup-dev.service systemd-journal-flush.service; do
	ln -sf /dev/null "$R0/etc/systemd/system/$u"
done
mkdir -p "$R0/etc/systemd/system-generators"
for g in "$R0"/lib/systemd/system-generators/*; do
	ln -sf /dev/null "$R0/etc/systemd/system-generators/${g##*/}"
done
install -D -m755 "$D0/xen-up.sh" "$R0/usr/lib/mtrace-xen-test/xen-up.sh"
install -m755 "$D0/run.sh" "$R0/root/run.sh"
install -m644 "$D0/diag.sh" "$R0/root/diag.sh"
install -m755 "$HERE/dom0-tests.sh" "$R0/root/tests.sh"
install -m644 "$HERE/mtrace-tests.sh" "$R0/root/mtrace-tests.sh"
install -m644 "$HERE/service-tests.sh" "$R0/root/service-tests.sh"
install -m644 "$HERE/ocaml-tests.sh" "$R0/root/ocaml-tests.sh"
install -m644 "$HERE/clock-tests.sh" "$R0/root/clock-tests.sh"
install -m644 "$HERE/clock-reduce.awk" "$R0/root/clock-reduce.awk"
install -m644 "$HERE/vcpu-tests.sh" "$R0/root/vcpu-tests.sh"
mkcpio "$R0" "$WORK/dom0.cpio"
say "images: dom0 $(du -m "$WORK/dom0.cpio" | cut -f1) MB, domU $(du -m "$WORK/domU.cpio" | cut -f1) MB"

# ------------------------------------------------------------ boot
# bootscrub=0: idle vCPUs would scrub all RAM under TCG; spec-ctrl=no: pure overhead
XEN_CMD="console=com1 com1=115200,8n1 dom0_mem=$DOM0_MEM,max:$DOM0_MEM dom0_max_vcpus=$SMP loglvl=all guest_loglvl=all console_timestamps=boot bootscrub=0 spec-ctrl=no"
# systemd is PID 1 (rdinit: the image is the initramfs); firstboot: no prompts;
# show_status: a line per unit, for the log and for the stall watchdog while a slow
# host boots it.  DOM0_QUIET= (empty) shows the kernel's messages too.
DOM0_CMD="console=hvc0 earlyprintk=xen rdinit=/lib/systemd/systemd ${DOM0_QUIET-quiet} mitigations=off cryptomgr.notests systemd.firstboot=off systemd.show_status=true"

boot() { # log -> sets STALLED, RC
	local log=$1 fifo=$WORK/serial.in
	rm -f "$log" "$fifo"; mkfifo "$fifo"; exec 3<>"$fifo"
	# -cpu qemu64: TCG's SMAP emulation (-cpu max) kills a 64-bit PV dom0.
	# thread=single (TCG_THREAD): both vCPUs in one host thread.  With one thread per
	# vCPU (multi) on a loaded host, dom0 froze twice in three runs with a vCPU
	# runnable and the other pCPU idle (a lost wake-up); the guest still has 2 CPUs.
	# -append is verbatim; only the -initrd module list needs ',,' for a comma.
	timeout --signal=KILL "$BOOT_TIMEOUT" qemu-system-x86_64 \
		-accel tcg,thread="$TCG_THREAD" -M q35 -cpu qemu64 -smp "$SMP" -m "$MEM" \
		-nographic -no-reboot -monitor none -serial stdio \
		-kernel "$X/xen" -append "$XEN_CMD" \
		-initrd "$X/vmlinux ${DOM0_CMD//,/,,},$WORK/dom0.cpio" \
		<&3 > >(perl -MTime::HiRes=time -e '$|=1; $t0=time; while(<STDIN>){ s/\r//g; s/\e\[[0-9;?]*[a-zA-Z]|\ec//g; printf "%7.2f %s", time-$t0, $_ }' > "$log") 2>&1 &
	QPID=$!	# `timeout`: SIGTERM to it is forwarded to qemu, SIGKILL would orphan qemu
	STALLED=0
	local lastsz=-1 lastchange=$SECONDS sz shown=0
	while kill -0 "$QPID" 2>/dev/null; do
		sz=$(stat -c %s "$log" 2>/dev/null || echo 0)
		if [ "$sz" != "$lastsz" ]; then
			lastsz=$sz; lastchange=$SECONDS
			# progress for the person watching meson test -v
			local lines
			lines=$(grep -E 'XENTEST (PASS|FAIL|INFO phase)|USERSPACE UP' "$log" 2>/dev/null)
			[ -n "$lines" ] && printf '%s\n' "$lines" | tail -n +$((shown + 1)) | sed 's/^/  /'
			shown=$(printf '%s\n' "$lines" | grep -c .)
		elif [ $((SECONDS - lastchange)) -ge "$STALL_S" ]; then
			STALLED=1
			say "no serial output for ${STALL_S}s: dumping Xen state (debug keys 0 q r e)"
			printf '\001\001\001' >&3; sleep 1; printf '0' >&3; sleep 2; printf 'q' >&3
			sleep 2; printf 'r' >&3; sleep 1; printf 'e' >&3; sleep 3
			kill -TERM "$QPID" 2>/dev/null; break
		fi
		if [ -n "${MTRACE_XEN_QUIET_MARK:-}" ] && [ ! -e "$MTRACE_XEN_QUIET_MARK" ] &&
			grep -q 'XENTEST INFO quiet phases done' "$log"; then
			# (QEMU's pid in it: timeout's child, for ./check to lower its priority)
			say "the load-sensitive phases are done: $MTRACE_XEN_QUIET_MARK"
			ps -o pid= --ppid "$QPID" > "$MTRACE_XEN_QUIET_MARK" 2>/dev/null
			touch "$MTRACE_XEN_QUIET_MARK"
		fi
		if grep -qE 'XENTEST ALL DONE|Hardware Dom0 crashed|Panic on CPU|Kernel panic' "$log"; then
			sleep 0.5; kill -TERM "$QPID" 2>/dev/null; break
		fi
		sleep 0.3
	done
	wait "$QPID" 2>/dev/null
	QPID=
	exec 3>&-
	sleep 0.3
}

# What dom0 sends as "XENTEST BLOB name" lines (base64, between begin MD5 and end):
# checked here with the host's tools (python3, addr2line, readelf), on the same binary
# the domU ran; the results join the log as XENTEST lines.
blob() { # log name out -> 0 if complete and intact
	local md5
	md5=$(sed -n "s/.*XENTEST INFO blob $2 begin \([0-9a-f]*\).*/\1/p" "$1" | tail -1)
	sed -n "s/.*XENTEST BLOB $2 //p" "$1" | tr -d '\r' | base64 -d > "$3" 2>/dev/null
	[ -n "$md5" ] && [ "$(md5sum < "$3" | cut -c1-32)" = "$md5" ]
}
host_checks() { # log
	local log=$1 dom out
	grep -q 'XENTEST INFO blob sites-guest.out begin' "$log" || return 0
	dom=$(sed -n 's/.*XENTEST INFO sites domid \([0-9]*\).*/\1/p' "$log" | tail -1)
	if ! blob "$log" sites-guest.out "$WORK/sites.out" || ! blob "$log" sites.stats "$WORK/sites.stats"; then
		echo "XENTEST FAIL domU_sites_received: a blob from dom0 is incomplete" >> "$log"
		return
	fi
	if out=$(python3 "$SRC/tests/sites/check_sites.py" "$WORK/sites.out" "$WORK/sites.stats" \
		"${BIN[sites-guest]}" "$dom" 2>&1); then
		echo "XENTEST PASS domU_sites_match_addr2line_and_graph (host: $out)" >> "$log"
	else
		echo "XENTEST FAIL domU_sites_match_addr2line_and_graph: $(echo "$out" | head -c 1500)" >> "$log"
	fi
}

# the OCaml domU's account (ocaml-tests.sh) against the program's own and its source
ocaml_host_checks() { # log
	local log=$1 out
	grep -q 'XENTEST INFO blob ocaml.account begin' "$log" || return 0
	if ! blob "$log" ocaml.account "$WORK/ocaml.account"; then
		echo "XENTEST FAIL domU_ocaml_account_received: the blob from dom0 is incomplete" >> "$log"
		return
	fi
	if out=$(python3 -B "$HERE/check_ocaml_sites.py" "$WORK/ocaml.account" "$OCAML_SRC" 2>&1); then
		echo "XENTEST PASS domU_ocaml_events_exact_sites_match_source (host: $out)" >> "$log"
	else
		echo "XENTEST FAIL domU_ocaml_events_exact_sites_match_source: $(echo "$out" | head -c 1500)" >> "$log"
	fi
}

# the outside program's account (ocaml-tests.sh, shop_checks) against its own and its
# source, as tests/ocaml/test-outside.sh checks it
outside_host_checks() { # log
	local log=$1 out
	[ -n "$SHOP_CMD" ] || return 0
	if ! grep -q 'XENTEST INFO blob shop.account.gz begin' "$log"; then
		# the OCaml phase ran (or was wanted) and said nothing of the program
		grep -q 'XENTEST INFO phase ocaml-lwt-domU' "$log" &&
			echo "XENTEST FAIL domU_outside_received: no account of the outside program from dom0" >> "$log"
		return
	fi
	if ! blob "$log" shop.account.gz "$WORK/shop.account.gz" ||
		! gunzip -c "$WORK/shop.account.gz" > "$WORK/shop.account"; then
		echo "XENTEST FAIL domU_outside_received: the blob from dom0 is incomplete" >> "$log"
		return
	fi
	if out=$(python3 -B "$SRC/tests/ocaml/outside_check.py" account "$WORK/shop.account" "$SHOP" 2>&1); then
		echo "XENTEST PASS domU_outside_events_exact_sites_parents_match_source (host: $out)" >> "$log"
	else
		echo "XENTEST FAIL domU_outside_events_exact_sites_parents_match_source: $(echo "$out" | head -c 1500)" >> "$log"
	fi
}

# the clock phase's account (clock-tests.sh): one timeline, judged by check_clock.py
clock_host_checks() { # log
	local log=$1 out
	if ! grep -q 'XENTEST INFO blob clock.account.gz begin' "$log"; then
		grep -q 'XENTEST INFO phase clock ' "$log" &&
			echo "XENTEST FAIL clock_account_received: no account of the clock phase from dom0" >> "$log"
		return
	fi
	if ! blob "$log" clock.account.gz "$WORK/clock.account.gz" ||
		! gunzip -c "$WORK/clock.account.gz" > "$WORK/clock.account"; then
		echo "XENTEST FAIL clock_account_received: the blob from dom0 is incomplete" >> "$log"
		return
	fi
	out=$(python3 -B "$HERE/check_clock.py" "$WORK/clock.account" 2>&1)
	echo "$out" | sed -n 's/^\(PASS\|FAIL\) /XENTEST \1 /p' >> "$log"
	echo "$out" | grep -qE '^(PASS|FAIL) ' ||
		echo "XENTEST FAIL clock_checked: $(echo "$out" | head -c 1500)" >> "$log"
	# the checks can fail: the same account with mtraced's maps of CA moved (every host
	# time of CA, the pairs judged again by mtrace-cat's rule).  2 ms later puts CA 2 ms
	# off dom0's wall clock: its witness must refuse it (the pairs need not: under TCG
	# their uncertainty is 1.3-2.3 ms); 1 us past the pairs' margin (check_clock.py
	# --margin) violates a pair; 1 us past the cross-check's allowance (the two
	# uncertainties, less the difference it found) fails the cross-check
	local ca late agree missed= what=
	ca=$(awk '$1 == "domains" { print $2 }' "$WORK/clock.account")
	late=$(python3 -B "$HERE/check_clock.py" --margin "$ca" "$WORK/clock.account" | cut -d' ' -f2)
	agree=$(echo "$out" | sed -n "s/^PASS mtraced_map_agrees_with_dom0_sample_dom$ca (mtraced's offset - the host's: +*\([-0-9]*\) ns, allowed +-\([0-9]*\) ns.*/\2 - \1 + 1000/p")
	refused() { # ns check...: each check must fail with CA's maps moved ns later
		local by=$1 bad c
		shift
		python3 -B "$HERE/check_clock.py" --shift-mtraced "$ca" "$by" "$WORK/clock.account" \
			> "$WORK/clock.shifted"
		bad=$(python3 -B "$HERE/check_clock.py" "$WORK/clock.shifted" 2>&1)
		for c; do
			echo "$bad" | grep -q "^FAIL $c" || missed="$missed $c($by ns)"
		done
		what="$what; moved $by ns: $(echo "$bad" | grep -c '^FAIL') checks failed ($(echo "$bad" |
			grep '^FAIL' | cut -d' ' -f2 | tr -d ':' | tr '\n' ' '))"
	}
	if [ -n "$ca" ] && [ -n "$late" ] && [ -n "$agree" ]; then
		refused 2000000 mtraced_timeline_within_1ms_of_dom0_dom$ca
		refused $((late + 1000)) mtraced_send_before_receive
		refused $((agree)) mtraced_map_agrees_with_dom0_sample_dom$ca
	else
		missed="no margins for dom$ca (pairs '$late', cross-check '$agree')"
	fi
	if [ -z "$missed" ]; then
		echo "XENTEST PASS clock_checks_refuse_moved_maps (a pair violated past ${late} ns$what)" >> "$log"
	else
		echo "XENTEST FAIL clock_checks_refuse_moved_maps: not refused:$missed$what" >> "$log"
	fi
}

verdict() { # log -> 0 pass
	local log=$1
	local pass fail
	pass=$(grep -c 'XENTEST PASS' "$log")
	fail=$(grep -c 'XENTEST FAIL' "$log")
	say "checks: pass=$pass fail=$fail stalled=$STALLED"
	[ "$STALLED" = 0 ] && [ "$fail" = 0 ] && [ "$pass" -gt 0 ] &&
		grep -q 'XENTEST ALL DONE rc=0' "$log"
}

mkdir -p "$(dirname "$ARTIFACT")"
result=1
for attempt in 1 2; do
	LOG=$WORK/serial-$attempt.log
	say "booting Xen $debxen + Linux $KVER under QEMU (TCG, smp $SMP, $MEM MiB), attempt $attempt"
	QS=$SECONDS
	boot "$LOG"
	say "qemu ran $((SECONDS - QS)) s"
	host_checks "$LOG"
	ocaml_host_checks "$LOG"
	outside_host_checks "$LOG"
	clock_host_checks "$LOG"
	cat "$HOST_LINES" >> "$LOG"
	cp "$LOG" "$ARTIFACT"
	if verdict "$LOG"; then result=0; break; fi
	# a silent stall (even dom0's heartbeat stopped) is the known rare TCG hang, at
	# boot or later: retry once
	if [ "$STALLED" = 1 ] && [ "$attempt" = 1 ]; then
		say "RETRY: dom0 stalled silently (known rare TCG hang); log of attempt 1:"
		tail -15 "$LOG" | sed 's/^/  | /'
		cp "$LOG" "${ARTIFACT%.log}-stalled.log"
		continue
	fi
	break
done

echo "------------------------------------------------ XENTEST lines"
grep -E 'XENTEST (PASS|FAIL|INFO)' "$ARTIFACT" | sed 's/^ *[0-9.]* //'
if [ $result = 0 ]; then
	say "RESULT: PASS (serial log: $ARTIFACT)"
else
	echo "------------------------------------------------ tail of the serial log"
	tail -60 "$ARTIFACT"
	say "RESULT: FAIL (serial log kept: $ARTIFACT)"
fi
exit $result
