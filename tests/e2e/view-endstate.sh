#!/bin/sh
# fxt-view's replay list: End pressed right after the list is opened, on
# an archive with the end state (include/fxt/endstate.h: fxt-run's plain
# archives, from the converter's stacks; gen_archive's in start order),
# shows the last items at once, while the merge's pass still reads (held
# here with FXT_VIEW_LIST_PAUSE while a file exists): the same lines as
# fxt-replay --time-order's last ones, numbered from the end ("item N of
# N", "item N-22 of N": the writer does not count the items); Up and PgUp
# move among them; once the pass and the index are done, the list stays
# where the keys left it, the same lines, numbered.  The same on a real
# run's archive (calls_fib under fxt-run, converted at its end: the
# recon's begun frames open at the places), which fxt-dump --check finds
# sound, its state in blob records, and converted early (the default).  An archive whose trailer is damaged
# (a byte of its check word flipped) has no state: End waits for the
# index, as before.  On main End waited for the pass and the index
# whatever the archive, and its archives had no state (17 of these 20
# fail there).  Driven in tmux (80x24); skipped without tmux, or when
# fxt-view was not built.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
plan 20
. "$abs_top_srcdir/tests/e2e/view-common.sh"

# end_at_once ARCHIVE WHAT: 5 checks
end_at_once() {
  "$REPLAY" --time-order "$1" | cut -c1-80 | sed 's/ *$//' >"$TMPD/replay.txt"
  N=$(wc -l <"$TMPD/replay.txt")
  touch "$TMPD/pause"
  $T new-session -d -s "$S" -x 80 -y 24 \
    "FXT_VIEW_LIST_PAUSE=$TMPD/pause $VIEW $1; sleep 600" 9>&-
  until_shown "call path"
  keys 4 End
  until_shown "item N of N (end state, reading)" 100
  ok "$2: End while the list's pass reads: the last item at once" test $? -eq 0
  is "$(shown)" "$(lines $((N - 20)) "$N")" "$2: the last 21 items, as fxt-replay --time-order's"
  keys PPage Up Up
  until_shown "item N-22 of N (end state" 50
  is "$(shown)" "$(lines $((N - 22)) $((N - 2)))" "$2: PgUp and Up among them"
  rm -f "$TMPD/pause"
  i=0
  while screen | grep -q "(end state" && [ $i -lt 1800 ]; do sleep 0.1; i=$((i + 1)); done
  screen | grep -q "item $((N - 22)) of $N"
  ok "$2: once indexed, the list itself takes over, where the keys left it" test $? -eq 0
  is "$(shown)" "$(lines $((N - 22)) $((N - 2)))" "$2: the same lines"
  keys q
  $T kill-session -t "$S"
  S=${S}n
}

"$GEN" --events 600000 --order start --threads 3 --time-ordered -o "$TMPD/e.fxt"
end_at_once "$TMPD/e.fxt" "gen_archive"

FXT_RUN_LATE=1 "$FXT_RUN" -q -o "$TMPD/f.fxt" -- "$PROGS/calls_fib" 24 >/dev/null
"$FXT_DUMP" --check "$TMPD/f.fxt" >/dev/null
ok "fxt-run's archive: fxt-dump --check finds it sound" test $? -eq 0
"$FXT_DUMP" "$TMPD/f.fxt" | tail -2 | grep -c '^blob name="fxtrace.end' | grep -qx 2
ok "fxt-run's archive ends with its state and trailer, blob records" test $? -eq 0
end_at_once "$TMPD/f.fxt" "fxt-run"

# the early conversion (fxt-run's default): its threads' places taken by
# the archive where their records land
"$FXT_RUN" -q -o "$TMPD/g.fxt" -- "$PROGS/calls_fib" 24 >/dev/null
"$FXT_DUMP" "$TMPD/g.fxt" | tail -2 | grep -c '^blob name="fxtrace.end' | grep -qx 2
ok "fxt-run's archive converted early ends with its state too" test $? -eq 0
end_at_once "$TMPD/g.fxt" "fxt-run early"

# a damaged trailer: no state, End waits for the index
cp "$TMPD/e.fxt" "$TMPD/d.fxt"
SIZE=$(wc -c <"$TMPD/d.fxt")
printf 'X' | dd of="$TMPD/d.fxt" bs=1 seek=$((SIZE - 3)) conv=notrunc 2>/dev/null
"$REPLAY" --time-order "$TMPD/d.fxt" | cut -c1-80 | sed 's/ *$//' >"$TMPD/replay.txt"
N=$(wc -l <"$TMPD/replay.txt")
S=d
touch "$TMPD/pause"
$T new-session -d -s "$S" -x 80 -y 24 \
  "FXT_VIEW_LIST_PAUSE=$TMPD/pause $VIEW $TMPD/d.fxt; sleep 600" 9>&-
until_shown "call path"
keys 4 End
until_shown "then End (Esc" 100
ok "a damaged trailer: End is kept for the index, as without a state" test $? -eq 0
rm -f "$TMPD/pause"
until_shown "item $N of $N"
is "$(shown)" "$(lines $((N - 20)) "$N")" "then the last 21 items, from the index"
keys q

finish
