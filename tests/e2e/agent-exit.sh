#!/bin/sh
# examples/deep_exit under fxt-run: exit(N) from 50 frames down.  fxt-run
# passes N through, and the archive keeps the frames that were open, nested.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

# The program's own functions only: the libc wrappers have tests of their
# own (tests/e2e/libc-*.sh).
export FXT_LIBC=none

plan 8
prog=$EXAMPLES/deep_exit

trace exit.fxt "$prog" 7
is "$rc" 7 "exit status 7 passed through"
is "$(cat "$TMPD/out")" "deep_exit: exit(7) at depth 50" "program output"
check_archive deep_exit exit.fxt
is "$(flat exit.fxt)" "$(sort <<'EOT'
1 bottom
50 descend
1 main
EOT
)" "every open frame is in the archive"
is "$(stat_of exit.fxt maxdepth)" 52 "nested 52 deep (main, 50 descend, bottom)"
is "$(stat_of exit.fxt overlaps)/$(stat_of exit.fxt unmatched)" 0/0 "exact nesting"

trace exit42.fxt "$prog"
is "$rc" 42 "exit status 42 passed through"
trace exit0.fxt "$prog" 0
is "$rc" 0 "exit status 0 passed through"
finish
