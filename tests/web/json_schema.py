#!/usr/bin/env python3
"""Every JSON output of mtrace held to docs/json.md's tables: each object has every
field listed (those marked ? may be absent), of the type given, and nothing else;
top-level objects carry "v": 1 and the "type" they claim; the bytes are strict UTF-8
with no raw U+2028/2029 and no NaN or Infinity.

Usage: json_schema.py DOCS/json.md lines FILE.jsonl       (mtrace-cat -f json)
       json_schema.py DOCS/json.md sse FILE                (a capture of /events)
       json_schema.py DOCS/json.md state FILE              (/api/state)
Prints what it checked; exits 1 with the first violation.
"""
import collections
import json
import re
import sys

SSE_TYPES = {"b": "batch", "up": "domain_up", "down": "domain_down", "clock": "clock_map",
             "pair": "evtchn_pair",
             "loss": "loss", "vcpu": "vcpu", "skew": "host_skew",
             "stats": "stats", "hello": "hello", "daemon": "daemon", "dropped": "dropped"}


def load_schema(path):
    schema, cur = {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^### `(\w+)`", line)
        if m:
            cur = schema.setdefault(m.group(1), {})
            continue
        m = re.match(r"^\| `(\w+)(\?)?` \| `((?:[^`\\]|\\.)+)` \|", line)
        if m and cur is not None:
            cur[m.group(1)] = (m.group(3).replace("\\|", "|"), bool(m.group(2)))
    return schema


class Bad(Exception):
    pass


def check_type(schema, t, val, where):
    if t.endswith("|null"):
        if val is None:
            return
        t = t[:-5]
    if t == "int":
        ok = isinstance(val, int) and not isinstance(val, bool)
    elif t == "number":
        ok = isinstance(val, (int, float)) and not isinstance(val, bool)
    elif t == "string":
        ok = isinstance(val, str)
    elif t == "bool":
        ok = isinstance(val, bool)
    elif t.startswith("[") and t.endswith("]"):
        if not isinstance(val, list):
            raise Bad("%s: want an array of %s, got %r" % (where, t[1:-1], val))
        for i, x in enumerate(val):
            check_type(schema, t[1:-1], x, "%s[%d]" % (where, i))
        return
    elif t == "{int}":
        if not isinstance(val, dict):
            raise Bad("%s: want an object of integers, got %r" % (where, val))
        for k, x in val.items():
            check_type(schema, "int", x, "%s.%s" % (where, k))
        return
    elif t in schema:
        check_object(schema, t, val, where)
        return
    else:
        raise Bad("%s: the schema names an unknown type %r" % (where, t))
    if not ok:
        raise Bad("%s: want %s, got %r" % (where, t, val))


def check_object(schema, name, obj, where):
    if not isinstance(obj, dict):
        raise Bad("%s: want a %s object, got %r" % (where, name, obj))
    fields = schema[name]
    for k in obj:
        if k not in fields:
            raise Bad("%s: field %r is not in docs/json.md's %s" % (where, k, name))
    for k, (t, optional) in fields.items():
        if k not in obj:
            if not optional:
                raise Bad("%s: %s lacks %r" % (where, name, k))
            continue
        check_type(schema, t, obj[k], "%s.%s" % (where, k))


def reject_constant(c):
    raise Bad("non-JSON number %s" % c)


def parse(raw, where):
    try:
        text = raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        raise Bad("%s: not UTF-8: %s" % (where, e))
    if "\u2028" in text or "\u2029" in text:
        raise Bad("%s: raw U+2028/U+2029 (must be \\u escapes)" % where)
    try:
        return json.loads(text, parse_constant=reject_constant)
    except ValueError as e:
        raise Bad("%s: not JSON: %s" % (where, e))


def top(schema, obj, where, want_type=None):
    if not isinstance(obj, dict) or obj.get("v") != 1:
        raise Bad("%s: no \"v\":1 in %r" % (where, obj if not isinstance(obj, dict) else list(obj)[:4]))
    t = obj.get("type")
    if t not in schema or (want_type and t != want_type):
        raise Bad("%s: type %r (want %s)" % (where, t, want_type or "one of docs/json.md"))
    check_object(schema, t, obj, where)
    return t


def main():
    schema = load_schema(sys.argv[1])
    mode, path = sys.argv[2], sys.argv[3]
    raw = open(path, "rb").read()
    seen = collections.Counter()
    if mode == "lines":
        for n, line in enumerate(raw.split(b"\n"), 1):
            if line:
                seen[top(schema, parse(line, "line %d" % n), "line %d" % n)] += 1
    elif mode == "sse":
        # SSE framing: blank-line separated, "event:" names the kind, "data:" is one line
        for n, block in enumerate(raw.split(b"\n\n"), 1):
            ev, data = None, None
            for line in block.split(b"\n"):
                if line.startswith(b"event: "):
                    ev = line[7:].decode()
                elif line.startswith(b"data: "):
                    if data is not None:
                        raise Bad("message %d: two data lines" % n)
                    data = line[6:]
            if data is None:
                continue
            if ev not in SSE_TYPES:
                raise Bad("message %d: SSE event %r not in docs/json.md" % (n, ev))
            where = "message %d (%s)" % (n, ev)
            seen[top(schema, parse(data, where), where, SSE_TYPES[ev])] += 1
    elif mode == "state":
        obj = parse(raw, "/api/state")
        seen[top(schema, obj, "/api/state", "state")] += 1
        if obj["stats"] is not None:
            # the full form: what the per-second SSE stats leave out is here
            for k in ("threads", "labels", "sites", "site_drops", "site_edges"):
                if k not in obj["stats"]:
                    raise Bad("/api/state: stats lacks %r" % k)
            seen["stats"] += 1
    else:
        sys.exit(__doc__)
    print("%s %s: %s" % (mode, path, ", ".join("%s=%d" % kv for kv in sorted(seen.items()))))
    return seen


if __name__ == "__main__":
    try:
        main()
    except Bad as e:
        print("json_schema: %s: %s" % (sys.argv[3], e), file=sys.stderr)
        sys.exit(1)
