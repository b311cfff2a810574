#!/usr/bin/env python3
"""hostile-client.py - clients of mtraced that misbehave, written against the wire format
(proto/mtrace.proto) with no help from the project's client library.

  pings SOCK SECONDS            Hello, then Pings as fast as the socket takes them, never
                                reading, until the daemon closes us or SECONDS pass;
                                prints "sent N" and whether the daemon closed us
  noread SOCK N SECONDS         N clients subscribe to every event and never read
  silent SOCK N SECONDS [hello] N connections that never send Hello (with "hello": that
                                send Hello, then nothing, never a Subscribe); prints how
                                many were refused at once, closed by the daemon later,
                                still open
  drip SOCK HELLO_MS SECONDS    Hello, then never a Subscribe but a Ping half-sent across
                                each handshake deadline (HELLO_MS after the Hello, then
                                every 5 s: mtraced defers it once for a half-sent frame),
                                finished 0.5 s after it; prints "closed after S s errors
                                CODE:N" or "open after S s"
  badsub SOCK                   a Subscribe with an unknown field under a non-minimal tag
                                (protobuf-c accepts it); prints "error CODE MSG",
                                "events N" or "nothing"
  stats SOCK [labels|top]       one Stats with label statistics (or top-N 1000): prints
                                its size and the *_omitted fields
  filters SOCK N K SECONDS      N clients, each with K label prefixes (the last one
                                "label-", matching), events, Stats every 100 ms with
                                top 1000 and label statistics; they read everything
"""
import os
import select
import socket
import sys
import time


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from protowire import field, fields, frame, hello, read_varint, varint  # noqa: E402


HELLO = hello("hostile-client")


def ping(cookie):
    return frame(field(3, 2, field(1, 0, cookie)))


def subscribe(body):
    return frame(field(2, 2, body))


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


class Reader:
    def __init__(self, s):
        self.s, self.buf, self.eof = s, b"", False

    def msg(self, timeout):
        """next ServerMsg as {field: [..]}, or None at EOF/timeout"""
        end = time.time() + timeout
        while True:
            if self.buf:
                try:
                    ln, i = read_varint(self.buf, 0)
                    if len(self.buf) >= i + ln:
                        m = self.buf[i:i + ln]
                        self.buf = self.buf[i + ln:]
                        return fields(m)
                except IndexError:
                    pass
            left = max(0, end - time.time())
            if self.eof or not select.select([self.s], [], [], left)[0]:
                return None
            try:
                d = self.s.recv(1 << 20)
            except (ConnectionResetError, BrokenPipeError):
                d = b""
            if not d:
                self.eof = True
                return None
            self.buf += d


def closed_by_peer(s):
    """True if the daemon closed s (EOF or reset), False if it is still open."""
    s.setblocking(False)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return True
    except BlockingIOError:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True


def cmd_pings(path, secs):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(path)
    s.sendall(HELLO)
    s.setblocking(False)
    chunk = b"".join(ping(i) for i in range(1000))
    sent, closed, end = 0, False, time.time() + float(secs)
    pending = b""
    while time.time() < end:
        if not pending:
            pending = chunk
        try:
            n = s.send(pending)
            pending = pending[n:]
            if not pending:
                sent += 1000
        except BlockingIOError:
            select.select([], [s], [], 0.05)
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
    print("sent %d closed %s" % (sent, closed))


def cmd_noread(path, n, secs):
    socks = []
    for i in range(int(n)):
        # each its own filter (a domain that does not exist besides every one that
        # does): no two share a group, so none shares the others' encoded batches
        body = field(5, 0, 1) + field(1, 2, b"".join(varint(d) for d in
                                                      list(range(1, 64)) + [30000 + i]))
        s = connect(path)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(HELLO + subscribe(body))
        socks.append(s)
    print("connected %d" % len(socks), flush=True)
    time.sleep(float(secs))


def cmd_silent(path, n, secs, hello=None):
    socks, refused = [], 0
    for _ in range(int(n)):
        s = connect(path)
        if hello:
            s.sendall(HELLO)
        r = Reader(s)
        socks.append((s, r))
    time.sleep(0.3)
    # refused: the daemon sent an Error (code 5) and closed at once (after its Hello,
    # to a client that sent one); any other Error is the later closing, counted below
    live, gone, codes = [], set(), {}
    for s, r in socks:
        first = r.msg(0.2)
        if first and hello and 1 in first:
            first = r.msg(0.2)
        code = fields(first[7][0]).get(1, [0])[0] if first and 7 in first else None
        if code == 5:
            refused += 1
            continue
        if code is not None:
            codes[code] = codes.get(code, 0) + 1
        live.append((s, r))
    print("refused %d" % refused, flush=True)
    end = time.time() + float(secs)
    while time.time() < end and len(gone) < len(live):
        for k, (s, r) in enumerate(live):
            if k in gone:
                continue
            m = r.msg(0)
            if m and 7 in m:
                code = fields(m[7][0]).get(1, [0])[0]
                codes[code] = codes.get(code, 0) + 1
            if r.eof:
                gone.add(k)
        time.sleep(0.1)
    print("closed %d open %d errors %s" % (len(gone), len(live) - len(gone),
                                          ",".join("%d:%d" % kv for kv in sorted(codes.items()))))


def cmd_drip(path, hello_ms, secs):
    s = connect(path)
    r = Reader(s)
    t0 = time.time()
    s.sendall(HELLO)
    codes, p = {}, ping(7)
    deadline = t0 + float(hello_ms) / 1000
    while time.time() - t0 < float(secs):
        for when, part in ((deadline - 0.5, p[:2]), (deadline + 0.5, p[2:])):
            while time.time() < when and not r.eof:
                m = r.msg(max(0, when - time.time()))
                if m and 7 in m:
                    code = fields(m[7][0]).get(1, [0])[0]
                    codes[code] = codes.get(code, 0) + 1
            if r.eof:
                break
            try:
                s.sendall(part)
            except (BrokenPipeError, ConnectionResetError):
                r.eof = True
                break
        if r.eof:
            print("closed after %.1f s errors %s" % (time.time() - t0, ",".join(
                "%d:%d" % kv for kv in sorted(codes.items()))))
            return
        deadline += 5
    print("open after %.1f s" % (time.time() - t0))


def cmd_badsub(path):
    s = connect(path)
    r = Reader(s)
    # events=true, then field 100 (varint 7) whose key is written in 3 bytes, not 2
    key = (100 << 3) | 0
    nonminimal = bytes([0x80 | (key & 0x7F), 0x80 | ((key >> 7) & 0x7F), 0x00])
    body = field(5, 0, 1) + nonminimal + varint(7)
    s.sendall(HELLO + subscribe(body))
    events = 0
    end = time.time() + 3
    while time.time() < end:
        m = r.msg(end - time.time())
        if m is None:
            break
        if 7 in m:
            e = fields(m[7][0])
            print("error %d %s" % (e.get(1, [0])[0], e.get(2, [b""])[0].decode()))
            return
        if 2 in m:
            events += 1
    print("events %d" % events if events else "nothing")


def cmd_stats(path, what="labels"):
    s = connect(path)
    r = Reader(s)
    body = field(6, 0, 100)
    body += field(10, 0, 1) if what == "labels" else field(7, 0, 1000) + field(11, 0, 1)
    s.sendall(HELLO + subscribe(body))
    end = time.time() + 10
    while time.time() < end:
        m = r.msg(end - time.time())
        if m is None:
            break
        if 3 in m:
            st = fields(m[3][0])
            size = len(m[3][0])
            cnt_om = sum(fields(d).get(33, [0])[0] for d in st.get(2, []))
            ncounters = sum(len(fields(d).get(15, [])) for d in st.get(2, []))
            print("stats bytes=%d domains=%d labels=%d threads=%d counters=%d "
                  "labels_omitted=%d threads_omitted=%d counters_omitted=%d" % (
                      size, len(st.get(2, [])), len(st.get(4, [])), len(st.get(3, [])),
                      ncounters, st.get(30, [0])[0], st.get(31, [0])[0], cnt_om))
            for d in st.get(2, []):
                f = fields(d)
                print("domain %d labels_dropped=%d counters_dropped=%d failures_dropped=%d "
                      "counters=%d" % (f.get(1, [0])[0], f.get(30, [0])[0], f.get(31, [0])[0],
                                       f.get(32, [0])[0], len(f.get(15, []))))
            return
    print("no stats")
    sys.exit(1)


def cmd_filters(path, n, k, secs):
    socks = []
    for c in range(int(n)):
        body = field(5, 0, 1) + field(6, 0, 100) + field(7, 0, 1000) + field(10, 0, 1)
        for j in range(int(k) - 1):
            body += field(4, 2, ("x%d-%d-never" % (c, j)).encode())
        body += field(4, 2, b"label-")
        s = connect(path)
        s.sendall(HELLO + subscribe(body))
        s.setblocking(False)
        socks.append(s)
    end, got = time.time() + float(secs), 0
    while time.time() < end:
        for s in select.select(socks, [], [], 0.1)[0]:
            try:
                got += len(s.recv(1 << 20))
            except BlockingIOError:
                pass
    print("filters: %d clients read %d bytes" % (len(socks), got))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"pings": cmd_pings, "noread": cmd_noread, "silent": cmd_silent,
     "badsub": cmd_badsub, "stats": cmd_stats, "drip": cmd_drip,
     "filters": cmd_filters}[cmd](*args)


if __name__ == "__main__":
    main()
