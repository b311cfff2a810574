#!/usr/bin/env python3
"""conform.py RAW TEXT JSON PROTO_DIR TESTS_DIR HARNESS_JSON[,SUMMARY...]|EVENT_COUNT

Split RAW (delimited mtrace.ServerMsg frames as mtrace-cat -f proto wrote them),
decode every frame with `protoc --decode`, rebuild the events from the columns, and
compare them with mtrace-cat's text and JSON output of the same stream.  mtrace-load
summaries (comma-separated) also give, per domain, how often each label and counter
name was written: the stream must carry exactly those strings."""
import json
import re
import subprocess
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import mtrace_ops  # noqa: E402  (the op table of common/ops.c)

STR_OPS = mtrace_ops.STR_OPS
OP_NAMES = mtrace_ops.NAMES


def split_frames(data):
    frames, i = [], 0
    while i < len(data):
        n, shift, j = 0, 0, i
        while True:
            b = data[j]
            n |= (b & 0x7f) << shift
            j += 1
            shift += 7
            if not b & 0x80:
                break
            if shift > 63:
                raise SystemExit("bad varint at %d" % i)
        if n > 4 << 20 or j + n > len(data):
            raise SystemExit("bad frame at %d (len %d)" % (i, n))
        frames.append(data[i:j + n])
        i = j + n
    return frames


def unescape(s):
    """protoc text-format string escapes -> bytes."""
    out, i = bytearray(), 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        n = s[i + 1]
        if n in "01234567":
            m = re.match(r"[0-7]{1,3}", s[i + 1:])
            out.append(int(m.group(0), 8))
            i += 1 + len(m.group(0))
        elif n == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", s[i + 2:])
            out.append(int(m.group(0), 16))
            i += 2 + len(m.group(0))
        else:
            out += {"n": b"\n", "t": b"\t", "r": b"\r", '"': b'"', "'": b"'",
                    "\\": b"\\", "a": b"\a", "b": b"\b", "f": b"\f", "v": b"\v"}[n]
            i += 2
    return bytes(out)


def parse_text(text):
    """protoc's text format -> nested dict of lists."""
    root = {}
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
        elif line.endswith("{"):
            d = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(d)
            stack.append(d)
        else:
            k, v = line.split(":", 1)
            v = v.strip()
            if v.startswith('"'):
                v = unescape(v[1:-1]).decode("utf-8")
            elif re.fullmatch(r"-?\d+", v):
                v = int(v)
            stack[-1].setdefault(k, []).append(v)
    return root


def one(d, k, default=0):
    return d.get(k, [default])[0]


def decoded_stream(raw_path, proto_dir, tests_dir):
    data = open(raw_path, "rb").read()
    if data[:8] == b"\x89MTRC\r\n\x1a":	# a recording (docs/recording.md): skip its header
        data = data[16:]
    frames = split_frames(data)
    wrapped = b"".join(b"\x0a" + f for f in frames)
    r = subprocess.run(["protoc", "-I", proto_dir, "-I", tests_dir,
                        "--decode=mtrace_test.Frames", "conformance.proto"],
                       input=wrapped, capture_output=True, check=False, cwd=tests_dir)
    if r.returncode != 0:
        raise SystemExit("protoc --decode failed: " + r.stderr.decode())
    msgs = parse_text(r.stdout.decode()).get("msg", [])
    if len(msgs) != len(frames):
        raise SystemExit("protoc decoded %d messages from %d frames" % (len(msgs), len(frames)))
    events, control = [], []
    for m in msgs:
        if "events" in m:
            b = m["events"][0]
            n = len(b.get("op", []))
            for col in ("ts_delta", "thread", "arg"):
                if len(b.get(col, [])) != n:
                    raise SystemExit("column %s has %d entries for %d events" %
                                     (col, len(b.get(col, [])), n))
            ts = one(b, "base_ts")
            strs = list(b.get("str", []))
            refs = list(b.get("str_ref", []))
            used = set()
            for i in range(n):
                ts += b["ts_delta"][i]
                op = b["op"][i]
                s = None
                if op in STR_OPS:
                    r = refs.pop(0)
                    s = strs[r]
                    used.add(r)
                events.append((one(b, "domid"), one(b, "ring"), ts, op, b["thread"][i],
                               b["arg"][i], s))
            if refs:
                raise SystemExit("batch has %d string references left over" % len(refs))
            if len(used) != len(strs) or len(set(strs)) != len(strs):
                raise SystemExit("batch dictionary: %d strings, %d distinct, %d used: %r" %
                                 (len(strs), len(set(strs)), len(used), strs))
        else:
            (kind, body), = m.items()
            body = body[0]
            if kind == "domain_up":
                control.append(("domain_up", one(body, "domid"), one(body, "name", "")))
            elif kind == "domain_down":
                control.append(("domain_down", one(body, "domid"), one(body, "reason", "")))
            elif kind == "loss":
                control.append(("loss", one(body, "domid"), one(body, "ring"),
                                one(body, "lost_in_ring"), one(body, "dropped_for_client")))
            elif kind == "goodbye":
                control.append(("goodbye", one(body, "reason", "")))
    return events, control


def json_stream(path):
    events, control = [], []
    for line in open(path):
        o = json.loads(line)
        t = o["type"]
        if t == "event":
            events.append((o["domid"], o["ring"], o["ts"], o["op_code"], o["thread"], o["arg"],
                           o.get("str")))
        elif t == "domain_up":
            control.append(("domain_up", o["domid"], o["name"]))
        elif t == "domain_down":
            control.append(("domain_down", o["domid"], o["reason"]))
        elif t == "loss":
            control.append(("loss", o["domid"], o["ring"], o["lost_in_ring"],
                            o["dropped_for_client"]))
        elif t == "goodbye":
            control.append(("goodbye", o["reason"]))
    return events, control


TEXT_EV = re.compile(r'^(\d+)\.(\d{9}) dom=(\d+)(?:\("(?:[^"\\]|\\.)*"\))? ring=(\d+) (\S+)\s+'
                     r'thread=(idle|-?\d+)(.*)$')
TEXT_NUM = re.compile(r'\b(?:child|other|amount|value|duration_ns|port|ring_index|arg)=(-?\d+)')
TEXT_STR = re.compile(r'\b(?:exn|label|counter|name|str)="((?:[^"\\]|\\.)*)"')


def text_unescape(s):
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == "\\" and s[i + 1] == "x":
            out.append(int(s[i + 2:i + 4], 16))
            i += 4
        elif s[i] == "\\":
            out += s[i + 1].encode()
            i += 2
        else:
            out += s[i].encode()
            i += 1
    return out.decode("utf-8")


def text_stream(path):
    events = []
    for line in open(path, encoding="utf-8"):
        if line.startswith("#"):
            continue
        m = TEXT_EV.match(line.rstrip("\n"))
        if not m:
            raise SystemExit("text line does not parse: %r" % line)
        rest = m.group(7)
        num = TEXT_NUM.search(rest)
        st = TEXT_STR.search(rest)
        events.append((int(m.group(3)), int(m.group(4)),
                       int(m.group(1)) * 10**9 + int(m.group(2)), m.group(5),
                       -1 if m.group(6) == "idle" else int(m.group(6)),
                       int(num.group(1)) if num else None,
                       text_unescape(st.group(1)) if st else None))
    return events


def main():
    raw, txt, js, proto_dir, tests_dir, harness = sys.argv[1:7]
    pev, pctl = decoded_stream(raw, proto_dir, tests_dir)
    jev, jctl = json_stream(js)
    tev = text_stream(txt)
    sums = [] if harness.isdigit() else [json.load(open(p)) for p in harness.split(",")]
    want = int(harness) if harness.isdigit() else sum(s["events"] for s in sums)
    ok = True
    if len(pev) != want:
        print("protoc stream has %d events, %d were generated" % (len(pev), want))
        ok = False
    for s in sums:
        if "labels" not in s:
            continue
        got_l, got_c = {}, {}
        for d, _, _, op, _, _, st in pev:
            if d == s["domid"] and op == 5:
                got_l[st] = got_l.get(st, 0) + 1
            elif d == s["domid"] and op in (6, 11):
                got_c[st] = got_c.get(st, 0) + 1
        if got_l != s["labels"] or got_c != s["counters"]:
            print("domain %d strings differ from what its guest wrote:\n labels %r\n want   %r"
                  "\n counters %r\n want     %r" % (s["domid"], got_l, s["labels"], got_c,
                                                   s["counters"]))
            ok = False
    if pev != jev:
        diff = next((i for i, (a, b) in enumerate(zip(pev, jev)) if a != b), min(len(pev), len(jev)))
        print("JSON differs from protoc at event %d: %r vs %r" % (
            diff, pev[diff] if diff < len(pev) else None, jev[diff] if diff < len(jev) else None))
        ok = False
    if pctl != jctl:
        print("control messages differ:\n protoc %r\n json   %r" % (pctl, jctl))
        ok = False
    # The text form: same events; ops by name; switch and label print a zero argument
    # not at all.
    tconv = [(d, r, ts, OP_NAMES.get(op, "op%d" % op), th,
              None if op in (5, 7) and arg == 0 else arg, s)
             for d, r, ts, op, th, arg, s in pev]
    if tconv != tev:
        diff = next((i for i, (a, b) in enumerate(zip(tconv, tev)) if a != b), min(len(tconv), len(tev)))
        print("text differs from protoc at event %d: %r vs %r" % (
            diff, tconv[diff] if diff < len(tconv) else None, tev[diff] if diff < len(tev) else None))
        ok = False
    if not any(e[6] for e in pev):
        print("no strings in the stream: the test checks nothing of them")
        ok = False
    print("%d events, %d control messages compared" % (len(pev), len(pctl)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
