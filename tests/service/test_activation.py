#!/usr/bin/env python3
"""mtraced started the way mtraced.socket + mtraced.service start it: the listening
socket is inherited (sd_listen_fds), NOTIFY_SOCKET is set.  Checks that READY=1 and a
STATUS= line with the guest and client counts arrive, that the daemon gave up its
privileges after start-up, that a client is served on the inherited socket (and that
the daemon did not make a socket of its own), and that SIGTERM gives STOPPING=1, a
Goodbye to the client and exit status 0; then that a second instance handed the same
socket (a restart) serves a client that connected while none ran.  Runs on the
simulated Xen with a guest (mtrace-load); the configuration is the installed sample
with every key made live."""
import os
import signal
import time

import svc
from svc import Env, Notify, fail, log

env = Env()
mtraced = svc.prog("MTRACE_MTRACED", "daemon/mtraced")
load = svc.prog("MTRACE_LOAD", "guest/mtrace-load")
cat = svc.prog("MTRACE_CAT", "client/cat/mtrace-cat")

sim = env.sim_start()
domid = env.guest("svc-load", svc.load_argv(load, 60))
log("guest svc-load is dom%s" % domid)

own_sock = env.path("own.sock")
conf = svc.sample_config(env, {"status_interval_ms": 100, "socket_path": own_sock,
                               "log_level": "info"})
notify = Notify(env.path("notify"))
sock = env.path("mtraced.sock")
# Held here for the whole test, as systemd holds it for mtraced.socket.
lsock = svc.listen_socket(sock)
argv = [mtraced, "-f", "-c", conf, "--backend", "sim", "--sim-dir", sim]
d = svc.start_activated(env, "mtraced", argv, sock, notify, lsock)

i, _ = notify.wait(env, "READY=1", lambda m: m == "READY=1")
log("READY=1 received")
notify.wait(env, "STATUS= counting 1 guest", lambda m: svc.status_counts(m)[0] == 1)
log("STATUS with the guest: %s" % [m for m in notify.msgs if m.startswith("STATUS=")][-1])

if os.path.exists(own_sock):
    env.die("daemon created %s although it was handed a socket" % own_sock)

# After start-up it keeps no privilege it does not need (drop_privileges = yes).
st = svc.proc_status(d.pid)
if st.get("NoNewPrivs") != "1":
    env.die("NoNewPrivs is %r after start-up" % st.get("NoNewPrivs"))
for k in ("CapEff", "CapPrm", "CapAmb"):
    if int(st.get(k, "0"), 16) != 0:
        env.die("%s is %s after start-up" % (k, st[k]))
log("privileges dropped: NoNewPrivs=1, no capabilities")

c = env.spawn("cat", svc.cat_argv(cat, sock))
env.wait_for("the client to receive svc-load's events",
             lambda: svc.cat_saw_events(env.output("cat"), domid), timeout=20)
log("client served on the inherited socket")
notify.wait(env, "STATUS= counting 1 client", lambda m: svc.status_counts(m)[1] == 1)

n_before = len(notify.msgs)
os.kill(d.pid, signal.SIGTERM)
notify.wait(env, "STOPPING=1", lambda m: m == "STOPPING=1", start=0)
try:
    rc = d.wait(15)
except Exception:
    env.die("mtraced did not exit within 15 s of SIGTERM")
if rc != 0:
    env.die("mtraced exited %s after SIGTERM" % rc)
log("SIGTERM: STOPPING=1 and exit 0")

try:
    c.wait(10)
except Exception:
    env.die("the client did not see the end of the stream")
if not svc.cat_saw_goodbye(env.output("cat")):
    env.die("the client got no Goodbye")
log("client told goodbye")

# The socket belongs to the socket unit: still there, and a client connecting while
# the service is down waits in its backlog and is served by the next instance
# (systemctl restart, Restart=on-failure).
if not os.path.exists(sock):
    env.die("mtraced removed the socket it was handed")
c2 = env.spawn("cat2", svc.cat_argv(cat, sock))
time.sleep(0.3)
notify2 = Notify(env.path("notify2"))
d2 = svc.start_activated(env, "mtraced2", argv, sock, notify2, lsock)
notify2.wait(env, "READY=1 from the second instance", lambda m: m == "READY=1")
env.wait_for("the waiting client to be served by the second instance",
             lambda: svc.cat_saw_events(env.output("cat2"), domid), timeout=20)
os.kill(d2.pid, signal.SIGTERM)
try:
    rc = d2.wait(15)
except Exception:
    env.die("second mtraced did not exit within 15 s of SIGTERM")
if rc != 0:
    env.die("second mtraced exited %s after SIGTERM" % rc)
log("restart on the same socket: waiting client served, clean exit again")
print("ok")
