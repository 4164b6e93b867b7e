#!/bin/sh
# fxt-view's replay list past the lines it holds (4096), driven in tmux
# (80x24) on a gen_archive of ~420,000 items in time order, each screen
# checked against fxt-replay --time-order's lines at the same places: the
# index counts the items (the status line says "of N"), End shows the last
# ones, Home the first, a search for a name whose next match is near the
# end (main's exit) goes there, and back (N) to the match before it, far
# before the lines held; the timeline zooms (z halves the window, 0 the
# whole trace) without reading the archive again; ':' goes to a time, from
# the start (10ms) or a timestamp (ns), in the list (the first item at
# that time or later, as fxt-replay's lines say) and in the timeline (its
# window starts there), past the end to the last item.  Skipped without tmux,
# or when fxt-view was not built (no ncurses).
. "$abs_top_srcdir/tests/lib/test_subr.sh"
plan 17
. "$abs_top_srcdir/tests/e2e/view-common.sh"

"$GEN" --events 300000 --order start --threads 2 -o "$TMPD/l.fxt"
"$REPLAY" --time-order "$TMPD/l.fxt" | cut -c1-80 | sed 's/ *$//' >"$TMPD/replay.txt"
N=$(wc -l <"$TMPD/replay.txt")
# main's exit: the first line that names main after its two entries
K=$(grep -n '} /\* main \*/' "$TMPD/replay.txt" | head -1 | cut -d: -f1)
# the first lines at 10 ms and 5 ms from the start (the first event is at
# 1000 ns: 5 ms is the timestamp 5001000)
G10=$(awk '$1 >= 0.01 { print NR; exit }' "$TMPD/replay.txt")
G5=$(awk '$1 >= 0.005 { print NR; exit }' "$TMPD/replay.txt")

$T new-session -d -s v -x 80 -y 24 "$VIEW $TMPD/l.fxt; echo \$? > $TMPD/v.rc; sleep 600" 9>&-
until_shown "call path"
keys 4
until_shown "item 1 of $N"
ok "the index counts the items: item 1 of $N" test $? -eq 0

keys End
until_shown "item $N of $N"
is "$(shown)" "$(lines $((N - 20)) "$N")" "End: the last 21 items, as fxt-replay prints them"

keys Home
until_shown "item 1 of $N"
is "$(shown)" "$(lines 1 21)" "Home: the first 21 items"

keys / m a i n Enter
until_shown "item 2 of $N"
ok "/main: the second thread's main, in the lines held" test $? -eq 0
keys n
until_shown "item $K of $N"
ok "n: main's exit, item $K of $N, far past the lines held" test $? -eq 0
is "$(screen | sed -n 23p | sed 's/ *$//')" "$(lines "$K" "$K")" \
  "the line selected is fxt-replay's line $K"
keys N
until_shown "item 2 of $N"
ok "N: back to item 2, far before the lines held" test $? -eq 0
is "$(shown | head -2)" "$(lines 2 3)" "and its lines are fxt-replay's, from the second"

keys : 1 0 m s Enter
until_shown "item $G10 of $N"
ok ": 10ms: item $G10, the first at 10 ms or later" test $? -eq 0
ok "fxt-replay's line $G10 is on the screen" \
  sh -c "$T capture-pane -p -t v | sed 's/ *\$//' | grep -qxF -- '$(lines "$G10" "$G10")'"
keys : 5 0 0 1 0 0 0 Enter
until_shown "item $G5 of $N"
ok ": 5001000 (a timestamp): item $G5, the first at 5 ms or later" test $? -eq 0
keys : 1 0 s Enter
until_shown "no call at that time or later: the last one"
is "$(screen | sed -n 23p | sed 's/ *$//')" "$(lines "$N" "$N")" ": 10s, past the end: the last item"

# the timeline: z halves the window, 0 the whole trace
keys 2
wide() { screen | sed -n 2p | sed 's/.*, \(.*\) wide.*/\1/'; }
keys 0
sleep 0.3
w0=$(wide)
keys z
sleep 0.3
w1=$(wide)
keys z z z z z z z z
sleep 0.5
w9=$(wide)
ok "z zooms in: $w0 -> $w1 -> $w9" test "$w0" != "$w1" -a "$w1" != "$w9"
ok "zoomed in 9 times, bars still drawn" sh -c "$T capture-pane -p -t v | sed -n 4p | grep -q '[a-z]'"
keys 0
sleep 0.3
is "$(wide)" "$w0" "0: the whole trace again"
keys z z : 1 0 m s Enter
until_shown "from 10.000 ms,"
ok ": 10ms in the timeline: its window starts there" test $? -eq 0

keys q
sleep 0.3
is "$(cat "$TMPD/v.rc" 2>/dev/null)" 0 "q exits 0"

finish
