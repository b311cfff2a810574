#!/usr/bin/env python3
"""refusing-daemon.py SOCKET COUNT_FILE - a peer on mtraced's socket that speaks the
handshake right (Hello, protocol 1), then answers the Subscribe with Error BAD_REQUEST
and keeps the connection open, as a daemon that refuses a request may.  It writes the
number of connections it took to COUNT_FILE after each, so the test can see whether the
client gave up on the refused link and tried again."""
import os
import socket
import sys


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field_bytes(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def frame(msg):
    return varint(len(msg)) + msg


HELLO = field_bytes(1, b"\x08\x01" + field_bytes(2, b"refusing-daemon") + field_bytes(3, b"test"))
ERROR = field_bytes(7, b"\x08\x03" + field_bytes(2, b"test refusal"))

path, count_file = sys.argv[1], sys.argv[2]
if os.path.exists(path):
    os.unlink(path)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(8)
held = []
n = 0
while True:
    c, _ = srv.accept()
    n += 1
    c.sendall(frame(HELLO))
    c.settimeout(5)
    try:
        c.recv(65536)  # the client's Hello and (usually) its Subscribe
    except OSError:
        pass
    c.sendall(frame(ERROR))
    held.append(c)  # open: only the client's reading of Error ends this link
    with open(count_file + ".tmp", "w") as f:
        f.write("%d\n" % n)
    os.replace(count_file + ".tmp", count_file)
