#!/usr/bin/env python3
"""Independent reader of a mirage-profile CTF trace buffer, written from the format
description (brief/mirage-profile.md §2) and sharing no code with daemon/mprof.c.
It is the reference the tests compare mtraced against.

Usage: ctf_reader.py FILE            -> JSON {"events", "per_op", "per_label", "packets"}
       ctf_reader.py --events FILE   -> one JSON event per line, in order
"""
import json
import struct
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import mtrace_ops  # noqa: E402  (the op table of common/ops.c)

MAGIC = 0xC1FC1FC1
UUID = bytes.fromhex("05883b8d521a487bb397456ab150680c")
HDR = 30
OPS = mtrace_ops.MIRAGE  # mirage-profile's CTF op numbering is the same
# payload after the 9-byte event header: (fixed bytes, has a NUL-terminated string)
PAYLOAD = {0: (17, False), 1: (16, False), 2: (16, False), 3: (16, True), 4: (16, False),
           5: (8, True), 6: (16, True), 7: (8, False), 8: (8, False), 9: (16, False),
           10: (16, False), 11: (16, True), 12: (16, False), 13: (16, False)}


def packets(buf):
    size = len(buf) // 4
    out = []
    for i in range(4):
        start = i * size
        end = len(buf) if i == 3 else start + size
        magic, = struct.unpack_from("<I", buf, start)
        if magic != MAGIC or buf[start + 4:start + 20] != UUID:
            raise ValueError("packet %d: bad magic or uuid" % i)
        bits, count, lo, hi = struct.unpack_from("<IHHH", buf, start + 20)
        content = lo | hi << 16
        if bits != (end - start) * 8 or content > bits or content % 8 or content < HDR * 8:
            raise ValueError("packet %d: bad sizes" % i)
        out.append((count, start, start + content // 8))
    return mtv_order(out)


def mtv_order(out):
    """Packets (counter, ...) in mirage-trace-viewer's order: the earliest is the first
    whose 16-bit counter jumps by > 0x8000 from its predecessor's."""
    if not out:
        return out
    first = out[0]
    prev = out[0][0]
    for p in out:
        if (p[0] - prev) & 0xFFFF > 0x8000:
            first = p
            break
        prev = p[0]
    return sorted(out, key=lambda p: (p[0] - first[0]) & 0xFFFF)


def events(buf):
    for count, start, end in packets(buf):
        pos = start + HDR
        while pos < end:
            ts, op = struct.unpack_from("<QB", buf, pos)
            fixed, has_str = PAYLOAD[op]
            p = pos + 9
            if p + fixed > end:
                raise ValueError("event cut at %d" % pos)
            f = buf[p:p + fixed]
            ev = {"ts": ts, "op": OPS[op]}
            if op == 8:
                ev["thread"] = -1
                ev["arg"] = struct.unpack("<q", f)[0]
            else:
                ev["thread"] = struct.unpack_from("<q", f)[0]
                ev["arg"] = struct.unpack_from("<q", f, 8)[0] if fixed >= 16 else 0
            if op == 0:
                ev["type"] = f[16]
            p += fixed
            if has_str:
                nul = buf.index(b"\0", p, end)
                ev["str"] = buf[p:nul].decode("utf-8", "replace")
                p = nul + 1
            yield ev
            pos = p


def main():
    args = sys.argv[1:]
    as_events = args and args[0] == "--events"
    if as_events:
        args = args[1:]
    buf = open(args[0], "rb").read()
    if as_events:
        for ev in events(buf):
            print(json.dumps(ev))
        return
    per_op, per_label, n = {}, {}, 0
    for ev in events(buf):
        n += 1
        per_op[ev["op"]] = per_op.get(ev["op"], 0) + 1
        if ev["op"] == "label":
            per_label[ev["str"]] = per_label.get(ev["str"], 0) + 1
    print(json.dumps({"events": n, "per_op": per_op, "per_label": per_label,
                      "packets": [p[0] for p in packets(buf)]}, sort_keys=True))


if __name__ == "__main__":
    main()
