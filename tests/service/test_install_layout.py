#!/usr/bin/env python3
"""meson install into a DESTDIR puts every piece where a system expects it (binaries,
units, sysusers.d/tmpfiles.d, the sample config, man pages, the guest library with
its headers and pkg-config file) and nothing anywhere else; then a guest program is
built from the INSTALLED header and mtrace-guest.pc alone and run in a simulated
domain, traced by the installed mtraced and read by the installed mtrace-cat."""
import filecmp
import glob
import os
import shlex
import subprocess

import svc
from svc import Env, Notify, log

E = os.environ
env = Env()
D = env.path("dest")
r = env.run([E["MESON"], "install", "-C", svc.BUILD, "--no-rebuild", "--quiet",
             "--destdir", D], timeout=60)


def dest(path):
    return D + path


man = E["MTRACE_MANDIR"]
expected = [
    E["MTRACE_SBINDIR"] + "/mtraced",
    E["MTRACE_BINDIR"] + "/mtrace-cat",
    E["MTRACE_BINDIR"] + "/mtrace-top",
    E["MTRACE_BINDIR"] + "/mtrace-simxen",
    E["MTRACE_BINDIR"] + "/mtrace-load",
    E["MTRACE_UNITDIR"] + "/mtraced.service",
    E["MTRACE_UNITDIR"] + "/mtraced.socket",
    E["MTRACE_SYSUSERSDIR"] + "/mtrace.conf",
    E["MTRACE_TMPFILESDIR"] + "/mtrace.conf",
    E["MTRACE_SYSCONFDIR"] + "/mtrace/mtraced.conf",
    E["MTRACE_INCLUDEDIR"] + "/mtrace/mtrace-guest.h",
    E["MTRACE_INCLUDEDIR"] + "/mtrace/mtrace-ring.h",
    E["MTRACE_LIBDIR"] + "/pkgconfig/mtrace-guest.pc",
    E["MTRACE_LIBDIR"] + "/libmtrace-guest.so",
    E["MTRACE_LIBDIR"] + "/libmtrace-guest.a",
    man + "/man8/mtraced.8",
    man + "/man1/mtrace-top.1",
    man + "/man1/mtrace-cat.1",
    man + "/man1/mtrace-simxen.1",
    man + "/man1/mtrace-load.1",
    man + "/man3/mtrace-guest.3",
    man + "/man7/mtrace-ring.7",
]
missing = [p for p in expected if not os.path.exists(dest(p))]
if missing:
    svc.fail("not installed: " + ", ".join(missing))
for p in expected[:5]:
    if not os.access(dest(p), os.X_OK):
        svc.fail(p + " is not executable")

# Nothing lands outside the prefix, sysconfdir and systemd's directories.
roots = [E["MTRACE_PREFIX"], E["MTRACE_SYSCONFDIR"], E["MTRACE_UNITDIR"],
         E["MTRACE_SYSUSERSDIR"], E["MTRACE_TMPFILESDIR"]]
stray = []
for top, _, files in os.walk(D):
    for f in files:
        p = os.path.join(top, f)[len(D):]
        if not any(p.startswith(r.rstrip("/") + "/") for r in roots):
            stray.append(p)
if stray:
    svc.fail("installed outside %s: %s" % (roots, stray))

# Every installed program has a man page.
progs = glob.glob(dest(E["MTRACE_BINDIR"]) + "/*") + glob.glob(dest(E["MTRACE_SBINDIR"]) + "/*")
for p in progs:
    name = os.path.basename(p)
    if not glob.glob(dest(man) + "/man[18]/%s.[18]" % name):
        svc.fail("no man page for " + name)

if not filecmp.cmp(dest(E["MTRACE_SYSCONFDIR"] + "/mtrace/mtraced.conf"),
                   os.path.join(svc.SOURCE, "systemd", "mtraced.conf"), shallow=False):
    svc.fail("installed mtraced.conf differs from systemd/mtraced.conf")
unit = open(dest(E["MTRACE_UNITDIR"] + "/mtraced.service")).read()
want = "ExecStart=%s/mtraced --foreground -c %s/mtrace/mtraced.conf" % (E["MTRACE_SBINDIR"],
                                                            E["MTRACE_SYSCONFDIR"])
if want not in unit:
    svc.fail("installed unit lacks %r" % want)
log("layout ok: %d files checked, nothing outside %s" % (len(expected), roots))

# Build a guest from the installed header and .pc only.  PKG_CONFIG_SYSROOT_DIR puts
# the DESTDIR in front of the -I/-L paths; nothing may point into the source or build
# tree.
pc_env = dict(E, PKG_CONFIG_PATH=dest(E["MTRACE_LIBDIR"] + "/pkgconfig"),
              PKG_CONFIG_SYSROOT_DIR=D)
flags = env.run(["pkg-config", "--cflags", "--libs", "mtrace-guest"], env=pc_env).stdout
flags = shlex.split(flags.decode())
for f in flags:
    if f.startswith(("-I", "-L")) and not f[2:].startswith(D):
        svc.fail("pkg-config flag %s is outside the DESTDIR" % f)
cc = shlex.split(E.get("MTRACE_CC", "cc"))
san = E.get("MTRACE_SANITIZE", "none")
san_flags = ["-fsanitize=" + san] if san not in ("", "none") else []
exe = env.path("installed-guest")
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "installed-guest.c")
env.run(cc + ["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", exe, src] + flags +
        san_flags + ["-Wl,-rpath," + dest(E["MTRACE_LIBDIR"])], timeout=60)
ldd = env.run(["ldd", exe]).stdout.decode()
line = [l for l in ldd.splitlines() if "libmtrace-guest" in l]
if not line or D not in line[0]:
    svc.fail("installed-guest does not use the installed libmtrace-guest: %s" % ldd)
log("guest program built from the installed header and pkg-config file")

# The same program with libmtrace-guest.a linked in, as mtrace-guest(3) says:
# `pkg-config --static` adds what the archive needs (the Xen libraries, -pthread, -lm);
# those stay shared, only libmtrace-guest is static.
page = open(os.path.join(svc.SOURCE, "docs", "man", "mtrace-guest.3")).read()
if "pkg-config --static --libs mtrace-guest" not in page:
    svc.fail("mtrace-guest.3 does not say how to link libmtrace-guest.a (pkg-config --static)")
sflags = shlex.split(env.run(["pkg-config", "--static", "--cflags", "--libs", "mtrace-guest"],
                             env=pc_env).stdout.decode())
if "-lmtrace-guest" not in sflags:
    svc.fail("pkg-config --static --libs lacks -lmtrace-guest: %s" % sflags)
sflags = [x for f in sflags
          for x in (["-Wl,-Bstatic", f, "-Wl,-Bdynamic"] if f == "-lmtrace-guest" else [f])]
exe_static = env.path("installed-guest-static")
env.run(cc + ["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", exe_static, src] + sflags +
        san_flags, timeout=60)
ldd = env.run(["ldd", exe_static]).stdout.decode()
if "libmtrace-guest" in ldd:
    svc.fail("installed-guest-static still loads libmtrace-guest: %s" % ldd)
log("guest program linked with the installed libmtrace-guest.a (pkg-config --static)")

# Run it in a simulated domain with the installed daemon and client.
os.environ["LD_LIBRARY_PATH"] = dest(E["MTRACE_LIBDIR"])
os.environ["MTRACE_SIMXEN"] = dest(E["MTRACE_BINDIR"] + "/mtrace-simxen")
sim = env.sim_start()
domid = env.guest("installed", [exe, "installed-label", "30"])
env.guest("installed-static", [exe_static, "static-label", "30"])
notify = Notify(env.path("notify"))
sock = env.path("mtraced.sock")
conf = svc.sample_config(env, {"log_level": "info"})
d = svc.start_activated(env, "mtraced",
                        [dest(E["MTRACE_SBINDIR"] + "/mtraced"), "-f", "-c", conf,
                         "--backend", "sim", "--sim-dir", sim], sock, notify)
notify.wait(env, "READY=1", lambda m: m == "READY=1")
env.spawn("cat", svc.cat_argv(dest(E["MTRACE_BINDIR"] + "/mtrace-cat"), sock))
env.wait_for("installed-label in the client's stream",
             lambda: "installed-label" in env.output("cat"), timeout=20)
env.wait_for("static-label in the client's stream",
             lambda: "static-label" in env.output("cat"), timeout=20)
log("its events (and the static build's) reach the installed mtrace-cat through the "
    "installed mtraced")
print("ok")
