#!/bin/sh
# examples/hotspot, the run-comparison example: its call tree is exact with
# and without --slow, and fxt-diff reads the two runs (the timing verdict
# itself is tested on synthetic archives in report-diff.sh: machine noise
# makes a real run's verdict unfit for a test).
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 8
prog=$EXAMPLES/hotspot

tree='thread hotspot
  main 1
    parse 400
    checksum 400
    store 400'
trace base.fxt "$prog"
is "$rc/$(cat "$TMPD/out")" "0/hotspot: 400 records, checksum rounds 6000" "base: exit status and output"
check_archive base base.fxt
is "$("$CALLTREE" base.fxt)" "$tree" "base: call tree and counts"

trace new.fxt "$prog" --slow
is "$rc/$(cat "$TMPD/out")" "0/hotspot: 400 records, checksum rounds 8000" "new: exit status and output"
is "$("$CALLTREE" new.fxt)" "$tree" "new: call tree and counts"

"$abs_top_builddir/fxt-diff" --format csv base.fxt new.fxt >diff.csv 2>diff.err
ok "fxt-diff compares the two runs" test $? -le 1
is "$(sed 1d diff.csv | awk -F, "{ print \$NF }" | sort | tr "\\n" " ")" "checksum main parse store " \
  "fxt-diff lists every function"
ok "fxt-diff: one row per function plus a header" test "$(wc -l <diff.csv)" -eq 5
finish
