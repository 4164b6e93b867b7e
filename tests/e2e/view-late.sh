#!/bin/sh
# fxt-view's replay list on an archive out of time order (not marked
# "fxtrace.time-ordered.v1"): gen_archive --late-begins writes each
# thread's begin of main after its other events, as magic-trace writes the
# frames open at its start, and readers in time order give it first.  The
# list's index marks (~60,000 items, a mark every 8192) are resumed by End
# and by a search far from the lines held: the late begins, given before
# a mark but after it in the file, must not be given again there (they
# were: main opened twice, every line after a mark one level deeper than
# fxt-replay --time-order's).  Driven in tmux (80x24); skipped without
# tmux, or when fxt-view was not built (no ncurses).
. "$abs_top_srcdir/tests/lib/test_subr.sh"
plan 4
. "$abs_top_srcdir/tests/e2e/view-common.sh"

"$GEN" --events 60000 --order start --threads 2 --late-begins -o "$TMPD/l.fxt"
"$REPLAY" --time-order "$TMPD/l.fxt" | cut -c1-80 | sed 's/ *$//' >"$TMPD/replay.txt"
N=$(wc -l <"$TMPD/replay.txt")
# the first thread's exit of main
K=$(grep -n '} /\* main \*/' "$TMPD/replay.txt" | head -1 | cut -d: -f1)

$T new-session -d -s v -x 80 -y 24 "$VIEW $TMPD/l.fxt; echo \$? > $TMPD/v.rc; sleep 600" 9>&-
until_shown "call path"
keys 4
until_shown "item 1 of $N"
ok "the index counts the items: item 1 of $N" test $? -eq 0
is "$(shown | head -2)" "$(lines 1 2)" "the late begins of main first" ||
  diag "$(shown | head -2)"

keys End
until_shown "item $N of $N"
is "$(shown)" "$(lines $((N - 20)) "$N")" \
  "End, from the last mark: the last 21 items as fxt-replay --time-order's, main not opened again"

keys Home / m a i n Enter n
until_shown "item $K of $N"
is "$(screen | sed -n 23p | sed 's/ *$//')" "$(lines "$K" "$K")" \
  "n, from a mark: main's exit, item $K, as fxt-replay's line $K"

keys q
finish
