#!/bin/bash
# test-steal.sh - the steal mtraced's hypervisor source finds for a simulated guest
# (issue 38), against the guest process's own schedstat (steal_check.py reads it
# independently, over the same few seconds):
#  - pinned: the guest (a vCPU that is always runnable: mtrace-load --spin) and a CPU hog
#    share core 0 (taskset); mtraced is kept on core 1.  The steal rate the source
#    reports is within 10 % of the process's own run-queue wait rate, and large (the hog
#    takes about half the core); the guest's thread waits are found to be steal in part.
#  - unpinned: the same guest beside the same hog, both free on the two cores: the
#    steal reported is again within 10 % of the process's own, and small, a fraction of
#    what it was, when the cores were otherwise free: the hog's own wait over the same
#    window says whether they were (a machine busy with other work makes the guest wait
#    whatever mtrace does: then that is said, and only the 10 % is held to).
. "$MTRACE_SRC/tests/rig.sh"
[ "$(nproc)" -ge 2 ] || { echo "SKIP: needs two cores"; exit 77; }
command -v taskset >/dev/null || { echo "SKIP: no taskset"; exit 77; }
CHECK=$MTRACE_SRC/tests/vcpu/steal_check.py

sim_start
daemon_start --vcpu-source --set vcpu_interval_ms=100 || fail "mtraced"
taskset -a -p -c 1 "$DPID" >/dev/null || fail "mtraced onto core 1"

pid_of() {	# NAME: the pid of the domain's process
	"$SIMXEN" --dir "$SIM" list | awk -v n="$1" '$2 == n { print $4 }'
}
# In a session of its own, as the guest is (the broker's): with autogroups (Debian's
# default) the scheduler shares a core between sessions first, and a hog in the test's
# session, whose other processes run on the other core, was given a sliver of core 0 and
# not looked at again: it waited whole seconds without running while the guest had 99.9
# % of the core (5 of 10 runs back to back, sanitizer build).  setsid does not fork here
# (not a group leader): $! is the loop.
hog() {		# CPU-LIST: a process that never sleeps
	setsid taskset -c "$1" sh -c 'while :; do :; done' &
	PIDS+=($!)
	HOG=$!
}
pct() { "$PYTHON" -c "import json,sys; d=json.load(open('$1')); print('%.1f' % (100 * d['$2']))"; }

# pinned: one core for the guest and the hog
hog 0
guest pinned -- taskset -c 0 "$LOAD" --spin --rate 20000 --duration 60 --labels 4 >/dev/null ||
	fail "the pinned guest"
PID=$(pid_of pinned)
[ -n "$PID" ] || fail "no pid for the pinned guest"
sleep 1
"$PYTHON" "$CHECK" "$CAT" "$SOCK" pinned "$PID" 5 "$T/pinned.json" || fail "pinned: no figures"
"$PYTHON" - "$T/pinned.json" <<'PY' || fail "pinned: $(cat "$T/pinned.json")"
import json, sys
d = json.load(open(sys.argv[1]))
ok = True
def check(c, what):
    global ok
    print(("ok: " if c else "FAIL: ") + what)
    ok = ok and c
check(abs(d["source"] - d["schedstat"]) <= 0.1 * d["schedstat"],
      "steal %.1f %% within 10 %% of the process's own wait %.1f %%" %
      (100 * d["source"], 100 * d["schedstat"]))
check(abs(d["run"] - d["schedstat_run"]) <= 0.1 * d["schedstat_run"],
      "running %.1f %% within 10 %% of its own %.1f %%" % (100 * d["run"], 100 * d["schedstat_run"]))
check(d["source"] > 0.25, "the hog takes a good part of the core: steal %.1f %%" % (100 * d["source"]))
check(d["waits_steal_share"] is not None and d["waits_steal_share"] > 0.05,
      "the thread waits were steal in part: %s" % d["waits_steal_share"])
sys.exit(0 if ok else 1)
PY
"$SIMXEN" --dir "$SIM" destroy "$("$SIMXEN" --dir "$SIM" list | awk '$2 == "pinned" { print $1 }')" ||
	fail "destroy the pinned guest"
kill "$HOG"

# unpinned: two cores for the guest and the hog
hog 0-1
taskset -a -p -c 0-1 "$DPID" >/dev/null
guest free -- "$LOAD" --spin --rate 20000 --duration 60 --labels 4 >/dev/null || fail "the free guest"
PID=$(pid_of free)
sleep 1
"$PYTHON" "$CHECK" "$CAT" "$SOCK" free "$PID" 5 "$T/free.json" "$HOG" || fail "unpinned: no figures"
"$PYTHON" - "$T/pinned.json" "$T/free.json" <<'PY' || fail "unpinned: $(cat "$T/free.json")"
import json, sys
p, f = (json.load(open(a)) for a in sys.argv[1:3])
ok = abs(f["source"] - f["schedstat"]) <= 0.1 * max(f["schedstat"], 0.02)
print(("ok: " if ok else "FAIL: ") + "unpinned, steal %.1f %% within 10 %% of the process's own %.1f %%"
      % (100 * f["source"], 100 * f["schedstat"]))
if f["control"] < 0.1:
    c = f["source"] < p["source"] / 3 and f["source"] < 0.15
    print(("ok: " if c else "FAIL: ") + "unpinned, steal %.1f %% is small (pinned %.1f %%)" %
          (100 * f["source"], 100 * p["source"]))
    ok = ok and c
else:
    print("note: the cores were busy with other work (the hog itself waited %.1f %% of the "
          "time): the steal %.1f %% is theirs, not held to being small" %
          (100 * f["control"], 100 * f["source"]))
sys.exit(0 if ok else 1)
PY
pass "steal as the guest process's own schedstat says, pinned and unpinned"
