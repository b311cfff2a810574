#!/usr/bin/env python3
"""spool_write.py FILE RECORD...: append records to an mtrace-ship spool file, in its
format (client/ship/spool.c: a 16-byte header of subject, id and payload lengths and
an event count, little-endian u32, then the three).  Each RECORD is SUBJECT|ID|PAYLOAD,
PAYLOAD one of:
  down:DOMID:REASON     a DomainDown frame
  goodbye:N             a Goodbye frame whose reason is N bytes long
  loss:N                a Loss notice frame of N events dropped for the client
  raw:TEXT              TEXT itself (not a frame)
and, as a RECORD of its own, `lengths:HUGE` a header announcing lengths past any bound
(then nothing): what a damaged or hostile file may hold.  In SUBJECT and ID, \\r and \\n
stand for CR and LF."""
import struct, sys


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, payload):
    """A length-delimited protobuf field."""
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def frame(server_msg):
    return varint(len(server_msg)) + server_msg


def payload(spec):
    kind, _, rest = spec.partition(":")
    if kind == "down":
        domid, _, reason = rest.partition(":")
        return frame(field(5, varint(1 << 3) + varint(int(domid)) + field(2, reason.encode())))
    if kind == "goodbye":
        return frame(field(8, field(1, b"x" * int(rest))))
    if kind == "loss":
        return frame(field(6, varint(4 << 3) + varint(int(rest))))
    if kind == "raw":
        return rest.encode()
    sys.exit("spool_write.py: bad payload " + spec)


def unescape(s):
    return s.replace("\\r", "\r").replace("\\n", "\n").encode()


with open(sys.argv[1], "ab") as f:
    for rec in sys.argv[2:]:
        if rec.startswith("lengths:"):
            f.write(struct.pack("<IIII", 0xFFFFFF00, 0xFFFFFF00, 0xFFFFFF00, 0))
            continue
        subject, ident, spec = rec.split("|", 2)
        subject, ident, data = unescape(subject), unescape(ident), payload(spec)
        f.write(struct.pack("<IIII", len(subject), len(ident), len(data), 0))
        f.write(subject + ident + data)
