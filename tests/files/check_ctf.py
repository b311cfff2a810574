#!/usr/bin/env python3
"""mtrace-cat -f ctf output against the JSON-lines stream of the same capture.

  check_ctf.py bt2 DIR EVENTS.jsonl   babeltrace2's Python bindings (python3-bt2) read
                                      the trace: same events per stream, in order (time,
                                      op, thread, fields, strings, thread types), same
                                      counts per op, domain names in the environment.
  check_ctf.py mtv DIR EVENTS.jsonl   the stream files decoded by a reader written to
                                      mirage-trace-viewer's loader (lib/mtv_ctf_loader.ml:
                                      30-byte packet header, magic, UUID, packets walked by
                                      packet_size and ordered by the 16-bit counter), which
                                      ignores the metadata: the same events.
  check_ctf.py mtv-events FILE        that reader alone, one JSON event a line.
"""
import collections
import json
import os
import struct
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "legacy"))
sys.path.insert(0, os.path.join(_HERE, "..", "..", "common"))
import ctf_reader  # noqa: E402  (mirage-trace-viewer's packet order, shared)
import mtrace_ops  # noqa: E402  (the op table, common/ops.c)

MAGIC = 0xC1FC1FC1
UUID = bytes.fromhex("05883b8d521a487bb397456ab150680c")
TT = ["Wait", "Task", "Bind", "Try", "Choose", "Pick", "Join", "Map", "Condition",
      "On_success", "On_failure", "On_termination", "On_any", "Ignore_result", "Async",
      "Promise", "Semaphore", "Switch", "Stream", "Mutex"]
# the vocabulary from common/ops.c: every event op is an event class of the trace
OPS = mtrace_ops.NAMES
CREATES, GC = mtrace_ops.BY_NAME["creates"], mtrace_ops.BY_NAME["gc"]
# after ts and op: (has thread, has arg, has type byte, has string), as cat-ctf.c writes
LAYOUT = {op: (op != GC, d["arg"] is not None, op == CREATES, d["str"] is not None)
          for op, d in mtrace_ops.EVENT_OPS.items()}
# babeltrace2 payload fields: the arg under mirage-profile's name, the string
MIRAGE_FIELD = {"read": "source", "signal": "source", "try_read": "source",
                "read_later": "source", "signal_new": "source", "fulfills": "resolvee",
                "fails": "resolvee", "becomes": "sleeper"}
ARG = {d["name"]: MIRAGE_FIELD.get(d["name"], d["arg"])
       for d in mtrace_ops.EVENT_OPS.values() if d["arg"]}
STR = {d["name"]: d["str"] for d in mtrace_ops.EVENT_OPS.values() if d["str"]}
MIRAGE_COUNT = len(mtrace_ops.MIRAGE)


def stream_key(domid, ring, op):
    return "dom%d-ring%d%s" % (domid, ring, "-mtrace" if op >= MIRAGE_COUNT else "")


VCPU_STATES = ["running", "runnable", "blocked", "offline", "mixed"]


def vcpu_events(d, per, last):
    """A "vcpu" line as cat-ctf.c writes it to dom<D>-vcpu (issue 38): its intervals and
    wake-ups on the host timeline (the trace's one clock), ordered by time, intervals
    first, vCPU, then as sent; a time before the stream's last held."""
    evs = []
    for i, iv in enumerate(d["intervals"]):
        if iv["start_ns"] >= 0:
            evs.append(((iv["start_ns"], 0, iv["vcpu"], i), {
                "op": "vcpu_interval", "vcpu": iv["vcpu"], "state": iv["state"],
                "dur_ns": iv["dur_ns"], "pcpu": iv["pcpu"], "running_ns": iv["running_ns"],
                "runnable_ns": iv["runnable_ns"], "blocked_ns": iv["blocked_ns"]}))
    for i, w in enumerate(d["wakes"]):
        if w["ns"] >= 0:
            evs.append(((w["ns"], 1, w["vcpu"], i), {"op": "vcpu_wake", "vcpu": w["vcpu"]}))
    key = "dom%d-vcpu" % d["domid"]
    for k, ev in sorted(evs, key=lambda e: e[0]):
        last[key] = max(k[0], last.get(key, 0))
        ev["ts"] = last[key]
        per[key].append(ev)


def from_stream(path):
    """Events per CTF stream file name, and domain names, from mtrace-cat -f json (a
    stream's times held at its highest, as cat-ctf.c holds them)."""
    per, names, last = collections.defaultdict(list), {}, {}
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        if d.get("type") == "domain_up":
            names[d["domid"]] = d["name"]
        if d.get("type") == "vcpu":
            vcpu_events(d, per, last)
        if d.get("type") != "event":
            continue
        op = d["op_code"]
        if op not in OPS:
            continue
        has_thread, has_arg, has_type, has_str = LAYOUT[op]
        # CTF's one clock is the host timeline: the guest's ts where its clock is not on it
        ev = {"ts": d.get("host_ns", d["ts"]), "op": d["op"],
              "thread": d["thread"] if has_thread else -1,
              "arg": d["arg"] if has_arg else 0}
        if has_type:
            t = d.get("thread_type", "Unknown")
            ev["type"] = TT.index(t) if t in TT else 99
        if has_str:
            ev["str"] = d.get("str", "")
        k = stream_key(d["domid"], d["ring"], op)
        if per[k]:
            ev["ts"] = max(ev["ts"], per[k][-1]["ts"])
        per[k].append(ev)
    return per, names


def from_bt2(path):
    import bt2
    per, env = collections.defaultdict(list), {}
    for m in bt2.TraceCollectionMessageIterator(path):
        if type(m) is not bt2._EventMessageConst:
            continue
        e = m.event
        env = e.stream.trace.environment
        name = e.name
        p = e.payload_field
        if name in ("vcpu_interval", "vcpu_wake"):
            ev = {"ts": m.default_clock_snapshot.value, "op": name, "vcpu": int(p["vcpu"])}
            if name == "vcpu_interval":
                ev["state"] = VCPU_STATES[int(p["state"])]
                for f in ("dur_ns", "pcpu", "running_ns", "runnable_ns", "blocked_ns"):
                    ev[f] = int(p[f])
            per[os.path.basename(e.stream.name)].append(ev)
            continue
        ctx = e.specific_context_field
        ev = {"ts": m.default_clock_snapshot.value, "op": name,
              "thread": int(ctx["thread"]) if ctx is not None else -1,
              "arg": int(p[ARG[name]]) if name in ARG else 0}
        if name == "creates":
            ev["type"] = int(p["thread_type"])
        if name in STR:
            ev["str"] = str(p[STR[name]])
        per[os.path.basename(e.stream.name)].append(ev)
    return per, {k: str(v) for k, v in env.items()}


def mtv_packets(buf):
    """mirage-trace-viewer's packet walk and order (mtv_ctf_loader.ml `packets`)."""
    out, pos = [], 0
    while pos != len(buf):
        magic, = struct.unpack_from("<I", buf, pos)
        if magic != MAGIC:
            raise ValueError("Not a CTF log packet (bad magic) at %d" % pos)
        if buf[pos + 4:pos + 20] != UUID:
            raise ValueError("Packet UUID doesn't match at %d" % pos)
        size, count, content = struct.unpack_from("<IHI", buf, pos + 20)
        if content > size:
            raise ValueError("content_size > size at %d" % pos)
        if size == 0 or size % 8:
            raise ValueError("bad packet size at %d" % pos)
        out.append((count, pos + 30, pos + content // 8))
        pos += size // 8
    return ctf_reader.mtv_order(out)


def mtv_events(buf):
    evs = []
    for count, start, end in mtv_packets(buf):
        pos = start
        while pos < end:
            ts, op = struct.unpack_from("<QB", buf, pos)
            pos += 9
            if op not in LAYOUT:
                raise ValueError("Unknown event op %d at %d" % (op, pos - 1))
            has_thread, has_arg, has_type, has_str = LAYOUT[op]
            ev = {"ts": ts, "op": OPS[op], "thread": -1, "arg": 0}
            if has_thread:
                ev["thread"], = struct.unpack_from("<q", buf, pos)
                pos += 8
            if has_arg:
                ev["arg"], = struct.unpack_from("<q", buf, pos)
                pos += 8
            if has_type:
                ev["type"] = buf[pos]
                pos += 1
            if has_str:
                nul = buf.index(b"\0", pos, end)
                ev["str"] = buf[pos:nul].decode("utf-8")
                pos = nul + 1
            if pos > end:
                raise ValueError("event cut at the end of a packet")
            evs.append(ev)
    return evs


def vcpu_file(buf):
    """A dom<D>-vcpu stream (cat-ctf.c, issue 38): mirage-trace-viewer does not read it;
    its packets are the same, its events {ts, id 250: vcpu u64, state u8, dur_ns u64,
    pcpu i64, running_ns, runnable_ns, blocked_ns u64; id 251: vcpu u64}."""
    evs = []
    for count, start, end in mtv_packets(buf):
        pos = start
        while pos < end:
            ts, op, vcpu = struct.unpack_from("<QBQ", buf, pos)
            pos += 17
            if op == 251:
                evs.append({"ts": ts, "op": "vcpu_wake", "vcpu": vcpu})
                continue
            if op != 250:
                raise ValueError("Unknown vCPU event %d at %d" % (op, pos - 9))
            st, dur, pcpu, run, rnb, blk = struct.unpack_from("<BQqQQQ", buf, pos)
            pos += 41
            evs.append({"ts": ts, "op": "vcpu_interval", "vcpu": vcpu, "state": VCPU_STATES[st],
                        "dur_ns": dur, "pcpu": pcpu, "running_ns": run, "runnable_ns": rnb,
                        "blocked_ns": blk})
    return evs


def from_mtv(path):
    per = {}
    for f in sorted(os.listdir(path)):
        if f.endswith("-vcpu"):
            per[f] = vcpu_file(open(os.path.join(path, f), "rb").read())
        elif f != "metadata":
            per[f] = mtv_events(open(os.path.join(path, f), "rb").read())
    return per


def bt2_empty_strings(got, want):
    """babeltrace2 2.0.4 (Debian 12) shows a stale value for an empty string field
    ("String fields display the value of a previous event, despite their length being
    set to zero", review.lttng.org/c/babeltrace/+/4528, fixed after 2.0.4).  Where the
    JSON stream has "" and babeltrace2 something else, take "": counted and printed, and
    the mtv-layout reader checks those same bytes exactly."""
    n = 0
    for k, w in want.items():
        for a, b in zip(got.get(k, []), w):
            if b.get("str") == "" and a.get("str") not in (None, ""):
                a["str"] = ""
                n += 1
    if n:
        print("babeltrace2: %d empty strings shown stale (babeltrace2 2.0.4 bug)" % n)


def compare(got, want, who):
    fail = 0
    if sorted(got) != sorted(want):
        print("%s: streams %s, the JSON stream has %s" % (who, sorted(got), sorted(want)))
        fail = 1
    for k in sorted(want):
        g, w = got.get(k, []), want[k]
        if len(g) != len(w):
            print("%s: %s has %d events, the JSON stream %d" % (who, k, len(g), len(w)))
            fail = 1
        for i, (a, b) in enumerate(zip(g, w)):
            if a != b:
                print("%s: %s event %d differs:\n ctf  %s\n json %s" % (who, k, i, a, b))
                fail = 1
                break
    per_op = collections.Counter(e["op"] for v in got.values() for e in v)
    want_op = collections.Counter(e["op"] for v in want.values() for e in v)
    if per_op != want_op:
        print("%s: per op %s, the JSON stream %s" % (who, dict(per_op), dict(want_op)))
        fail = 1
    print("%s: %d events in %d streams; per op %s" % (
        who, sum(per_op.values()), len(got), json.dumps(dict(sorted(per_op.items())))))
    return fail


def main():
    mode = sys.argv[1]
    if mode == "mtv-events":
        for ev in mtv_events(open(sys.argv[2], "rb").read()):
            print(json.dumps(ev))
        return
    path, stream = sys.argv[2], sys.argv[3]
    want, names = from_stream(stream)
    if mode == "bt2":
        got, env = from_bt2(path)
        bt2_empty_strings(got, want)
        fail = compare(got, want, "babeltrace2")
        for domid, name in names.items():
            if domid in {int(k.split("-")[0][3:]) for k in want} and \
                    env.get("domain_%d" % domid) != name:
                print("babeltrace2: env.domain_%d = %r, DomainUp says %r" %
                      (domid, env.get("domain_%d" % domid), name))
                fail = 1
    else:
        fail = compare(from_mtv(path), want, "mtv layout")
    sys.exit(fail)


if __name__ == "__main__":
    main()
