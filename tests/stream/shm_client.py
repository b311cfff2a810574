#!/usr/bin/env python3
"""shm_client.py - clients of mtraced that take shared-memory regions and keep them
(docs/stream-protocol.md, "Shared memory"), written against the wire format with no
help from the project's client library, as a hostile client would be.

  take SOCK N BASE      N connections, each subscribed to events of its own filter
                        (domain BASE+i, a domain that need not exist) with
                        shared_memory; prints "region I INODE SIZE" or
                        "refused I WHY" per connection, then "ready", and holds every
                        connection open until killed
  cycle SOCK ROUNDS FILL_S
                        ROUNDS times: connect, subscribe to every event with
                        shared_memory, map the region read-only and keep it (fd and
                        mapping), wait until mtraced has written the whole region or
                        FILL_S seconds passed, then drop the connection (not the region)
                        and connect again.  Prints "round I INODE SIZE WRITTEN" or
                        "round I refused WHY" per round, then "ready", and holds every
                        region until killed
"""
import array
import mmap
import os
import socket
import struct
import sys
import time


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from protowire import field, fields, frame, hello, read_varint  # noqa: E402


HELLO = hello("shm-client")


def subscribe(domid=None):
    body = b""
    if domid is not None:
        body += field(1, 0, domid)
    body += field(5, 0, 1) + field(80, 0, 1)
    return frame(field(2, 2, body))


def shared_ring(s, deadline_s=10.0):
    """Read frames until the SharedRing: (fields of it, the fd attached or None)."""
    buf, fd = b"", None
    s.settimeout(deadline_s)
    t0 = time.monotonic()
    while time.monotonic() - t0 < deadline_s:
        fds = array.array("i")
        data, anc, _, _ = s.recvmsg(1 << 20, socket.CMSG_LEN(4 * fds.itemsize))
        for level, kind, cdata in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(cdata[:len(cdata) - len(cdata) % fds.itemsize])
                fd = fds[0]
                for extra in fds[1:]:
                    os.close(extra)
        if not data:
            raise EOFError("mtraced closed the connection")
        buf += data
        while buf:
            try:
                n, i = read_varint(buf, 0)
            except IndexError:
                break
            if len(buf) < i + n:
                break
            msg = fields(buf[i:i + n])
            buf = buf[i + n:]
            if 7 in msg:
                raise EOFError("Error: %r" % fields(msg[7][0]))
            if 10 in msg:
                return fields(msg[10][0]), fd
    raise TimeoutError("no SharedRing")


def connect(path, sub):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(HELLO + sub)
    return s


def answer(ring, fd):
    """("region", inode, size) or ("refused", why)."""
    why = ring.get(5, [b""])[0].decode(errors="replace")
    if fd is None or why:
        if fd is not None:
            os.close(fd)
        return ("refused", why or "no fd")
    return ("region", os.fstat(fd).st_ino, ring.get(2, [0])[0])


def hold():
    print("ready", flush=True)
    while True:
        time.sleep(3600)


def take(path, n, base):
    keep = []
    for i in range(n):
        s = connect(path, subscribe(base + i))
        ring, fd = shared_ring(s)
        a = answer(ring, fd)
        keep.append((s, fd))
        print(" ".join(str(x) for x in (a[0], i) + a[1:]), flush=True)
    hold()


def cycle(path, rounds, fill_s):
    keep = []
    for i in range(rounds):
        s = connect(path, subscribe())
        ring, fd = shared_ring(s)
        a = answer(ring, fd)
        if a[0] != "region":
            print("round %d refused %s" % (i, a[1]), flush=True)
            s.close()
            continue
        size = a[2]
        m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ)
        data = size - 256
        t0 = time.monotonic()
        start = struct.unpack_from("<Q", m, 64)[0]
        written = 0
        while time.monotonic() - t0 < fill_s:
            written = struct.unpack_from("<Q", m, 64)[0] - start
            if written >= data:
                break
            time.sleep(0.05)
        keep.append((fd, m))
        print("round %d %d %d %d" % (i, a[1], size, written), flush=True)
        s.close()  # the region is kept: fd and mapping
    hold()


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "take":
        take(path, int(sys.argv[3]), int(sys.argv[4]))
    elif mode == "cycle":
        cycle(path, int(sys.argv[3]), float(sys.argv[4]))
    else:
        sys.exit("usage: shm_client.py take SOCK N BASE | cycle SOCK ROUNDS FILL_S")


if __name__ == "__main__":
    main()
