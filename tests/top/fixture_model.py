#!/usr/bin/env python3
"""Compute, straight from a 2014 mirage-profile sexp trace, what mtraced should report
after the trace has been replayed once: event count, thread counts and the per-label
groups.  Written apart from mtrace-replay's C parser (its own tokenizer) so that the two
can check each other.

Thread semantics are those of docs (daemon/state.c): a thread exists once it is created,
or first seen as the current thread of an event, or resolved; `Creates` of an id already
held replaces it; a label's count is the number of distinct threads that ever took it
(a thread taking it again does not count again)."""
import json
import re
import sys

TOKEN = re.compile(r'\s*(?:(\()|(\))|"((?:[^"\\]|\\.)*)"|([^\s()";]+))', re.S)
ESC = {'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', '\\': '\\', '"': '"', "'": "'", ' ': ' '}


def unescape(s):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c != '\\':
            out.append(c)
            i += 1
            continue
        e = s[i + 1]
        if e in ESC:
            out.append(ESC[e])
            i += 2
        elif e.isdigit():
            out.append(chr(int(s[i + 1:i + 4])))
            i += 4
        elif e == 'x':
            out.append(chr(int(s[i + 2:i + 4], 16)))
            i += 4
        else:
            out.append('\\' + e)
            i += 2
    return ''.join(out)


def parse(line):
    stack, cur, pos = [], [], 0
    line = line.strip()
    while pos < len(line):
        m = TOKEN.match(line, pos)
        if not m:
            raise ValueError('bad token at %d' % pos)
        pos = m.end()
        if m.group(1):
            stack.append(cur)
            cur = []
        elif m.group(2):
            done, cur = cur, stack.pop()
            cur.append(done)
        elif m.group(3) is not None:
            cur.append(unescape(m.group(3)))
        else:
            cur.append(m.group(4))
    if stack or len(cur) != 1:
        raise ValueError('unbalanced')
    return cur[0]


def model(path, rings=1):
    threads = {}      # id -> {'pending': bool, 'label': str or None}
    labels = {}       # name -> [count, live]
    total = 0
    events = 0
    ops = {}

    def new(tid):
        nonlocal total
        threads[tid] = {'pending': True, 'label': None, 'becomes': -1, 'had': set()}
        total += 1

    def get(tid):
        if tid not in threads:
            new(tid)
        return threads[tid]

    def unlive(t):
        if t['pending'] and t['label'] is not None and labels[t['label']][1] > 0:
            labels[t['label']][1] -= 1

    for raw in open(path, encoding='utf-8', errors='surrogateescape'):
        if not raw.strip():
            continue
        rec = dict((f[0], f[1]) for f in parse(raw))
        op = rec['op']
        name, args = op[0], op[1:]
        events += 1
        ops[name] = ops.get(name, 0) + 1
        if name == 'Gc':
            continue
        cur = int(args[0])
        t = get(cur) if cur != -1 else None
        if name == 'Creates':
            child = int(args[1])
            if child == -1 or child == cur:
                continue
            if child in threads:
                unlive(threads[child])
                del threads[child]
            new(child)
        elif name == 'Resolves':
            r = int(args[1])
            if r == -1:
                continue
            rt = get(r)
            if rt['pending']:
                rt['pending'] = False
                if rt['label'] is not None and labels[rt['label']][1] > 0:
                    labels[rt['label']][1] -= 1
        elif name == 'Becomes' and t is not None:
            t['becomes'] = int(args[1])
        elif name == 'Label' and t is not None:
            lab = args[1]
            labels.setdefault(lab, [0, 0])
            if t['label'] == lab:
                continue
            unlive(t)
            t['label'] = lab
            if lab not in t['had']:
                t['had'].add(lab)
                labels[lab][0] += 1
            if t['pending']:
                labels[lab][1] += 1
    # mtrace-top's tree folds X into Y when X became Y (chains followed, 64 hops at most).
    def chain_end(i):
        for _ in range(64):
            b = threads[i]['becomes']
            if b < 0 or b not in threads or b == i:
                break
            i = b
        return i
    folded = sum(1 for i in threads if chain_end(i) != i)
    return {
        'tree_rows': len(threads) - folded,
        'events': events + rings,          # + one RING_START record per ring
        'trace_events': events,
        'threads_total': total,
        'threads_held': len(threads),
        'live': sum(1 for t in threads.values() if t['pending']),
        'labels': labels,
        'ops': ops,
    }


if __name__ == '__main__':
    json.dump(model(sys.argv[1]), sys.stdout, indent=1, sort_keys=True)
    print()
