#!/usr/bin/env python3
"""Checks an FXT archive against what Perfetto's importer needs (DESIGN.md,
"What Perfetto needs from our bytes"), independently of libfxt's reader:

- the magic record at offset 0; no zero word where a record header is
  expected; every record under 32 KB (no large records);
- an initialization record with ticks per second > 0;
- every thread that has events has a thread kernel object whose `process`
  argument is of koid type, and its process has a process kernel object;
- slices on a thread nest exactly (no partial overlap), begin/end pairs
  included.

Prints one line "ok" or one line per problem; exits 0 or 1.  Reads plain
and gzip archives.
"""
import gzip
import struct
import sys
from collections import defaultdict

MAGIC = 0x0016547846040010


def load(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:2] == b'\x1f\x8b':
        data = gzip.decompress(data)
    return data


class Archive:
    def __init__(self, data):
        self.data = data
        self.words = struct.unpack_from('<%dQ' % (len(data) // 8), data)
        self.strings = {}
        self.threads = {}
        self.errors = []

    def string(self, ref, at):
        """Resolves a string reference; returns (text, next word index)."""
        if ref == 0:
            return '', at
        if ref & 0x8000:
            n = ref & 0x7fff
            text = self.data[at * 8:at * 8 + n].decode('utf-8', 'replace')
            return text, at + (n + 7) // 8
        return self.strings.get(ref, ''), at

    def error(self, msg):
        if len(self.errors) < 20:
            self.errors.append(msg)


def check(path):
    a = Archive(load(path))
    w = a.words
    if len(a.data) % 8:
        a.error('size %d is not a multiple of 8' % len(a.data))
    if not w or w[0] != MAGIC:
        a.error('no magic record at offset 0')
        return a.errors
    tps = None
    procs, kthreads = set(), {}
    slices = defaultdict(list)  # (pid, tid) -> [(start, end)]
    opened = defaultdict(list)  # (pid, tid) -> [start] of begin events
    i = 1
    while i < len(w):
        h = w[i]
        rtype, size = h & 0xf, (h >> 4) & 0xfff
        if rtype == 15:
            a.error('word %d: large record (Perfetto loses its place)' % i)
            break
        if size == 0:
            a.error('word %d: zero-size record header' % i)
            break
        if i + size > len(w):
            a.error('word %d: truncated record' % i)
            break
        j = i + 1
        if rtype == 1:
            tps = w[j]
        elif rtype == 2:
            n = (h >> 32) & 0x7fff
            a.strings[(h >> 16) & 0x7fff] = \
                a.data[j * 8:j * 8 + n].decode('utf-8', 'replace')
        elif rtype == 3:
            a.threads[(h >> 16) & 0xff] = (w[j], w[j + 1])
        elif rtype == 4:
            etype, tref = (h >> 16) & 0xf, (h >> 24) & 0xff
            ts = w[j]
            j += 1
            if tref == 0:
                thread = (w[j], w[j + 1])
            else:
                thread = a.threads.get(tref)
                if thread is None:
                    a.error('word %d: unknown thread reference %d' % (i, tref))
            if etype == 2:
                opened[thread].append(ts)
            elif etype == 3:
                if opened[thread]:
                    slices[thread].append((opened[thread].pop(), ts))
                else:
                    a.error('word %d: end event without a begin' % i)
            elif etype == 4:
                end = w[i + size - 1]
                if end < ts:
                    a.error('word %d: slice ends before it starts' % i)
                slices[thread].append((ts, end))
        elif rtype == 7:
            otype, name = (h >> 16) & 0xff, (h >> 24) & 0xffff
            nargs = (h >> 40) & 0xf
            koid = w[j]
            _, j = a.string(name, j + 1)
            args = {}
            for _ in range(nargs):
                ah = w[j]
                asize = (ah >> 4) & 0xfff
                aname, _ = a.string((ah >> 16) & 0xffff, j + 1)
                args[aname] = ah & 0xf
                j += max(asize, 1)
            if otype == 1:
                procs.add(koid)
            elif otype == 2:
                kthreads[koid] = args.get('process')
        i += size
    if not tps:
        a.error('no initialization record with ticks per second > 0')
    for thread, spans in slices.items():
        if thread is None:
            continue
        pid, tid = thread
        if tid not in kthreads:
            a.error('thread %d: events but no thread kernel object' % tid)
        elif kthreads[tid] != 8:
            a.error('thread %d: its kernel object has no koid "process" argument' % tid)
        if pid not in procs:
            a.error('process %d: events but no process kernel object' % pid)
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for start, end in spans:
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                a.error('thread %d: slice [%d, %d] overlaps [%d, %d] partly' %
                        (tid, start, end, stack[-1][0], stack[-1][1]))
            stack.append((start, end))
    return a.errors


def main():
    errors = check(sys.argv[1])
    for e in errors:
        print(e)
    if not errors:
        print('ok')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
