#!/usr/bin/env python3
"""Read mtrace-top's batch output and compare it with what the fixture says.

  topcheck.py wait TOP SOCK DOMAIN=EVENTS...    poll until each domain reports EVENTS
  topcheck.py fixture TOP SOCK FIXTURE DOMAIN:PASSES...
                                                the label groups, thread counts, event
                                                counts, rows, sort order and tree of each
                                                domain against fixture_model.py
  topcheck.py clock TOP SOCK CAT DOMAIN=SOURCE...  each domain's CLOCK and CLK-UNC are
                                                the clock map in force (what mtrace-cat
                                                -f json is told at subscribe), its
                                                source the one given
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_model  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL: ' + what, file=sys.stderr)


def run_top(top, sock, *args, timeout=20):
    p = subprocess.run([top, '-b', '-n', '1', '-d', '0.2', '-S', sock] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError('mtrace-top %s: exit %d: %s' % (' '.join(args), p.returncode,
                                                           p.stderr.strip()))
    return parse_frame(p.stdout)


def parse_frame(text):
    """One batch frame: the summary lines, the domain table, the view's table.  Every
    column is one word except the last (LABEL / COUNTERS), which takes the rest."""
    lines = text.rstrip('\n').split('\n')
    frame = {'head': lines[0], 'desc': lines[1], 'domains': {}, 'title': [], 'rows': []}
    i = 2
    dtitle = lines[i].split()
    i += 1
    while i < len(lines) and lines[i] != '':
        if not lines[i].startswith('('):
            cols = lines[i].split(None, len(dtitle) - 1)
            frame['domains'][cols[0]] = dict(zip(dtitle, cols))
        i += 1
    i += 1
    frame['title'] = [t.rstrip('v^') for t in lines[i].split()]
    for line in lines[i + 1:]:
        if line:
            frame['rows'].append(line.split(None, len(frame['title']) - 1))
    return frame


def domain_events(top, sock):
    try:
        return {n: int(d['EVENTS']) for n, d in run_top(top, sock, '-N', '0')['domains'].items()}
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print('waiting: %s' % e, file=sys.stderr)
        return {}


def wait(top, sock, want, limit=40):
    deadline = time.time() + limit
    seen = {}
    while time.time() < deadline:
        seen = domain_events(top, sock)
        if all(seen.get(n) == e for n, e in want.items()):
            return True
        time.sleep(0.3)
    print('FAIL: events never reached %s (last seen %s)' % (want, seen), file=sys.stderr)
    return False


def times(m, k):
    """The model of k passes: each pass's threads are new threads (mtrace-replay shifts
    the ids), RING_START is written once."""
    return {
        'events': m['trace_events'] * k + (m['events'] - m['trace_events']),
        'threads_total': m['threads_total'] * k,
        'threads_held': m['threads_held'] * k,
        'live': m['live'] * k,
        'tree_rows': m['tree_rows'] * k,
        'labels': {l: [c * k, v * k] for l, (c, v) in m['labels'].items()},
    }


def check_domain(top, sock, name, exp):
    f = run_top(top, sock, '-N', '0')
    d = f['domains'].get(name)
    check(d is not None, '%s: not in the domain table' % name)
    if d is None:
        return
    check(int(d['EVENTS']) == exp['events'], '%s: EVENTS %s != %d' % (name, d['EVENTS'], exp['events']))
    check(int(d['THREADS']) == exp['threads_total'],
          '%s: THREADS %s != %d' % (name, d['THREADS'], exp['threads_total']))
    check(int(d['LIVE']) == exp['live'], '%s: LIVE %s != %d' % (name, d['LIVE'], exp['live']))
    # docs/figures.md: every thread created is pending or ended (none evicted here)
    check(int(d['ENDED']) == exp['threads_total'] - exp['live'],
          '%s: ENDED %s != %d' % (name, d['ENDED'], exp['threads_total'] - exp['live']))
    check(int(d['LOST']) == 0 and int(d['CORRUPT']) == 0, '%s: lost/corrupt not 0: %s' % (name, d))
    check(d['KIND'] == 'ring', '%s: KIND %s' % (name, d['KIND']))

    # The group-by-label view: one row per label, count and live as the fixture says.
    g = run_top(top, sock, '-g', '-D', name)
    got = {r[-1]: [int(r[1]), int(r[2])] for r in g['rows']}
    check(g['title'][:4] == ['DOMAIN', 'COUNT', 'LIVE', 'CURRENT'], 'label view title %s' % g['title'])
    # each label's current at most its count, live at most its current
    check(all(int(r[2]) <= int(r[3]) <= int(r[1]) for r in g['rows']),
          '%s: a label with LIVE > CURRENT or CURRENT > COUNT: %s' % (name, g['rows']))
    check(all(r[0] == name for r in g['rows']), '%s: -D let other domains through' % name)
    check(got == exp['labels'], '%s: label groups differ:\n  got  %s\n  want %s' %
          (name, sorted(got.items()), sorted(exp['labels'].items())))

    # Pending threads only (the default): as many rows as live threads.
    t = run_top(top, sock, '-D', name, '-N', '1000')
    states = [r[3] for r in t['rows']]
    check(len(t['rows']) == min(exp['live'], 1000),
          '%s: %d pending rows, want %d' % (name, len(t['rows']), exp['live']))
    check(set(states) <= {'pending'}, '%s: finished threads without -f: %s' % (name, set(states)))
    return t


def check_once(top, sock, name, exp):
    """A domain small enough for every thread to fit in one Stats."""
    t = run_top(top, sock, '-D', name, '-N', '1000', '-f')
    check(len(t['rows']) == exp['threads_held'],
          '%s: %d rows with -f, want %d' % (name, len(t['rows']), exp['threads_held']))
    check(sum(1 for r in t['rows'] if r[3] == 'pending') == exp['live'],
          '%s: pending rows != live' % name)
    ids = [int(r[1]) for r in t['rows']]
    check(len(set(ids)) == len(ids), '%s: a thread shown twice' % name)

    # Sorting by a column, both ways.
    col = t['title'].index('READS')
    for args, desc in ((['-o', 'READS'], True), (['-o', 'R', '-r'], False)):
        s = run_top(top, sock, '-D', name, '-N', '1000', '-f', *args)
        v = [int(r[col]) for r in s['rows']]
        check(v == sorted(v, reverse=desc) and len(v) == exp['threads_held'],
              '%s: %s not sorted' % (name, ' '.join(args)))
    # Filter by label: every row's label contains the text.
    s = run_top(top, sock, '-D', name, '-N', '1000', '-f', '-F', 'blkfront')
    check(len(s['rows']) > 0 and all('blkfront' in r[-1] for r in s['rows']),
          '%s: -F blkfront rows %s' % (name, [r[-1] for r in s['rows']][:5]))

    # Tree: folded becomes chains drop out, everything else is there once.
    tr = run_top(top, sock, '-t', '-D', name, '-N', '1000')
    check(len(tr['rows']) == exp['tree_rows'],
          '%s: %d tree rows, want %d' % (name, len(tr['rows']), exp['tree_rows']))
    check(any('`- ' in r[-1] for r in tr['rows']), '%s: the tree has no children' % name)
    check(any('(was ' in r[-1] for r in tr['rows']), '%s: no becomes chain folded' % name)


def fmt_duration(ns):
    """fields.c's fmt_duration, for the uncertainties shown."""
    if ns < 1000:
        return '%dns' % ns
    if ns < 1000000:
        return '%.1fus' % (ns / 1e3)
    if ns < 1000000000:
        return '%.1fms' % (ns / 1e6)
    if ns < 100000000000:
        return '%.2fs' % (ns / 1e9)
    if ns < 3600000000000:
        return '%dm%02ds' % (ns // 60000000000, ns // 1000000000 % 60)
    return '%dh%02dm' % (ns // 3600000000000, ns // 60000000000 % 60)


def cat_maps(cat, sock, domids, limit=20):
    """The clock maps mtraced tells a new subscriber (after its domain_ups): per domid,
    per clock, the last one; read until every domain in domids has one."""
    p = subprocess.Popen([cat, '-s', sock, '-f', 'json'], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    maps, deadline = {}, time.time() + limit
    try:
        for line in p.stdout:
            m = json.loads(line)
            if m.get('type') == 'clock_map':
                maps.setdefault(m['domid'], {})[m['clock']] = m
            if set(domids) <= set(maps) or time.time() > deadline:
                break
    finally:
        p.kill()
        p.wait()
    return maps


def clock(top, sock, cat, want):
    """Each domain's CLOCK and CLK-UNC against the map in force; a map that changed
    between the two reads is read again (a few times)."""
    for attempt in range(5):
        f = run_top(top, sock, '-N', '0')
        doms = {n: int(f['domains'][n]['ID']) for n in want if n in f['domains']}
        maps = cat_maps(cat, sock, doms.values())
        bad = []
        for name, source in want.items():
            d = f['domains'].get(name)
            if d is None:
                bad.append('%s: not in the domain table' % name)
                continue
            ms = list(maps.get(doms[name], {}).values())
            if not ms:
                bad.append('%s: mtraced told no clock map' % name)
                continue
            # the map of the domain's ring clock (a domain has one per clock its
            # batches carry; these guests one)
            shown = lambda m: (m['source'], fmt_duration(m['uncertainty_ns'])
                               if m['source'] != 'unknown' else '-')
            m = next((m for m in ms if shown(m) == (d['CLOCK'], d['CLK-UNC'])), ms[-1])
            unc = shown(m)[1]
            if (d['CLOCK'], d['CLK-UNC']) != shown(m) or m['source'] != source:
                bad.append('%s: CLOCK %s CLK-UNC %s; the map in force: %s %s (want %s)' %
                           (name, d['CLOCK'], d['CLK-UNC'], m['source'], unc, source))
        if not bad:
            for name in want:
                d = f['domains'][name]
                print('ok: %s: CLOCK %s CLK-UNC %s, the map in force' % (name, d['CLOCK'], d['CLK-UNC']))
            return 0
        print('attempt %d: %s' % (attempt + 1, '; '.join(bad)), file=sys.stderr)
    return 1


def main():
    mode, top, sock = sys.argv[1:4]
    if mode == 'clock':
        return clock(top, sock, sys.argv[4], dict(a.split('=', 1) for a in sys.argv[5:]))
    if mode == 'wait':
        want = dict((a.split('=')[0], int(a.split('=')[1])) for a in sys.argv[4:])
        return 0 if wait(top, sock, want) else 1
    fixture = sys.argv[4]
    m = fixture_model.model(fixture)
    doms = [(a.split(':')[0], int(a.split(':')[1])) for a in sys.argv[5:]]
    if not wait(top, sock, {n: times(m, k)['events'] for n, k in doms}):
        return 1
    for name, k in doms:
        exp = times(m, k)
        check_domain(top, sock, name, exp)
        if exp['threads_held'] <= 1000:
            check_once(top, sock, name, exp)
    # Both domains in one unfiltered frame.
    f = run_top(top, sock, '-N', '5')
    check(set(n for n, _ in doms) <= set(f['domains']), 'domains missing: %s' % f['domains'].keys())
    check(len(f['rows']) == 5, 'top -N 5 gave %d rows' % len(f['rows']))
    if failures:
        print('%d check(s) failed' % len(failures), file=sys.stderr)
        return 1
    print('ok: %s' % ', '.join('%s x%d' % d for d in doms))
    return 0


if __name__ == '__main__':
    sys.exit(main())
