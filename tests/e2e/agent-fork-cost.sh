#!/bin/sh
# What a forked child's first record costs in system calls (issue 29: a
# short process should cost close to what forking it costs): its spool's
# header and first chunk are mapped by one mmap(), with no ftruncate() (an
# inode update, more than the child's records cost), and that first chunk
# is 16 KiB (each of its pages is written and faulted in up front).  A
# child that takes a spare spool file of fxt-run's (zeros, its first
# chunk's room included: spool/format.h, SPOOL_SPARE_SIZE) writes nothing
# to make its spool: the header is stored through the mapping.  Counted
# with strace, when it can trace here; the archive holds the child's calls
# all the same.  A child that exits through exit() seals its spool: the
# seal names its only thread with prctl(PR_GET_NAME), not by reading
# /proc/self/task/TID/comm (an open, a read and a close of a file of
# /proc, whose path the kernel looks up), and the archive names it all
# the same.  A child of a process that recorded nothing before it forked
# (bench/forkloop, --libc=none) binds no symbol of the agent's in the
# loader (LD_DEBUG=bindings): the functions its fork reset and its _exit
# call are bound in the parent, once.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 13

if ! command -v strace >/dev/null 2>&1 || ! strace -f -o /dev/null true 2>/dev/null; then
  skip_rest "strace not installed or cannot trace here"
fi

# fork_child _exit: the child calls child_work three times and _exits.
# (The sanitizers' leak check cannot run under ptrace: it aborts fxt-run's
# exit there.)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -o st.trace -e trace=ftruncate,mmap \
  "$FXT_RUN" -o f.fxt "$PROGS/fork_child" _exit >out 2>err
is "$?" 0 "fork_child: exit status 0"
child=$(sed -n 's/^fork_child: child \([0-9]*\)$/\1/p' out)
"$FXT_DUMP" --stats f.fxt >stats 2>&1
is "$(sed -n 's/^processes //p' stats)" 2 "fork_child: both processes in the archive"
grep "^$child " st.trace >child.trace
is "$(grep -c 'ftruncate(' child.trace)" 0 "the child's spool: no ftruncate()"
is "$(grep -c 'mmap(.*MAP_SHARED' child.trace)" 1 \
  "the child's spool: its header and first chunk in one mapping"
is "$(sed -n 's/.*mmap(NULL, \([0-9]*\), .*MAP_SHARED.*/\1/p' child.trace)" $((65536 + 16384)) \
  "the child's spool: the 64 KiB header and a 16 KiB first chunk"

# fork_child: the child exits through exit(), sealing its spool.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -o se.trace -e trace=openat,prctl \
  "$FXT_RUN" -o e.fxt "$PROGS/fork_child" >out 2>err
is "$?" 0 "sealing child: exit status 0"
child=$(sed -n 's/^fork_child: child \([0-9]*\)$/\1/p' out)
is "$(grep "^$child " se.trace | grep -c '/comm"')" 0 \
  "sealing child: its own thread's name not read from /proc"
"$FXT_DUMP" e.fxt >e.dump 2>&1
is "$(grep -c "kobj type=thread koid=$child name=\"fork_child\"" e.dump)" 1 \
  "sealing child: its thread named in the archive"

# bench/forkloop 3, --libc=none: nothing recorded; the loader's bindings
# in the children.
LD_DEBUG=bindings LD_DEBUG_OUTPUT="$PWD/ldb" "$FXT_RUN" --libc=none -o l.fxt \
  "$abs_top_builddir/bench/forkloop" 3 >out 2>err
is "$?" 0 "forkloop, --libc=none: exit status 0"
# The children's lines go to their parent's file, each with its own pid.
cat ldb.* >ldb.all 2>/dev/null
parent=$(sed -n 's/^ *\([0-9]*\):.*transferring control: .*forkloop$/\1/p' ldb.all | head -1)
is "$(grep 'binding file .*libfxt-agent' ldb.all | grep -v "^ *$parent:" | grep -c -v '^ *[0-9]*:.*forkloop \[0\] to .*libfxt-agent')" 0 \
  "forkloop, --libc=none: the children bind none of the agent's symbols"

# Forks spaced so that fxt-run's scans (every 50 ms) convert some and make
# spare files before the next: the later children take one (renameat2).
loop='i=0; while [ $i -lt 8 ]; do "$1" _exit; sleep 0.15; i=$((i + 1)); done'
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -o sp.trace \
  -e trace=renameat2,pwrite64,pwritev,write,ftruncate \
  "$FXT_RUN" -o s.fxt sh -c "$loop" sh "$PROGS/fork_child" >out 2>err
is "$?" 0 "spare files: exit status 0"
took=0 wrote=0
for child in $(sed -n 's/^fork_child: child \([0-9]*\)$/\1/p' out); do
  grep "^$child " sp.trace | grep -q 'renameat2(' || continue
  took=$((took + 1))
  wrote=$((wrote + $(grep "^$child " sp.trace | grep -c -E '(pwrite64|pwritev|write|ftruncate)\(')))
done
ok "spare files: children took one ($took of 8)" test "$took" -gt 0
is "$wrote" 0 "spare files: a child that took one wrote nothing to make its spool"
finish
