#!/bin/sh
# examples/threads under fxt-run: one named track per thread, each with
# its own calls.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

# The program's own functions only: the libc wrappers have tests of their
# own (tests/e2e/libc-*.sh).
export FXT_LIBC=none

plan 6
prog=$EXAMPLES/threads

trace threads.fxt "$prog"
is "$rc" 0 "exit status"
check_archive threads threads.fxt
is "$("$CALLTREE" --threads threads.fxt)" "$(printf '%s\n' threads-main worker-0 worker-1 \
  worker-2 worker-3)" "thread names, one track each"

is "$("$CALLTREE" threads.fxt)" "$(cat <<'EOT'
thread threads-main
  main 1
thread worker-0
  worker 1
    work 1
      step 100
thread worker-1
  worker 1
    work 1
      step 200
thread worker-2
  worker 1
    work 1
      step 300
thread worker-3
  worker 1
    work 1
      step 400
EOT
)" "per-thread call trees"
is "$(stat_of threads.fxt overlaps)/$(stat_of threads.fxt open)/$(stat_of threads.fxt unmatched)" \
  0/0/0 "exact nesting, no unterminated slice"
cross_check threads threads.fxt "$prog"
finish
