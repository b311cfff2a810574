#!/bin/bash
# Service behaviour: flags and config errors, sd_notify READY/STATUS/RELOADING/STOPPING,
# SIGHUP reloads the file and keeps guests and clients (a bad file keeps the running
# configuration), SIGTERM drains and says goodbye.
. "$MTRACE_SRC/tests/rig.sh"

"$MTRACED" --help | grep -q -- "--sim-dir" || fail "--help"
"$MTRACED" --version | grep -Eq '^mtraced [0-9]' || fail "--version"
"$MTRACED" --bogus >/dev/null 2>&1; [ $? = 2 ] || fail "bad flag not refused with status 2"
printf 'drain_budget = 100\nmax_guests = lots\n' >"$T/bad.conf"
out=$("$MTRACED" --foreground -c "$T/bad.conf" --backend sim --sim-dir "$SIM" 2>&1)
[ $? = 1 ] || fail "bad config accepted"
echo "$out" | grep -q "bad.conf:2: max_guests: expected a number" || fail "no file:line error: $out"
"$MTRACED" --foreground -c "$T/missing.conf" --backend sim 2>&1 | grep -q "missing.conf" || fail "missing config"

sim_start
# (what mtraced sends, the listener writes a moment later: each line is waited for)
"$PYTHON" "$HERE/notify-listen.py" "$T/notify" "$T/notify.log" &
PIDS+=("$!")
for _ in $(seq 50); do [ -S "$T/notify" ] && break; sleep 0.1; done
G1=$(guest one -- "$HOSTILE" --rings 1 --pages 64 count 3000)
E1=$(json_events one)
cat >"$T/mtraced.conf" <<CONF
# test configuration
drain_interval_ms = 20
status_interval_ms = 100
CONF
NOTIFY_SOCKET=$T/notify daemon_start -c "$T/mtraced.conf"
# the guest that existed before start-up was found before READY
wait_until 10 grep -q "^READY=1" "$T/notify.log" || fail "no READY=1: $(cat "$T/notify.log")"
wait_until 10 grep -q "^STATUS=1 guest, 0 clients" "$T/notify.log" || fail "no STATUS before READY"
wait_field "$G1" events "$E1"
"$MTRACED_PROBE" -s "$SOCK" events 60 >"$T/stream" 2>&1 &
PROBE_PID=$!
PIDS+=("$PROBE_PID")
for _ in $(seq 50); do grep -q "STATUS=1 guest, [12] client" "$T/notify.log" && break; sleep 0.1; done
grep -q "STATUS=1 guest, [12] client" "$T/notify.log" || fail "STATUS not updated: $(cat "$T/notify.log")"

# reload with a changed file: guests and clients stay
printf 'drain_interval_ms = 50\nratelimit_wakeups = 10\nstatus_interval_ms = 100\n' >"$T/mtraced.conf"
kill -HUP "$DPID"
for _ in $(seq 50); do grep -q "configuration reloaded" "$DLOG" && break; sleep 0.1; done
grep -q "configuration reloaded" "$DLOG" || fail "reload not done"
wait_until 10 grep -q "^RELOADING=1" "$T/notify.log" || fail "no RELOADING=1"
# a broken file: refused with file:line, the running configuration stays
printf 'drain_interval_ms = 50\nno_such_key = 1\n' >"$T/mtraced.conf"
kill -HUP "$DPID"
for _ in $(seq 50); do grep -q "mtraced.conf:2: unknown setting" "$DLOG" && break; sleep 0.1; done
grep -q "mtraced.conf:2: unknown setting \"no_such_key\" (keeping the running configuration)" "$DLOG" ||
	fail "broken reload not reported"
alive
G2=$(guest two -- "$HOSTILE" --rings 2 --pages 64 count 4000)
E2=$(json_events two)
wait_field "$G2" events "$E2"
wait_field "$G1" events "$E1"
kill -0 "$PROBE_PID" 2>/dev/null || fail "stream client lost across reloads"

daemon_stop
wait "$PROBE_PID"
grep -q "^goodbye daemon stopping" "$T/stream" || fail "no Goodbye"
[ "$(sed -n "s/^count $G2 //p" "$T/stream")" = "$E2" ] || fail "events of $G2 not all streamed"
wait_until 10 grep -q "^STOPPING=1" "$T/notify.log" || fail "no STOPPING=1"
echo "ok: service"
