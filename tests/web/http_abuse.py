#!/usr/bin/env python3
"""http_abuse.py abuse URL PID | token URL PID TOKEN | strict URL PID PATH | unix SOCKET PATH - HTTP checks
of mtrace-web, and (strict) of the front it shares with mtrace-exporter."""
import json
import resource
import selectors
import socket
import sys
import time
import urllib.parse

failed = False


def check(ok, what):
    global failed
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failed = True
    return ok


def raw(host, port, data, timeout=5.0, read_all=True):
    """Send bytes, return (status, headers, body) or (None, None, b'') on close."""
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        s.sendall(data)
        buf = b""
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            buf += chunk
            if not read_all and b"\r\n\r\n" in buf:
                break
    finally:
        s.close()
    if not buf.startswith(b"HTTP/1."):
        return None, None, buf
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    hdrs = {}
    for l in lines[1:]:
        k, _, v = l.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return status, hdrs, body


def get(host, port, path, extra=b"", method=b"GET", host_hdr=b"127.0.0.1"):
    req = method + b" " + path + b" HTTP/1.1\r\nHost: " + host_hdr + b"\r\nConnection: close\r\n" + extra + b"\r\n"
    return raw(host, port, req)


def strict(host, port, path):
    """The front's rules (client/lib/http-front.h), the same for mtrace-web and
    mtrace-exporter: methods, malformed requests, header size, the loopback Host check
    and strict framing."""
    st, h, _ = get(host, port, path)
    check(st == 200 and h.get("x-content-type-options") == "nosniff" and h.get("cache-control") == "no-store",
          f"GET {path.decode()}: {st}, nosniff, no-store")
    for m in [b"POST", b"PUT", b"DELETE", b"OPTIONS", b"PATCH", b"TRACE"]:
        st, h, _ = get(host, port, path, method=m, extra=b"Content-Length: 0\r\n")
        check(st == 405 and h.get("allow") == "GET, HEAD", f"{m.decode()} {path.decode()}: {st}, Allow: {h.get('allow') if h else None}")
    for junk in [b"BREW / HTTP/1.1\r\nHost: x\r\n\r\n", b"\x00\x01\x02 garbage\r\n\r\n",
                 b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", b"GET /\r\n\r\n",
                 b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 999999999\r\n\r\nx"]:
        st, _, _ = raw(host, port, junk)
        check(st is not None and 400 <= st < 600, f"malformed request {junk[:24]!r}: {st}")
    st, _, _ = get(host, port, path, extra=b"X-Big: " + b"b" * 20000 + b"\r\n")
    check(st == 400, f"20 KB header: {st} (400, as mtrace-web(1) says)")
    st, _, _ = get(host, port, path, extra=b"".join(b"X-H%d: v\r\n" % i for i in range(2000)))
    check(st in (400, 413, 431), f"2,000 headers: {st}")
    st, _, _ = get(host, port, path, host_hdr=b"attacker.example")
    check(st == 421, f"Host: attacker.example on loopback (DNS rebinding): {st}")

    # Requests a proxy on the way could read otherwise (RFC 9112 3.2, 6.3): 400.
    for what, req in [
            ("HTTP/1.1 without Host", b"GET " + path + b" HTTP/1.1\r\nConnection: close\r\n\r\n"),
            ("two Host headers", b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n"),
            ("an absolute URL naming another host",
             b"GET http://attacker.example" + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
            ("two Content-Length headers",
             b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")]:
        st, _, _ = raw(host, port, req)
        check(st == 400, f"{what}: {st}")
    st, _, _ = raw(host, port, b"GET http://127.0.0.1" + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    check(st == 200, f"an absolute URL naming the Host: {st}")
    st, _, _ = raw(host, port, b"GET " + path + b" HTTP/1.0\r\n\r\n")
    check(st == 200, f"HTTP/1.0 without Host: {st}")



def abuse(host, port):
    st, h, body = get(host, port, b"/")
    check(st == 200 and h.get("content-type", "").startswith("text/html"), "GET / is the page")
    check("script-src 'self'" in h.get("content-security-policy", ""), "with a Content-Security-Policy")
    check(h.get("x-content-type-options") == "nosniff", "and nosniff")
    for p in [b"/app.js", b"/model.js", b"/render.js", b"/pairs.js", b"/style.css", b"/favicon.svg"]:
        st, _, _ = get(host, port, p)
        check(st == 200, f"GET {p.decode()} {st}")
    st, h, body = get(host, port, b"/api/state")
    check(st == 200 and json.loads(body)["connected"] is True, "GET /api/state: JSON, connected to mtraced")
    st, _, body = get(host, port, b"/", method=b"HEAD")
    check(st == 200 and body == b"", "HEAD / without a body")

    for p in [b"/../../etc/passwd", b"/%2e%2e/%2e%2e/etc/passwd", b"/app.js/../../../etc/passwd",
              b"/page/index.html", b"/index.html%00.js", b"//etc/passwd", b"/nope", b"/events/x",
              b"/" + b"a" * 6000]:
        st, _, body = get(host, port, p)
        check(st in (400, 404, 413, 414), f"GET {p[:40].decode()}{'...' if len(p) > 40 else ''}: {st}")
        check(b"root:" not in body, "  nothing of /etc/passwd")
    strict(host, port, b"/")

    # A Last-Event-ID whose id is the largest number: not a place in the history
    # (id + 1 must not wrap to the first message), so the browser starts afresh.
    st, _, body = get(host, port, b"/api/state")
    inst = json.loads(body)["instance"]
    def hello(extra):
        s = socket.create_connection((host, port), timeout=5)
        s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra + b"\r\n")
        buf = b""
        while b'"history_first_event"' not in buf or not buf.endswith(b"\n"):
            d = s.recv(65536)
            if not d:
                break
            buf += d
        s.close()
        return (200 if buf.startswith(b"HTTP/1.1 200") else None), buf
    st, body = hello(b"Last-Event-ID: " + inst.encode() + b".18446744073709551615.0\r\n")
    fresh = hello(b"")[1]
    def first_event(b):
        for line in b.split(b"\n"):
            if line.startswith(b"data: {") and b'"history_first_event"' in line:
                return json.loads(line[6:])["history_first_event"]
        return None
    check(st == 200 and first_event(body) is not None and first_event(body) == first_event(fresh),
          f"Last-Event-ID {inst}.18446744073709551615.0: starts where a new browser does "
          f"({first_event(body)} vs {first_event(fresh)})")

    # Slowloris: 100 connections from another address (127.0.0.2: the per-source cap
    # takes 64 of them) trickle their headers; all are cut after the request deadline
    # (--request-timeout 2) or refused, and the server answers others meanwhile.
    slow = []
    for i in range(100):
        s = socket.create_connection((host, port), source_address=("127.0.0.2", 0))
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        s.setblocking(False)
        slow.append(s)
    t0 = time.monotonic()
    served = []
    open_ = set(range(len(slow)))
    while open_ and time.monotonic() - t0 < 12:
        for i in list(open_):
            try:
                slow[i].send(b"X")
                d = slow[i].recv(100)
                if d == b"":
                    open_.discard(i)
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                open_.discard(i)
        a = time.monotonic()
        st, _, _ = get(host, port, b"/api/state")
        served.append((st, time.monotonic() - a))
        time.sleep(0.5)
    cut = time.monotonic() - t0
    for s in slow:
        s.close()
    check(not open_, f"slowloris: all 100 trickling connections cut after {cut:.1f} s ({len(open_)} left)")
    check(all(st == 200 for st, _ in served), f"  others served meanwhile ({len(served)} requests, slowest {max(d for _, d in served):.2f} s)")

    # 1,000 connections at once, each asking for the state.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    sel = selectors.DefaultSelector()
    conns = []
    for i in range(1000):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex((host, port))
        conns.append(s)
        sel.register(s, selectors.EVENT_WRITE, [i, b""])
    statuses = {}
    t0 = time.monotonic()
    pending = len(conns)
    while pending and time.monotonic() - t0 < 30:
        for key, ev in sel.select(timeout=1):
            s, data = key.fileobj, key.data
            if ev & selectors.EVENT_WRITE:
                try:
                    s.send(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass
                sel.modify(s, selectors.EVENT_READ, data)
                continue
            try:
                chunk = s.recv(65536)
            except OSError:
                chunk = b""
            if chunk:
                data[1] += chunk
                continue
            sel.unregister(s)
            pending -= 1
            line = data[1].split(b"\r\n", 1)[0]
            st = int(line.split()[1]) if line.startswith(b"HTTP/1.") else None
            statuses[st] = statuses.get(st, 0) + 1
    for s in conns:
        s.close()
    check(pending == 0, f"1,000 connections: all answered ({pending} left) in {time.monotonic() - t0:.1f} s")
    check(set(statuses) <= {200, 503} and statuses.get(200, 0) > 0, f"  with 200 or 503 only: {statuses}")
    time.sleep(1.5)
    st, _, body = get(host, port, b"/api/state")
    check(st == 200, "served normally afterwards")
    web = json.loads(body)["web"]
    print(f"# after: {web['connections']} connections, {web['refused_connections']} refused, "
          f"{web['cut_connections']} cut by the header deadline")


def token(host, port, tok):
    st, h, _ = get(host, port, b"/")
    check(st == 401 and "bearer" in h.get("www-authenticate", "").lower(), f"no token: {st}")
    for p in [b"/events", b"/api/state", b"/app.js", b"/nope"]:
        st, _, _ = get(host, port, p)
        check(st == 401, f"no token, {p.decode()}: {st}")
    st, _, _ = get(host, port, b"/", extra=b"Authorization: Bearer " + b"x" * len(tok) + b"\r\n")
    check(st == 403, f"wrong token (same length): {st}")
    st, _, _ = get(host, port, b"/", extra=b"Authorization: Bearer " + tok.encode()[:-1] + b"\r\n")
    check(st == 403, f"token prefix: {st}")
    st, _, _ = get(host, port, b"/", extra=b"Authorization: Bearer " + tok.encode() + b"extra\r\n")
    check(st == 403, f"token with more after it: {st}")
    st, _, _ = get(host, port, b"/", extra=b"Cookie: mtrace_token=nope\r\n")
    check(st == 403, f"wrong cookie: {st}")
    st, _, _ = get(host, port, b"/api/state?token=nope")
    check(st == 403, f"wrong ?token=: {st}")
    st, _, _ = get(host, port, b"/", extra=b"Authorization: Bearer " + tok.encode() + b"\r\n")
    check(st == 200, f"right token (Bearer): {st}")
    st, h, _ = get(host, port, b"/?token=" + urllib.parse.quote(tok).encode())
    cookie = h.get("set-cookie", "") if h else ""
    check(st == 200 and cookie.startswith("mtrace_token=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie,
          f"right ?token=: {st}, Set-Cookie HttpOnly SameSite=Strict")
    st, h, body = raw(host, port, b"GET /events HTTP/1.1\r\nHost: x\r\nCookie: a=b; mtrace_token=" + tok.encode() + b"\r\n\r\n",
                      timeout=2, read_all=False)
    check(st == 200 and h.get("content-type") == "text/event-stream", f"the feed with the cookie: {st}")
    st, _, _ = get(host, port, b"/", host_hdr=b"attacker.example", extra=b"Authorization: Bearer " + tok.encode() + b"\r\n")
    check(st == 200, "with a token, any Host name")


def unix(path, good):
    """On a Unix socket (--listen unix:PATH): mode 0660, no Host check (a browser
    cannot reach it, so nothing to rebind), the strict framing still."""
    import os
    import stat
    mode = stat.S_IMODE(os.stat(path).st_mode)
    check(mode == 0o660, f"unix:{path}: mode {mode:o}")

    def ask(req):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        s.connect(path)
        s.sendall(req)
        buf = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            buf += d
        s.close()
        return int(buf.split(None, 2)[1]) if buf.startswith(b"HTTP/1.") else None
    g = good.encode()
    st = ask(b"GET " + g + b" HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n")
    check(st == 200, f"GET {good} on the Unix socket, any Host: {st}")
    st = ask(b"GET " + g + b" HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n")
    check(st == 400, f"two Host headers on the Unix socket: {st}")
    st = ask(b"POST " + g + b" HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    check(st == 405, f"POST on the Unix socket: {st}")


def main():
    if sys.argv[1] == "unix":
        unix(sys.argv[2], sys.argv[3])
        return 1 if failed else 0
    mode, url = sys.argv[1], urllib.parse.urlparse(sys.argv[2])
    host, port = url.hostname, url.port
    if mode == "abuse":
        abuse(host, port)
    elif mode == "strict":
        strict(host, port, sys.argv[4].encode())
    else:
        token(host, port, sys.argv[4])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
