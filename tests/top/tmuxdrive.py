#!/usr/bin/env python3
"""Drive mtrace-top in a tmux pane and check each screen (run-tmux.sh starts it).

  tmuxdrive.py TMUX-SOCKET-NAME TMUX-CONF SESSION STATUS-FILE SIMXEN SIMDIR REPLAY FIXTURE

Each step sends keys, then waits (bounded) for the captured screen to satisfy a
predicate over the screen text and its table rows (split like the batch output)."""
import subprocess
import sys
import time

L, CONF, S, STATUS, SIMXEN, SIMDIR, REPLAY, FIXTURE = sys.argv[1:9]
TMUX = ['tmux', '-L', L, '-f', CONF]
STEP_TIMEOUT = 15


def tmux(*args):
    return subprocess.run(TMUX + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=10)


def keys(*k):
    tmux('send-keys', '-t', S, *k)


class Screen:
    def __init__(self, text):
        self.s = text
        self.lines = text.rstrip('\n').split('\n')
        self.title, self.rows = None, []
        for i, l in enumerate(self.lines):
            words = l.split()
            if words[:1] == ['DOMAIN'] and any(w.rstrip('v^') in ('TID', 'COUNT') for w in words):
                self.title = [w.rstrip('v^') for w in words]
                for r in self.lines[i + 1:]:
                    if not r.strip() or r.startswith('q quit'):
                        break
                    self.rows.append(r.split(None, len(self.title) - 1))
                break

    def col(self, name):
        k = self.title.index(name)
        return [r[k] for r in self.rows if len(r) > k]

    def ints(self, name):
        return [int(x) for x in self.col(name)]


def expect(what, pred):
    t0 = time.time()
    last = None
    while time.time() - t0 < STEP_TIMEOUT:
        last = Screen(tmux('capture-pane', '-p', '-t', S).stdout)
        try:
            if pred(last):
                print('ok %-28s %.1fs' % (what, time.time() - t0))
                return last
        except (ValueError, IndexError, TypeError):
            pass
        time.sleep(0.15)
    print('FAIL: %s; screen:\n%s' % (what, last.s if last else ''), file=sys.stderr)
    sys.exit(1)


def prompt(answer):
    time.sleep(0.3)	# the prompt reads the keys typed after it is shown
    keys(answer, 'Enter')


expect('first screen', lambda s: s.s.startswith('mtrace-top') and 'mirage-blk' in s.s and
       'mirage-once' in s.s and 'EV/Sv' in s.s and len(s.rows) > 5)

keys('R')
expect('sort by READS', lambda s: 'READSv' in s.s and len(s.rows) > 5 and
       s.ints('READS') == sorted(s.ints('READS'), reverse=True))
keys('r')
expect('reverse', lambda s: 'READS^' in s.s and 'reversed' in s.s and len(s.rows) > 5 and
       s.ints('READS') == sorted(s.ints('READS')))
keys('>')
expect('sort moves right', lambda s: 'RESOLVv' in s.s and
       s.ints('RESOLV') == sorted(s.ints('RESOLV'), reverse=True))

keys('/')
prompt('blkfront')
expect('filter by label', lambda s: "filter 'blkfront'" in s.s and len(s.rows) > 0 and
       all('blkfront' in r[-1] for r in s.rows))
keys('/')
prompt('')
expect('filter cleared', lambda s: 'filter none' in s.s and
       any('blkfront' not in r[-1] for r in s.rows))

keys('t')
expect('tree view', lambda s: 'view tree' in s.s and
       any(r[-1].lstrip().startswith('`- ') for r in s.rows) and
       any('(was ' in r[-1] for r in s.rows))
keys('t')
expect('back to the thread list', lambda s: 'view threads' in s.s and len(s.rows) > 5 and
       not any('`- ' in r[-1] for r in s.rows))

keys('g')
expect('group by label', lambda s: 'view labels' in s.s and 'LIFE-P50' in s.s and
       'LIFE-P99' in s.s and 'blkfront.poll' in s.col('LABEL') and
       'Xs.read waiting' in s.col('LABEL'))

keys('d')
prompt('mirage-once')
expect('domain filter', lambda s: 'domain mirage-once' in s.s and len(s.rows) > 0 and
       set(s.col('DOMAIN')) == {'mirage-once'} and 'mirage-blk' not in s.s)

keys('h')
expect('help', lambda s: 'keys' in s.lines[0] and 'group by label' in s.s)
keys('x')
expect('help closed', lambda s: 'view labels' in s.s)

keys('Space')
expect('pause', lambda s: '[PAUSED]' in s.s)
keys('Space')
expect('resume', lambda s: '[PAUSED]' not in s.s and 'view labels' in s.s)

tmux('resize-window', '-t', S, '-x', '100', '-y', '30')
expect('redraw at 100x30', lambda s: len(s.lines) == 30 and s.lines[29].startswith('q quit') and
       max(len(l) for l in s.lines) <= 100 and s.lines[0].startswith('mtrace-top') and
       s.title is not None)
tmux('resize-window', '-t', S, '-x', '160', '-y', '50')
expect('redraw at 160x50', lambda s: len(s.lines) == 50 and s.lines[49].startswith('q quit') and
       s.title is not None and len(s.rows) > 0)

# Domains come and go while we watch.
keys('d')
prompt('')
expect('all domains again', lambda s: 'domain all' in s.s and 'mirage-blk' in s.s)
late = subprocess.run([SIMXEN, '--dir', SIMDIR, 'create', '--name', 'late-guest', '--', REPLAY,
                       '--hold', '--quiet', FIXTURE], stdout=subprocess.PIPE, text=True,
                      timeout=30)
expect('a domain appears', lambda s: 'late-guest' in s.s and
       'late-guest' in [l.split()[0] for l in s.lines if l.strip()])
once = [l.split()[1] for l in Screen(tmux('capture-pane', '-p', '-t', S).stdout).lines
        if l.startswith('mirage-once ')][0]
subprocess.run([SIMXEN, '--dir', SIMDIR, 'destroy', once], timeout=30, check=True)
expect('a domain goes', lambda s: ('domain %s down' % once) in s.s and
       not any(l.split()[:3] == ['mirage-once', once, 'running'] for l in s.lines))

keys('q')
t0 = time.time()
status = ''
while time.time() - t0 < STEP_TIMEOUT:
    try:
        status = open(STATUS).read().strip()
    except FileNotFoundError:
        status = ''
    if status:
        break
    time.sleep(0.1)
if status != '0':
    print('FAIL: mtrace-top did not exit 0 on q (status %r); screen:\n%s' %
          (status, tmux('capture-pane', '-p', '-t', S).stdout), file=sys.stderr)
    sys.exit(1)
print('ok quit')
