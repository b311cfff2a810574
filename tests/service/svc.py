"""svc.py - shared by the service tests written in Python.

A test gets a fresh temporary directory, starts real processes (the simulated Xen,
guests, mtraced, clients), and everything it started is killed when it ends, also when
meson's timeout sends SIGTERM.  mtraced is started the way systemd starts it: a
listening socket handed over per sd_listen_fds(3) and NOTIFY_SOCKET set.
"""
import atexit
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BUILD = os.environ.get("MTRACE_BUILD_ROOT", "")
SOURCE = os.environ.get("MTRACE_SOURCE_ROOT", "")


def prog(var, rel):
    """Path of a program: $var (set by meson) or its place in the build tree."""
    p = os.environ.get(var) or os.path.join(BUILD, rel)
    if not os.access(p, os.X_OK):
        fail("%s not built (looked for %s)" % (os.path.basename(rel), p))
    return p


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr, flush=True)
    sys.exit(1)


def log(msg):
    print(msg, flush=True)


class Env:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="mtrace-service.")
        self.procs = []
        self.sim_dir = None
        self.simxen = None
        atexit.register(self.cleanup)
        # meson's timeout and ^C: clean up through atexit.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        signal.signal(signal.SIGINT, lambda *_: sys.exit(130))

    def path(self, name):
        return os.path.join(self.dir, name)

    # -- processes -------------------------------------------------------------

    def spawn(self, name, argv, env=None, stdin=subprocess.DEVNULL):
        """Start argv in its own process group, output in DIR/name.out and .err."""
        out = open(self.path(name + ".out"), "wb")
        err = open(self.path(name + ".err"), "wb")
        p = subprocess.Popen(argv, stdin=stdin, stdout=out, stderr=err, env=env,
                             start_new_session=True)
        out.close()
        err.close()
        p.name = name
        self.procs.append(p)
        return p

    def run(self, argv, timeout=20, env=None, check=True):
        try:
            r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            fail("%s did not finish in %ds" % (" ".join(argv), timeout))
        if check and r.returncode != 0:
            fail("%s exited %d: %s" % (" ".join(argv), r.returncode,
                                       r.stderr.decode(errors="replace")))
        return r

    def output(self, name, which="out"):
        try:
            with open(self.path("%s.%s" % (name, which)), "rb") as f:
                return f.read().decode(errors="replace")
        except FileNotFoundError:
            return ""

    def cleanup(self):
        stopped = True
        if self.simxen and self.sim_dir:
            try:
                stopped = subprocess.run([self.simxen, "-d", self.sim_dir, "stop"],
                                         timeout=10, stdin=subprocess.DEVNULL,
                                         capture_output=True).returncode == 0
            except Exception:
                stopped = False
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
        deadline = time.monotonic() + 3
        for p in self.procs:
            try:
                p.wait(max(0.05, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                p.wait()
        if self.sim_dir and not stopped:
            self._kill_pidfile(os.path.join(self.sim_dir, "pid"))
        if os.environ.get("MTRACE_KEEP_TMP"):
            print("kept " + self.dir, file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    @staticmethod
    def _kill_pidfile(path):
        """The broker daemonizes: if "stop" did not end it, end it by its pid file,
        after checking that the pid is still a broker (not a reused pid)."""
        try:
            pid = int(open(path).read().strip())
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                if b"mtrace-simxen" not in f.read():
                    return
            os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            pass

    def dump(self):
        """Everything the processes printed, for a failure's log (the simulated Xen's
        own log too)."""
        if self.sim_dir and os.path.exists(os.path.join(self.sim_dir, "broker.log")):
            shutil.copy(os.path.join(self.sim_dir, "broker.log"), self.path("broker.log"))
        for f in sorted(os.listdir(self.dir)):
            if f.endswith((".out", ".err", ".log")) and os.path.getsize(self.path(f)):
                print("----- %s" % f, file=sys.stderr)
                with open(self.path(f), "rb") as fh:
                    data = fh.read()
                print(data[-4000:].decode(errors="replace"), file=sys.stderr)

    def die(self, msg):
        self.dump()
        fail(msg)

    def wait_for(self, what, pred, timeout=15, interval=0.05):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            v = pred()
            if v:
                return v
            time.sleep(interval)
        self.die("timed out after %ds waiting for %s" % (timeout, what))

    # -- the simulated Xen -----------------------------------------------------

    def sim_start(self):
        self.simxen = prog("MTRACE_SIMXEN", "sim/mtrace-simxen")
        self.sim_dir = self.path("sim")
        os.mkdir(self.sim_dir)
        self.run([self.simxen, "-d", self.sim_dir, "start"])
        return self.sim_dir

    def guest(self, name, argv):
        """Create a simulated domain running argv; returns its domid."""
        r = self.run([self.simxen, "-d", self.sim_dir, "create", "--name", name,
                      "--log", self.path(name + ".guest.log"), "--"] + argv)
        m = re.search(rb"(\d+)", r.stdout)
        return int(m.group(1)) if m else None


class Notify:
    """The service manager's end of NOTIFY_SOCKET: a datagram socket we read."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.msgs = []		# every "KEY=value" received, in order

    def poll(self, timeout=0.1):
        self.sock.settimeout(timeout)
        try:
            while True:
                data = self.sock.recv(65536)
                for line in data.decode(errors="replace").split("\n"):
                    if line:
                        self.msgs.append(line)
                self.sock.settimeout(0)
        except (BlockingIOError, socket.timeout):
            pass

    def find(self, pred, start=0):
        self.poll()
        for i in range(start, len(self.msgs)):
            if pred(self.msgs[i]):
                return (i, self.msgs[i])
        return None

    def wait(self, env, what, pred, timeout=15, start=0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = self.find(pred, start)
            if r:
                return r
        env.die("timed out after %ds waiting for notification %s (got %r)" %
                (timeout, what, self.msgs))


def listen_socket(sock_path):
    """What mtraced.socket makes: a listening stream socket, blocking (NonBlocking=no),
    which systemd keeps open across restarts of the service."""
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(sock_path)
    lsock.listen(64)
    return lsock


def start_activated(env, name, argv, sock_path, notify, lsock=None):
    """Start argv as systemd would with a socket unit: the listening socket (lsock, or
    a new one bound at sock_path) is fd 3, LISTEN_FDS=1, LISTEN_PID = the daemon's own
    pid (set after fork, before exec), NOTIFY_SOCKET.  A socket passed in stays open
    here too, as systemd keeps it; one made here is closed in this process."""
    own = lsock is None
    if own:
        lsock = listen_socket(sock_path)
    out = os.open(env.path(name + ".out"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(env.path(name + ".err"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            high = os.dup(lsock.fileno())
            hi = os.dup2(high, 100)
            os.dup2(out, 1)
            os.dup2(err, 2)
            os.dup2(hi, 3)          # dup2 leaves the copy inheritable (no CLOEXEC)
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            os.closerange(4, 1024)
            e = dict(os.environ)
            e.update({"LISTEN_FDS": "1", "LISTEN_PID": str(os.getpid()),
                      "LISTEN_FDNAMES": "mtraced.socket", "NOTIFY_SOCKET": notify.path})
            os.execve(argv[0], argv, e)
        except BaseException as ex:
            os.write(2, ("exec %s: %s\n" % (argv[0], ex)).encode())
        os._exit(127)
    os.close(out)
    os.close(err)
    if own:
        lsock.close()
    p = _Child(pid, name)
    env.procs.append(p)
    return p


class _Child:
    """A forked child in the shape of subprocess.Popen that cleanup() handles."""

    def __init__(self, pid, name):
        self.pid = pid
        self.name = name
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(st)
        return self.returncode

    def wait(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(self.name, timeout)
            time.sleep(0.02)
        return self.returncode


def proc_status(pid):
    """/proc/PID/status as a dict."""
    d = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            d[k] = v.strip()
    return d


def sample_config(env, overrides):
    """The installed sample config with every commented-out "#key = value" made live
    (so that every key it documents is checked against the daemon's parser), then the
    test's overrides appended (later lines win)."""
    src = os.path.join(SOURCE, "systemd", "mtraced.conf")
    lines = []
    for line in open(src):
        m = re.match(r"^#([a-z_]+ =.*)$", line.rstrip("\n"))
        lines.append(m.group(1) if m else line.rstrip("\n"))
    lines.append("# test overrides")
    for k, v in overrides.items():
        lines.append("%s = %s" % (k, v))
    path = env.path("mtraced.conf")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


# -- what the programs say (their interfaces, in one place) ---------------------

def load_argv(load, seconds):
    """mtrace-load as a steady workload for about `seconds`."""
    return [load, "--duration", str(seconds), "--rate", "2000"]


def cat_argv(cat, sock):
    """mtrace-cat streaming every event as JSON lines."""
    return [cat, "-s", sock, "-f", "json"]


def _json_lines(out):
    import json
    for line in out.splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue


def cat_saw_events(out, domid):
    """Some event of domain domid (any domain if None) in mtrace-cat's JSON output."""
    return any(m.get("type") == "event" and (domid is None or m.get("domid") == domid)
               for m in _json_lines(out))


def cat_saw_goodbye(out):
    return any(m.get("type") == "goodbye" for m in _json_lines(out))


def cat_refused(text):
    """mtrace-cat's words when mtraced turns it away for max_clients."""
    return "refused" in text and "too many clients" in text


def status_counts(msg):
    """(guests, clients) from "STATUS=N guests, M clients", else (None, None)."""
    m = re.match(r"STATUS=(\d+) guests?, (\d+) clients?$", msg)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def reload_logged(err):
    """mtraced's log shows a finished reload, successful or not."""
    return "configuration reloaded" in err or "keeping the running configuration" in err


def is_debug_line(line):
    return line.startswith("mtraced: debug:")
