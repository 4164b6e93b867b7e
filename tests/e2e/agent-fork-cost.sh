#!/bin/sh
# What a forked child's first record costs in system calls (issue 29: a
# short process should cost close to what forking it costs): its spool's
# header and first chunk are mapped by one mmap(), with no ftruncate() (an
# inode update, more than the child's records cost), and that first chunk
# is 16 KiB (each of its pages is written and faulted in up front).  Counted with strace,
# when it can trace here; the archive holds the child's calls all the
# same.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 5

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
finish
