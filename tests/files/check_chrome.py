#!/usr/bin/env python3
"""mtrace-cat -f chrome output as Perfetto's JSON importer reads it.

A model of google/perfetto's trace processor (src/trace_processor/importers/json/
json_trace_tokenizer.cc, json_trace_parser_impl.cc, json_utils.cc; importers/common/
slice_tracker.cc, flow_tracker.cc, process_tracker.cc), rule by rule:

- tokenizer: {"traceEvents":[...], other keys skipped} or a bare array; an event's
  "ts" is read from its text, exactly (CoerceToTs on the string: the decimal point
  moved three places, digits past the ns truncated); an event without ts that is not
  "M" is dropped (json_tokenizer_failure).  Events are then sorted by ts, stably.
- pid/tid: numbers coerced to uint32 (out of range -> absent); tid defaults to pid.
  Every event (M and C included) calls UpdateThread(tid, pid): a tid seen under
  another pid is a new thread, with a new track -- so a thread's tid must never equal
  a pid that events without a tid name.
- B: StartSlice on the thread's track: MaybeCloseStack first (finished slices whose end
  <= ts leave the stack; a finished slice under an open one that ends before ts is a
  partial overlap: misplaced_end_event, the open ones above it are cut at its end).
  Flow ends waiting on the track (f without bp:e) bind to it.
- E: CompleteSlice: MaybeCloseStack, then the topmost OPEN slice whose category equals
  the E's (a null category matches any) and whose name equals the E's (a null name
  matches any); none -> the end is dropped and the slice stays open.  The matched
  slice leaves the stack only when it is the top one.
- X: a finished slice; "dur" read from the parsed JSON value: an integer * 1000, a real
  as (int64)(double * 1000) -- truncated, so a fractional dur can lose a ns.
- i/I/R with s "t" or no s: a 0-length slice on the thread track; "g"/"p" elsewhere.
- C: args must be an object of numbers (or numeric strings).
- s/t/f: flow ids keyed by (id, cat, name); s binds to the topmost slice on its track
  (GetTopmostSliceOnTrack: the stack as it is, a finished slice not yet popped
  included); f with bp "e" the same, without it the next slice begun on the track.
  No slice -> flow_no_enclosing_slice; a second s for a key -> flow_duplicate_id; f
  without s -> flow_end_without_start.
- M: thread_name / process_name (last one wins).
At the end a slice with no duration is what the UI draws as "Did not end".

Besides Perfetto's own drops, the checker fails on: an unfinished slice, a dropped E,
an overlap, a flow that binds nowhere, a timestamp or duration that is not a whole ns
exactly as written, a tid under two pids; and (mtrace's own promises) a thread slice
marked "did_not_end" that does not end at its process's last timestamp, two open
thread slices on one track (a reused id stacking), a flow bound to a slice that had
already ended (Perfetto would draw it from there), metadata without the origin.

With EVENTS.jsonl (mtrace-cat -f json of the same capture): threads, flows bound per
category, labels, GCs, counter updates and instants equal what the stream says, and
the vCPU tracks' slices, counters and wake-ups its vcpu lines (issue 38).

Usage: check_chrome.py TRACE.json [EVENTS.jsonl]
"""
import collections
import decimal
import json
import struct
import sys


def coerce_ts_text(s):
    """json_utils.cc CoerceToTs(std::string): exact decimal shift, truncating."""
    s = str(s)
    exp = 0
    for c in "eE":
        if c in s:
            s, e = s.split(c, 1)
            exp = int(e)
    int_size = len(s)
    if "." in s:
        int_size = s.index(".")
        s = s.replace(".", "", 1)
    size = max(1, int_size + exp + 3)
    s = (s + "0" * size)[:size]
    return int(s)


def coerce_ts_value(v):
    """CoerceToTs(Json::Value): int * 1000, real (int64)(double * 1000), string exact."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v * 1000
    if isinstance(v, decimal.Decimal):
        d = struct.unpack("d", struct.pack("d", float(v)))[0]
        return int(d * 1000.0)
    if isinstance(v, str):
        return coerce_ts_text(v)
    return None


def exact_ns(v):
    d = decimal.Decimal(str(v)) * 1000
    return int(d) if d == d.to_integral_value() else None


def uint32(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, decimal.Decimal):
        v = int(v)
    if isinstance(v, int) and 0 <= v < 2**32:
        return v
    return None


class Slice:
    __slots__ = ("ts", "dur", "name", "cat", "track", "args", "end_args")

    def __init__(self, ts, dur, name, cat, track, args):
        self.ts, self.dur, self.name, self.cat = ts, dur, name, cat
        self.track, self.args, self.end_args = track, args, None


class Model:
    def __init__(self):
        self.stats = collections.Counter()
        self.stacks = collections.defaultdict(list)
        self.slices = []
        self.threads = {}      # tid -> (pid, utid)
        self.next_utid = 0
        self.flow_start = {}   # flow key -> slice
        self.pending_f = collections.defaultdict(list)
        self.flows = []        # (key, from slice, to slice, ts of the f)
        self.stale = 0
        self.errors = []
        self.last_ts = collections.Counter()
        self.names = {}

    def err(self, msg):
        self.stats["errors"] += 1
        if len(self.errors) < 20:
            self.errors.append(msg)

    def utid(self, tid, pid):
        got = self.threads.get(tid)
        if got is None or got[0] != pid:
            if got is not None:
                self.err("tid %d seen under pids %d and %d" % (tid, got[0], pid))
            got = (pid, self.next_utid)
            self.next_utid += 1
            self.threads[tid] = got
        return got[1]

    def maybe_close(self, ts, track):
        st = self.stacks[track]
        incomplete = False
        i = len(st) - 1
        while i >= 0:
            s = st[i]
            if s.dur is None:
                incomplete = True
                i -= 1
                continue
            end = s.ts + s.dur
            if incomplete:
                if ts <= end:
                    i -= 1
                    continue
                self.stats["misplaced_end_event"] += 1
                self.err("partly overlapping slices on track %r at %d" % (track, ts))
                for child in st[i + 1:]:
                    child.dur = end - child.ts
                del st[i:]
                incomplete = False
                i = len(st) - 1
                continue
            if end <= ts:
                del st[i]
            i -= 1

    def start(self, ts, track, sl):
        self.maybe_close(ts, track)
        st = self.stacks[track]
        if sl.cat == "thread" and any(s.cat == "thread" and s.dur is None for s in st):
            self.stats["stacked thread slices"] += 1
            self.err("thread slice %r at %d opens over another open thread slice on %r" %
                     (sl.name, ts, track))
        st.append(sl)
        self.slices.append(sl)
        for key, ts_f in self.pending_f.pop(track, []):
            self.bind(key, sl, ts_f)

    def complete(self, ts, track, name, cat, args, k):
        self.maybe_close(ts, track)
        st = self.stacks[track]
        for i in range(len(st) - 1, -1, -1):
            s = st[i]
            if s.dur is not None:
                continue
            if cat is not None and s.cat != cat:
                continue
            if name is not None and s.name is not None and name != s.name:
                continue
            s.dur = ts - s.ts
            s.end_args = args
            if i == len(st) - 1:
                st.pop()
            return
        self.stats["unmatched_end"] += 1
        self.err("event %d: E %r (%r) on track %r matches no open slice (open: %r)" %
                 (k, name, cat, track, [(s.name, s.cat) for s in st if s.dur is None][-3:]))

    def stale_binding(self, sl, ts, k):
        if sl.dur is not None and sl.ts + sl.dur < ts:
            self.stale += 1
            self.err("flow at %d binds to %r, which ended at %d" %
                     (ts, sl.name, sl.ts + sl.dur))

    def bind(self, key, to, ts):
        fr = self.flow_start.get(key)
        if fr is None:
            self.stats["flow_end_without_start"] += 1
            self.err("flow %r ends without its start" % (key,))
            return
        self.stale_binding(to, ts, None)
        self.flows.append((key, fr, to, ts))

    def top(self, track):
        st = self.stacks.get(track)
        return st[-1] if st else None

    def event(self, k, ts, e):
        ph = e.get("ph")
        if not isinstance(ph, str) or not ph:
            self.stats["no_phase"] += 1
            return
        ph = ph[0]
        pid = uint32(e["pid"]) if "pid" in e and not isinstance(e["pid"], str) else None
        tid = uint32(e["tid"]) if "tid" in e and not isinstance(e["tid"], str) else None
        if "pid" in e and pid is None or "tid" in e and tid is None:
            self.err("event %d: pid/tid %r/%r not a uint32" % (k, e.get("pid"), e.get("tid")))
        p = pid if pid is not None else 0
        t = tid if tid is not None else p
        cat = e.get("cat") if isinstance(e.get("cat"), str) and e.get("cat") else None
        name = e.get("name") if isinstance(e.get("name"), str) and e.get("name") else None
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        # every event, metadata and counters too, makes (tid or pid, pid) a thread
        track = ("thread", p, self.utid(t, p))
        if ph == "M":
            if name in ("thread_name", "process_name") and isinstance(args.get("name"), str):
                self.names[(name, p, t if name == "thread_name" else None)] = args["name"]
            else:
                self.err("event %d: metadata %r not read" % (k, e))
            return
        if ph in "BEXisftIRC":
            self.last_ts[p] = max(self.last_ts[p], ts)
        if ph == "B":
            self.start(ts, track, Slice(ts, None, name, cat, track, args))
        elif ph == "E":
            self.complete(ts, track, name, cat, args, k)
        elif ph == "X":
            dur = coerce_ts_value(e.get("dur"))
            if dur is None:
                self.stats["x_without_dur"] += 1
                return
            if exact_ns(e["dur"]) != dur:
                self.err("event %d: dur %s is read as %d ns" % (k, e["dur"], dur))
            self.start(ts, track, Slice(ts, dur, name, cat, track, args))
        elif ph in "iIR":
            s = e.get("s")
            if s in ("g", "p"):
                return
            if s not in (None, "t") or tid is None:
                self.stats["json_parser_failure"] += 1
                self.err("event %d: instant scope %r / no tid" % (k, s))
                return
            self.start(ts, track, Slice(ts, 0, name, cat, track, args))
        elif ph == "C":
            ok = args and all(
                (isinstance(v, (int, decimal.Decimal)) and not isinstance(v, bool)) or
                (isinstance(v, str) and _num(v)) for v in args.values())
            if not ok:
                self.stats["json_parser_failure"] += 1
                self.err("event %d: counter args %r not numbers" % (k, args))
            self.stats["vcpu counter" if cat == "vcpu" else "counter"] += 1
        elif ph in "stf":
            fid = e.get("id")
            if isinstance(fid, str):
                try:
                    fid = int(fid, 16)
                except ValueError:
                    fid = None
            elif isinstance(fid, decimal.Decimal):
                fid = int(fid)
            if not isinstance(fid, int) or isinstance(fid, bool):
                self.stats["flow_invalid_id"] += 1
                self.err("event %d: flow without a usable id" % k)
                return
            key = (fid, cat, name)
            if ph == "s":
                top = self.top(track)
                if top is None:
                    self.stats["flow_no_enclosing_slice"] += 1
                    self.err("event %d: flow start on %r with no slice" % (k, track))
                elif key in self.flow_start:
                    self.stats["flow_duplicate_id"] += 1
                    self.err("event %d: flow %r started twice" % (k, key))
                else:
                    self.stale_binding(top, ts, k)
                    self.flow_start[key] = top
            elif ph == "t":
                top = self.top(track)
                if top is None:
                    self.stats["flow_no_enclosing_slice"] += 1
                else:
                    self.bind(key, top, ts)
                    self.flow_start[key] = top
            elif e.get("bp") == "e":
                top = self.top(track)
                if top is None:
                    self.stats["flow_no_enclosing_slice"] += 1
                    self.err("event %d: flow end on %r with no slice" % (k, track))
                else:
                    self.bind(key, top, ts)
            else:
                self.pending_f[track].append((key, ts))
        else:
            self.stats["phase " + ph] += 1


def _num(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


LAST_MODEL = None  # the model of the last check, for readers that look further


def check(path):
    global LAST_MODEL
    raw = open(path, "rb").read()
    doc = json.loads(raw.decode("utf-8"), parse_float=decimal.Decimal)
    m = Model()
    LAST_MODEL = m
    if isinstance(doc, dict):
        evs = doc.get("traceEvents", [])
        meta = doc.get("metadata", {}).get("mtrace", {})
        if not isinstance(meta.get("origin_wall_ns"), int):
            m.err("no metadata.mtrace.origin_wall_ns (the wall clock of ts 0)")
    else:
        evs = doc
    timed = []
    for k, e in enumerate(evs):
        if not isinstance(e, dict):
            m.err("event %d is not an object" % k)
            continue
        if "ts" not in e:
            if e.get("ph") != "M":
                m.stats["json_tokenizer_failure"] += 1
                m.err("event %d: no ts" % k)
                continue
            ts = 0
        else:
            ts = coerce_ts_text(e["ts"])
            if exact_ns(e["ts"]) != ts:
                m.err("event %d: ts %s is not a whole ns" % (k, e["ts"]))
        timed.append((ts, k, e))
    timed.sort(key=lambda x: (x[0], x[1]))  # the sorter: by ts, then as pushed
    for ts, k, e in timed:
        m.event(k, ts, e)
    unfinished = [s for s in m.slices if s.dur is None]
    m.stats["unfinished"] = len(unfinished)
    for s in unfinished[:5]:
        m.err("slice %r (%r) on %r from %d did not end" % (s.name, s.cat, s.track, s.ts))
    for fl in m.pending_f.values():
        m.stats["flow_end_unbound"] += len(fl)
        m.err("%d flow ends bind to no slice" % len(fl))
    depth = collections.Counter()
    for s in m.slices:
        if s.cat == "thread" and s.end_args and s.end_args.get("did_not_end"):
            m.stats["did_not_end"] += 1
            if s.ts + s.dur != m.last_ts[s.track[1]]:
                m.err("thread %r marked did_not_end ends at %d, its process at %d" %
                      (s.name, s.ts + s.dur, m.last_ts[s.track[1]]))
    counts = collections.Counter()
    threads = set()
    for s in m.slices:
        if s.cat == "thread":
            threads.add((s.track[1], s.args.get("ring"), s.args.get("id")))
        elif s.cat in ("gc", "label", "evtchn", "try_read"):
            counts[s.cat] += 1
        elif s.cat == "vcpu":
            counts["vcpu wake" if s.name == "wake" else "vcpu slices"] += 1
        depth[s.track] += 0
    for key, fr, to, ts in m.flows:
        counts["flow " + (key[1] or "")] += 1
    counts["threads"] = len(threads)
    counts["thread slices"] = sum(1 for s in m.slices if s.cat == "thread")
    counts["counter"] = m.stats["counter"]
    counts["vcpu counter"] = m.stats["vcpu counter"]
    counts["stale flow bindings"] = m.stale
    for k, v in m.stats.items():
        if k not in ("counter", "vcpu counter", "errors") and v:
            counts["perfetto " + k] = v
    return m.errors, counts, len(evs)


def vcpu_counts(d, origin, c):
    """A "vcpu" line's intervals and wake-ups as cat-chrome-vcpu.c draws them: host
    times, like every event of the trace (whose base is the smallest of them all), of
    vCPUs below 1024; a sampled one (mixed) with its two counters."""
    if origin is None:
        return
    for iv in d["intervals"]:
        if iv["vcpu"] < 1024 and iv["start_ns"] >= 0:
            c["vcpu slices"] += 1
            c["vcpu counter"] += 2 if iv["state"] == "mixed" else 0
    for w in d["wakes"]:
        if w["vcpu"] < 1024 and w["ns"] >= 0:
            c["vcpu wake"] += 1


def from_stream(path, origin=None):
    """The same counts from mtrace-cat -f json."""
    c = collections.Counter()
    threads = set()
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        if d.get("type") == "vcpu":
            vcpu_counts(d, origin, c)
        if d.get("type") != "event":
            continue
        op = d["op"]
        key = (d["domid"], d["ring"])
        # the ids docs/figures.md makes threads of: a child, the thread of an event,
        # the target of a resolution or a signal
        if op in ("creates", "fulfills", "fails", "signal", "signal_new") and d["arg"] != -1:
            threads.add(key + (d["arg"],))
        if d["thread"] != -1 and op not in ("gc", "ring_start", "site", "site_name", "module"):
            threads.add(key + (d["thread"],))
        c[op] += 1
    return {
        "threads": len(threads),
        "flow creates": c["creates"],
        "flow read": c["read"] + c["read_later"],
        "flow resolve": c["fulfills"] + c["fails"],
        "flow becomes": c["becomes"],
        "flow signal": c["signal"] + c["signal_new"],
        "label": c["label"],
        "gc": c["gc"],
        "counter": c["counter"] + c["increase"],
        "evtchn": c["evtchn_send"] + c["evtchn_recv"],
        "try_read": c["try_read"],
        "vcpu slices": c["vcpu slices"],
        "vcpu counter": c["vcpu counter"],
        "vcpu wake": c["vcpu wake"],
    }


def gc_times(chrome, stream):
    """GC ends in the Chrome trace against the stream's gc times on the host timeline
    (host_ns, else the guest's ts) minus the origin: the ns are the same (none lost to a
    double)."""
    doc = json.loads(open(chrome, "rb").read().decode("utf-8"), parse_float=decimal.Decimal)
    origin = doc.get("metadata", {}).get("mtrace", {}).get("origin_wall_ns") \
        if isinstance(doc, dict) else None
    if not isinstance(origin, int):
        return 0, 0  # reported already: no origin
    got = collections.Counter()
    for e in doc["traceEvents"]:
        if e.get("ph") == "E" and e.get("cat") == "gc":
            got[(e["pid"], coerce_ts_text(e["ts"]))] += 1
    want = collections.Counter()
    held = {}  # the documented hold: a ring's time at its max
    for line in open(stream, encoding="utf-8"):
        d = json.loads(line)
        if d.get("type") != "event":
            continue
        key = (d["domid"], d["ring"])
        # a domain off the host timeline keeps its guest time, at most 2^63-1
        t = max(d.get("host_ns", min(d["ts"], 2**63 - 1)) - origin, held.get(key, 0))
        held[key] = t
        if d["op"] == "gc":
            want[(d["domid"], t)] += 1
    return sum((want - got).values()), sum(want.values())


def main():
    errors, counts, n = check(sys.argv[1])
    for e in errors:
        print("chrome: " + e)
    fail = bool(errors)
    if len(sys.argv) > 2:
        doc = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
        origin = doc.get("metadata", {}).get("mtrace", {}).get("origin_wall_ns") \
            if isinstance(doc, dict) else None
        want = from_stream(sys.argv[2], origin)
        for k, v in want.items():
            if counts[k] != v:
                print("chrome: %s = %d, the JSON stream says %d" % (k, counts[k], v))
                fail = True
        off, total = gc_times(sys.argv[1], sys.argv[2])
        counts["gc at the stream's ns"] = total - off
        if off:
            print("chrome: %d of %d GC ends are not at the stream's ns - origin" % (off, total))
            fail = True
    print("%s: %d trace events; %s" % (sys.argv[1], n, json.dumps(
        {k: counts[k] for k in sorted(counts)})))
    sys.exit(1 if fail else 0)


if __name__ == "__main__":
    main()
