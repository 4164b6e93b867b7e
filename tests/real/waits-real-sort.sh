#!/bin/sh
# fxt-waits on an unmodified program: coreutils sort --parallel=2 under
# fxt-run --libc=all merges with two threads that take turns on the merge
# tree's locks and wait on its queue's condition.  Whatever the machine's
# timing makes of it, every wait found must be between sort's two threads,
# in a lock, a condition wait or the join, released by an unlock, a signal
# or the thread's end, and none may lack its releaser (they are all in the
# archive).  Skipped when sort has no --parallel.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
WAITS=$abs_top_builddir/fxt-waits
export LC_ALL=C
scratch
cd "$TMPD" || exit 1
plan 5

SORT=$(command -v sort)
if [ -z "$SORT" ] || ! "$SORT" --parallel=2 </dev/null >/dev/null 2>&1; then
  skip_rest "no sort with --parallel"
fi
# 200000 lines in no order (a linear congruential generator).
awk 'BEGIN { x = 1; for (i = 0; i < 200000; i++) { x = (x * 1103515245 + 12345) % 2147483648; print x, i } }' >in.txt
"$SORT" -S 100M in.txt >plain.txt
"$FXT_RUN" --libc=all -o s.fxt -- "$SORT" --parallel=2 -S 100M in.txt -o out.txt \
  >run.out 2>run.err 9>&-
ok "sort --parallel=2 traced: the same output" cmp -s out.txt plain.txt || sed 's/^/# /' run.err

"$WAITS" s.fxt >waits.txt
"$WAITS" --detail --format csv s.fxt >waits.csv
diag "$(head -n 3 waits.txt)"
tids=$("$FXT_DUMP" s.fxt | sed -n 's/^thread index=[0-9]* pid=[0-9]* tid=\([0-9]*\)$/\1/p' | sort -u | tr '\n' ' ')
is "$(awk -F, -v tids=" $tids" 'NR > 1 && !(index(tids, " " $4 " ") && index(tids, " " $10 " ") && $4 != $10) { print }' waits.csv)" "" \
  "every wait is between two of sort's threads"
ok "no wait lacks its releaser" grep -q ' 0 with no releaser found, 0 ns$' waits.txt
is "$(awk -F, 'NR > 1 { print $7 }' waits.csv | sort -u | grep -Ev '^(pthread_mutex_lock|pthread_cond_wait|pthread_join)$')" "" \
  "the waits are in locks, condition waits or the join"
is "$(awk -F, 'NR > 1 { print $7 " " $12 }' waits.csv | sort -u |
  grep -Ev '^(pthread_mutex_lock pthread_mutex_unlock|pthread_cond_wait pthread_cond_(signal|broadcast)|pthread_join \(thread end\))$')" "" \
  "each released by an unlock, a signal or the thread's end"
finish
