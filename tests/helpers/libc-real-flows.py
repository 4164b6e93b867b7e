#!/usr/bin/env python3
"""Resolves the flows of a trace to the slices they connect, as Perfetto
does: a flow event binds to the innermost slice open on its thread at its
timestamp (DESIGN.md, "What Perfetto needs from our bytes").

Reads the output of `fxt-dump` (one or more files, e.g. one per process
before fxt-run merges them; flow ids are unique across processes) and
prints one line per flow id, sorted:

    BEGIN -> [STEP -> ...] END  same|cross

naming the slices the flow events bind to ("?" when no slice encloses an
event, "(none)" when the flow has no end), and whether all its events are
in one process.  Exits 1 on input it cannot parse.
"""
import bisect
import re
import sys
from collections import defaultdict

LINE = re.compile(r'^ts=(\d+)\.(\d{9}) pid=(\d+) tid=(\d+) event (\w+) '
                  r'cat="(?:[^"\\]|\\.)*" name="((?:[^"\\]|\\.)*)"'
                  r'(?: dur=(\d+)ns)?(?: id=(\d+))?')
PHASE = {'flow_begin': 0, 'flow_step': 1, 'flow_end': 2}


def main(paths):
    slices = defaultdict(list)  # (pid, tid) -> [(start, end, name)]
    opened = defaultdict(list)  # (pid, tid) -> [(start, name)] of begin events
    flows = defaultdict(list)   # id -> [(phase, ts, pid, tid)]
    for path in paths:
        with open(path, encoding='utf-8', errors='replace') as f:
            for text in f:
                if ' event ' not in text:
                    continue
                m = LINE.match(text)
                if not m:
                    sys.stderr.write('%s: cannot parse: %s' % (path, text))
                    return 1
                sec, nsec, pid, tid, kind, name, dur, fid = m.groups()
                ts = int(sec) * 1000000000 + int(nsec)
                thread = (int(pid), int(tid))
                if kind == 'complete':
                    slices[thread].append((ts, ts + int(dur), name))
                elif kind == 'begin':
                    opened[thread].append((ts, name))
                elif kind == 'end' and opened[thread]:
                    start, bname = opened[thread].pop()
                    slices[thread].append((start, ts, bname))
                elif kind in PHASE:
                    flows[int(fid)].append((PHASE[kind], ts, thread))
    for thread, stack in opened.items():
        for start, name in stack:  # never ended: open to the end
            slices[thread].append((start, float('inf'), name))
    starts = {}
    for thread, lst in slices.items():
        lst.sort(key=lambda s: (s[0], -s[1]))
        starts[thread] = [s[0] for s in lst]

    def enclosing(ts, thread):
        """The innermost slice of `thread` open at `ts`: the latest start
        among the slices containing it (slices nest)."""
        lst = slices.get(thread, [])
        i = bisect.bisect_right(starts.get(thread, []), ts)
        while i > 0:
            i -= 1
            if lst[i][1] >= ts:
                return lst[i][2]
        return '?'

    out = []
    for events in flows.values():
        events.sort()
        names = [enclosing(ts, thread) for _, ts, thread in events]
        if events[-1][0] != 2:
            names.append('(none)')
        pids = {thread[0] for _, _, thread in events}
        out.append('%s  %s' % (' -> '.join(names), 'same' if len(pids) == 1 else 'cross'))
    for line in sorted(out):
        print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
