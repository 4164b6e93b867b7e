#!/bin/sh
# fxt-view's replay list on compressed archives, in time order with its
# index as on a plain one: the cursors and marks decode from the gzip
# member or zstd frame before their place (fxtrace's writer cuts them
# every few MB; gzip -c's one member is decoded from its start).  For
# gen_archive's ~420,000 items as .fxt.gz and .fxt.zst (fxtrace's writer)
# and gzip -c's: the index counts the items, End shows the last ones, a
# search goes to main's exit far past the lines held, ':' to 10 ms, then
# End, Home and End again (the stretches decoded before, now from the
# clones' cache of them: fxt/source.c), each screen checked against
# fxt-replay --time-order's lines on the plain archive.  Driven in tmux
# (80x24); skipped without tmux, or when fxt-view was not built (no
# ncurses).
. "$abs_top_srcdir/tests/lib/test_subr.sh"
plan 21
. "$abs_top_srcdir/tests/e2e/view-common.sh"

"$GEN" --events 300000 --order start --threads 2 -o "$TMPD/l.fxt"
"$GEN" --events 300000 --order start --threads 2 -o "$TMPD/w.fxt.gz"
"$GEN" --events 300000 --order start --threads 2 -o "$TMPD/w.fxt.zst"
gzip -c "$TMPD/l.fxt" >"$TMPD/g.fxt.gz"
"$REPLAY" --time-order "$TMPD/l.fxt" | cut -c1-80 | sed 's/ *$//' >"$TMPD/replay.txt"
N=$(wc -l <"$TMPD/replay.txt")
K=$(grep -n '} /\* main \*/' "$TMPD/replay.txt" | head -1 | cut -d: -f1)
G10=$(awk '$1 >= 0.01 { print NR; exit }' "$TMPD/replay.txt")

for f in w.fxt.gz w.fxt.zst g.fxt.gz; do
  S=${f%%.*}${f##*.}
  $T new-session -d -s "$S" -x 80 -y 24 "$VIEW $TMPD/$f; sleep 600" 9>&-
  until_shown "call path"
  keys 4
  until_shown "item 1 of $N"
  ok "$f: the index counts the items: item 1 of $N, in time order" \
    sh -c "$T capture-pane -p -t $S | grep -q 'call (time order)'"
  keys End
  until_shown "item $N of $N"
  is "$(shown)" "$(lines $((N - 20)) "$N")" "$f: End: the last 21 items"
  keys Home / m a i n Enter n
  until_shown "item $K of $N"
  is "$(screen | sed -n 23p | sed 's/ *$//')" "$(lines "$K" "$K")" \
    "$f: n: main's exit, item $K, far past the lines held"
  keys : 1 0 m s Enter
  until_shown "item $G10 of $N"
  ok "$f: ':' 10ms: item $G10" test $? -eq 0
  keys End
  until_shown "item $N of $N"
  is "$(shown)" "$(lines $((N - 20)) "$N")" "$f: End again: the last 21 items"
  keys Home
  until_shown "item 1 of $N"
  is "$(shown)" "$(lines 1 21)" "$f: Home: the first 21 items"
  keys End
  until_shown "item $N of $N"
  is "$(shown)" "$(lines $((N - 20)) "$N")" "$f: End a third time: the last 21 items"
  keys q
done

finish
