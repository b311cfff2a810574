"""The op vocabulary for the Python tests, read from the C sources it is defined in:
op numbers from proto/mtrace-ring.h, names and strings from common/ops.c (one table
for the decoder, the daemon, mtrace-cat and these tests).

    import mtrace_ops
    mtrace_ops.BY_NAME["label"] -> 5;  mtrace_ops.NAMES[5] -> "label"
    mtrace_ops.STR_OPS -> {3, 5, 6, 11, 66};  mtrace_ops.MIRAGE -> names of ops 0..13
"""
import os
import re

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(rel):
    with open(os.path.join(_ROOT, rel), encoding="utf-8") as f:
        return f.read()


def _load():
    nums = {m.group(1): int(m.group(2)) for m in
            re.finditer(r"^\s*MTRACE_OP_(\w+)\s*=\s*(\d+)\s*,", _read("proto/mtrace-ring.h"), re.M)}
    mirage = int(re.search(r"#define\s+MTRACE_OP_COUNT_MIRAGE\s+(\d+)",
                           _read("proto/mtrace-ring.h")).group(1))
    ops = {}
    row = re.compile(r'^\s*\[MTRACE_OP_(\w+)\]\s*=\s*\{\s*"(\w+)",\s*(NULL|"\w+"),\s*(NULL|"\w+"),'
                     r'\s*MTRACE_ARG_(\w+),\s*(true|false),\s*(true|false)\s*\}', re.M)
    for m in row.finditer(_read("common/ops.c")):
        unq = lambda v: None if v == "NULL" else v.strip('"')
        ops[nums[m.group(1)]] = {"name": m.group(2), "arg": unq(m.group(3)),
                                 "str": unq(m.group(4)), "arg_kind": m.group(5).lower(),
                                 "event": m.group(7) == "true"}
    if len(ops) < mirage:
        raise RuntimeError("common/ops.c: op table not found (format changed?)")
    return ops, mirage


OPS, _MIRAGE_COUNT = _load()
EVENT_OPS = {op: d for op, d in OPS.items() if d["event"]}
NAMES = {op: d["name"] for op, d in EVENT_OPS.items()}
BY_NAME = {name: op for op, name in NAMES.items()}
STR_OPS = {op for op, d in EVENT_OPS.items() if d["str"]}
MIRAGE = [NAMES[op] for op in range(_MIRAGE_COUNT)]
