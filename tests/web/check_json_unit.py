#!/usr/bin/env python3
"""client/lib/json.c's escaper on every byte and on random bytes, and a Stats with
NaN/infinite rates (tests/web/json-unit.c): the output is strict UTF-8, valid JSON
(no NaN), has no raw control byte or U+2028/2029, and gives back the input wherever
the input was valid UTF-8 (invalid bytes: each one as the Latin-1 character).

Usage: check_json_unit.py JSON-UNIT DOCS/json.md
"""
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import json_schema  # noqa: E402


def run(prog, mode, data=b""):
    return subprocess.run([prog, mode], input=data, stdout=subprocess.PIPE, check=True).stdout


def want(data):
    """The escaper's rule: valid UTF-8 kept, each other byte read as Latin-1."""
    out, i = [], 0
    while i < len(data):
        for n in (1, 2, 3, 4):
            try:
                ch = data[i:i + n].decode("utf-8")
                if len(ch) == 1:
                    out.append(ch)
                    i += n
                    break
            except UnicodeDecodeError:
                pass
        else:
            out.append(chr(data[i]))
            i += 1
    return "".join(out)


def check(raw, where):
    obj = json_schema.parse(raw, where)  # strict UTF-8, no raw U+2028/9, no NaN
    if any(b < 0x20 or b == 0x7f for b in raw):
        raise json_schema.Bad("%s: a raw control byte in %r" % (where, raw[:80]))
    return obj


def main():
    prog, docs = sys.argv[1], sys.argv[2]
    rnd = random.Random(2026)
    cases = [bytes([b]) for b in range(1, 256)]
    cases += [b"\xe2\x80\xa8\xe2\x80\xa9", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80",
              b"\xf0\x9f\x98\x80", b"\xf0\x9f\x98", "ü€".encode(), b"\"\\/<>&'"]
    cases += [bytes(rnd.randrange(1, 256) for _ in range(rnd.randrange(1, 64)))
              for _ in range(400)]
    cases.append(b"\xff" * 60000)
    for c in cases:
        got = check(run(prog, "str", c), "str %r" % c[:40])
        if got != want(c):
            raise json_schema.Bad("str %r: decoded %r, want %r" % (c[:40], got[:40], want(c)[:40]))
    st = check(run(prog, "stats"), "stats")
    schema = json_schema.load_schema(docs)
    json_schema.top(schema, st, "stats", "stats")
    d = st["domains"][0]
    assert (d["rate_1s"], d["rate_10s"], d["rate_60s"]) == (0, 0, 0), d
    assert [c["name"] for c in d["counters"]] == ['"dup"', '"dup"'], d["counters"]
    assert st["threads"][0]["failure"] == "</script>"
    # mtrace-web's own objects: each as docs/json.md says, hostile names decoded back
    hostile = want(b'h"\\\n\xff\xe2\x80\xa8</script>')
    lines = run(prog, "web").split(b"\n")
    if len(lines) != 8 or lines[7] != b"":
        raise json_schema.Bad("web: %d lines, want 7" % (len(lines) - 1))
    objs = [check(raw, "web line %d" % (n + 1)) for n, raw in enumerate(lines[:7])]
    for obj, t in zip(objs[:4], ("hello", "daemon", "dropped", "domain_up")):
        json_schema.top(schema, obj, "web " + t, t)
    assert objs[0]["daemon"] == hostile and objs[0]["fleet"] is True, objs[0]
    assert objs[0]["types"][0] and objs[0]["instance"] == "feed", objs[0]
    assert list(objs[1])[:3] == ["v", "host", "type"] and objs[1]["host"] == hostile, objs[1]
    assert list(objs[3])[:3] == ["v", "host", "type"] and objs[3]["host"] == hostile, objs[3]
    assert objs[3]["domid"] == 4 and objs[3]["name"] == "guest", objs[3]
    for name, val in (("[web_domain]", objs[4]), ("[web_host]", objs[5]), ("browsers", objs[6])):
        json_schema.check_type(schema, name, val, "web " + name)
    assert "host" not in objs[4][0] and objs[4][1]["host"] == hostile, objs[4]
    assert objs[4][1]["name"] == hostile and objs[4][1]["reason"] == hostile, objs[4]
    assert objs[5][0]["stats"] is None and objs[5][1]["stats"]["type"] == "stats", objs[5]
    assert objs[6]["list"][0]["peer"] == hostile and objs[6]["count"] == 2, objs[6]
    print("ok: %d strings escaped to valid JSON and decoded back; NaN/inf stats valid; "
          "mtrace-web's objects as docs/json.md says" % len(cases))


if __name__ == "__main__":
    try:
        main()
    except (json_schema.Bad, AssertionError) as e:
        print("FAIL: %s" % e)
        sys.exit(1)
