#!/bin/sh
# examples/calltree under fxt-run: the archive is valid, and its call tree,
# counts, nesting and thread match the program exactly; the program's
# output is untouched.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

# The program's own functions only: the libc wrappers have tests of their
# own (tests/e2e/libc-*.sh).
export FXT_LIBC=none

plan 11
prog=$EXAMPLES/calltree

"$prog" >plain.out 2>plain.err
trace calltree.fxt "$prog"
is "$rc" 0 "exit status"
ok "archive written" test -s calltree.fxt
check_archive calltree calltree.fxt

is "$("$CALLTREE" calltree.fxt)" "$(cat <<'EOT'
thread calltree
  main 1
    a 3
      b 6
        c 12
        d 6
          c 6
    rec 1
      rec 1
        rec 1
          rec 1
            rec 1
EOT
)" "call tree and counts"

is "$(flat calltree.fxt)" "$(sort <<'EOT'
3 a
6 b
18 c
6 d
1 main
5 rec
EOT
)" "calls per function"

is "$(stat_of calltree.fxt threads)" 1 "one thread track"
is "$(stat_of calltree.fxt overlaps)/$(stat_of calltree.fxt open)/$(stat_of calltree.fxt unmatched)" \
  0/0/0 "exact nesting, no unterminated slice"
ok "stdout byte-identical to a plain run" cmp -s plain.out "$TMPD/out"
# fxt-run's own lines come after the program's.
grep -v '^fxt-run: ' "$TMPD/err" >traced.err
ok "stderr byte-identical to a plain run" cmp -s plain.err traced.err
case $(summary) in
"fxt-run: wrote calltree.fxt ("*" 39 events, 1 thread, 0 dropped)") ok "summary line" true ;;
*) ok "summary line" false; diag "got: $(summary)" ;;
esac
cross_check calltree calltree.fxt "$prog"
finish
