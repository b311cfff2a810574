#!/usr/bin/env python3
"""The strings-guest's hostile strings after the whole chain: in mtrace-cat's JSON each
label is the string the guest wrote, with each byte that is not UTF-8 replaced by '?'
(as mtraced does), nothing else changed; the text form has no control byte and no
byte outside printable ASCII.

Usage: check_strings.py STRINGS.jsonl TEXT-OUTPUT
"""
import json
import sys

HOSTILE = [
    b"quote\"d \"label\"",
    b"back\\slash \\\" \\u0000 \\n",
    b"ctl \x01\x02\x07\x08\x0b\x0c\x0e\x1f\x7f end",
    b"esc \x1b[31mred\x1b[0m \x1b]0;title\x07 \r\n\t",
    b"bad utf8 \xff\xfe \xc3\x28 \xe2\x82 \xf0\x9f\x98 \xed\xa0\x80 \xc0\xaf",
    b"ok utf8 \xc3\xbc\xc3\xb1\xc3\xae \xe2\x82\xac \xf0\x9f\x98\x80",
    b"</script><b>html</b> & 'apos' ,;{}[]",
    b"",
]
STR_MAX = 4096 - 32 - 1
HOSTILE.append(b'"\\' + b"x" * (STR_MAX - 2))


def utf8_len(s, i):
    """common/utf8.c's rule."""
    c = s[i]
    if c < 0x80:
        return 1
    if 0xc2 <= c <= 0xdf:
        n, cp = 2, c & 0x1f
    elif 0xe0 <= c <= 0xef:
        n, cp = 3, c & 0x0f
    elif 0xf0 <= c <= 0xf4:
        n, cp = 4, c & 0x07
    else:
        return 0
    for k in range(1, n):
        if i + k >= len(s) or s[i + k] & 0xc0 != 0x80:
            return 0
        cp = cp << 6 | (s[i + k] & 0x3f)
    if (n == 3 and (cp < 0x800 or 0xd800 <= cp <= 0xdfff)) or \
            (n == 4 and (cp < 0x10000 or cp > 0x10ffff)):
        return 0
    return n


def fixed(s):
    out, i = bytearray(), 0
    while i < len(s):
        n = utf8_len(s, i)
        if n == 0:
            out += b"?"
            i += 1
        else:
            out += s[i:i + n]
            i += n
    return out.decode("utf-8")


def main():
    want = [fixed(s) for s in HOSTILE]
    labels, fails, counters = [], [], set()
    for line in open(sys.argv[1], encoding="utf-8"):
        d = json.loads(line)
        if d.get("type") != "event":
            continue
        if d["op"] == "label":
            labels.append(d["str"])
        elif d["op"] == "fails":
            fails.append(d["str"])
        elif d["op"] in ("counter", "increase"):
            counters.add(d["str"])
    fail = 0
    if labels != want:
        for i, (a, b) in enumerate(zip(labels, want)):
            if a != b:
                print("label %d: got %r, want %r" % (i, a[:80], b[:80]))
        print("labels: %d, want %d" % (len(labels), len(want)))
        fail = 1
    if fails != want[1::2] or counters != set(want):
        print("exceptions or counter names differ")
        fail = 1
    text = open(sys.argv[2], "rb").read()
    bad = [b for b in set(text) if (b < 0x20 and b != 0x0a) or b >= 0x7f]
    if bad:
        print("text output carries bytes %s" % sorted(bad))
        fail = 1
    print("%d hostile labels, %d exceptions, %d counter names intact" %
          (len(labels), len(fails), len(counters)))
    sys.exit(fail)


if __name__ == "__main__":
    main()
