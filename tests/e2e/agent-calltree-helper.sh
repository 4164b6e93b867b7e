#!/bin/sh
# The helper the agent tests read archives with (tests/helpers/fxt_calltree),
# on an archive of known shape written by the writer library: it must
# rebuild nesting from timestamps and find overlaps, open slices, unmatched
# ends and drops, or the agent tests could not fail.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 6
"$HELPERS/calltree_fixture" fixture.fxt

is "$("$CALLTREE" fixture.fxt)" "$(cat <<'EOT'
thread main
  a 1
    b 1
      c 2
thread worker
  ov 1
    w 1
      x 1
      open 1
EOT
)" "--tree: nesting from timestamps, not record order"
is "$("$CALLTREE" --flat fixture.fxt)" "$(printf '%s\n' '1 a' '1 b' '2 c' '1 open' '1 ov' \
  '1 w' '1 x')" "--flat"
is "$("$CALLTREE" --threads fixture.fxt)" "$(printf '%s\n' main worker)" "--threads"
is "$("$CALLTREE" --stats fixture.fxt)" "$(cat <<'EOT'
threads 2
slices 8
open 2
overlaps 1
unmatched 1
maxdepth 3
dropped 17
EOT
)" "--stats: overlaps, open, unmatched, drops"
rc=0; "$CALLTREE" --flat /dev/null >/dev/null 2>&1 || rc=$?
is "$rc" 1 "an empty file is not an archive"
rc=0; "$CALLTREE" --flat no-such.fxt >/dev/null 2>&1 || rc=$?
is "$rc" 1 "a missing archive fails"
finish
