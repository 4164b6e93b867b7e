#!/bin/sh
# fxt-run's early converter (launcher/early.c) converts a process's full
# chunks while it runs; the archive holds what the conversion at the end
# alone writes (FXT_RUN_LATE=1): the same counts, calls and nesting, from
# one thread and from several, and it leaves no file behind.  How much it
# converts early depends on the idle CPU it gets (SCHED_IDLE): said, not
# checked (tests/unit/test_convert_early.c compares the bytes of both ways
# on the same spool).
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

export FXT_LIBC=none
plan 12

# stats ARCHIVE: fxt-dump --stats but for the times, which differ from
# run to run.
stats() { "$FXT_DUMP" --stats "$1" | grep -v -E '^(first|last|span)_ns '; }

# both NAME PROGRAM ARGS...: the program traced both ways.
both() {
  b_name=$1; shift
  mkdir "$TMPD/$b_name" && cd "$TMPD/$b_name" || exit 1
  FXT_RUN_DEBUG=1 trace early.fxt "$@"
  is "$rc" 0 "$b_name: fxt-run exits 0"
  diag "$b_name: $(sed -n 's/^fxt-run: early: //p' "$TMPD/err")"
  FXT_RUN_LATE=1 trace late.fxt "$@"
  check_archive "$b_name" early.fxt
  is "$(stats early.fxt)" "$(stats late.fxt)" "$b_name: fxt-dump --stats counts the same"
  is "$(flat early.fxt)" "$(flat late.fxt)" "$b_name: the same calls of the same functions"
  is "$(stat_of early.fxt overlaps)/$(stat_of early.fxt unmatched)" "0/0" \
    "$b_name: exact nesting"
  is "$(ls | tr '\n' ' ')" "early.fxt late.fxt " "$b_name: nothing else left"
  cd "$TMPD" || exit 1
}

both fib "$PROGS/calls_fib" 27
both threads "$PROGS/stress_threads"
