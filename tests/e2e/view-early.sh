#!/bin/sh
# fxt-view's replay list: End pressed right after the list is opened,
# while the merge's pass still reads the archive (held here with
# FXT_VIEW_LIST_PAUSE, while a file exists, whatever the machine's load),
# is kept: the status line says it comes ("then End"), and once the list
# can go there it shows the last items, the same lines and numbers as End
# pressed after the index (fxt-replay --time-order's last 21 lines).  On
# the plain archive, fxtrace's .fxt.gz and .fxt.zst and gzip -c's.  ':'
# pressed then is kept as well; Esc before the pass ends keeps the list
# at its first item.  Before, End pressed while the pass read was
# dropped (9 of these fail on main), ':' said "not read yet".  Driven in
# tmux (80x24); skipped without tmux, or when fxt-view was not built (no
# ncurses).
. "$abs_top_srcdir/tests/lib/test_subr.sh"
plan 15
. "$abs_top_srcdir/tests/e2e/view-common.sh"

"$GEN" --events 300000 --order start --threads 2 -o "$TMPD/l.fxt"
"$GEN" --events 300000 --order start --threads 2 -o "$TMPD/w.fxt.gz"
"$GEN" --events 300000 --order start --threads 2 -o "$TMPD/w.fxt.zst"
gzip -c "$TMPD/l.fxt" >"$TMPD/g.fxt.gz"
"$REPLAY" --time-order "$TMPD/l.fxt" | cut -c1-80 | sed 's/ *$//' >"$TMPD/replay.txt"
N=$(wc -l <"$TMPD/replay.txt")

# shown_soon TEXT: TEXT on the screen within 10 s
shown_soon() { until_shown "$1" 100; }

for f in l.fxt w.fxt.gz w.fxt.zst g.fxt.gz; do
  S=${f%%.*}${f##*.}
  touch "$TMPD/pause"
  $T new-session -d -s "$S" -x 80 -y 24 \
    "FXT_VIEW_LIST_PAUSE=$TMPD/pause $VIEW $TMPD/$f; sleep 600" 9>&-
  until_shown "call path"
  keys 4 End
  shown_soon "then End (Esc"
  ok "$f: End while the list's pass reads: kept, the status line says it comes" \
    test $? -eq 0
  rm -f "$TMPD/pause"
  shown_soon "item $N of $N" || until_shown "item $N of $N"
  ok "$f: once the list is indexed, End went there: item $N of $N" test $? -eq 0
  is "$(shown)" "$(lines $((N - 20)) "$N")" "$f: the early End: the last 21 items"
  keys q
done

# ':' 10ms pressed while the pass reads: kept too, then the list goes
# to the first call at 10 ms or later
G10=$(awk '$1 >= 0.01 { print NR; exit }' "$TMPD/replay.txt")
S=go
touch "$TMPD/pause"
$T new-session -d -s "$S" -x 80 -y 24 \
  "FXT_VIEW_LIST_PAUSE=$TMPD/pause $VIEW $TMPD/w.fxt.zst; sleep 600" 9>&-
until_shown "call path"
keys 4 : 1 0 m s Enter
shown_soon "then : (Esc"
ok "':' while the list's pass reads: kept, the status line says it comes" test $? -eq 0
rm -f "$TMPD/pause"
until_shown "item $G10 of $N"
is "$(shown | tail -1)" "$(lines "$G10" "$G10")" \
  "':' 10ms kept: the first call at 10 ms or later, item $G10 of $N, shown"
keys q

# Esc before the pass ends: the End pressed is let go
S=esc
touch "$TMPD/pause"
$T new-session -d -s "$S" -x 80 -y 24 \
  "FXT_VIEW_LIST_PAUSE=$TMPD/pause $VIEW $TMPD/w.fxt.gz; sleep 600" 9>&-
until_shown "call path"
keys 4 End
shown_soon "then End (Esc"
keys Escape
sleep 0.3
rm -f "$TMPD/pause"
until_shown "item 1 of $N"
sleep 0.5
is "$(shown)" "$(lines 1 21)" "Esc before the pass ended: the list stays at its first items"
keys q

finish
