#!/bin/sh
# fxt-view's status line fits the terminal while the pass reads: at 80
# columns and at 60, with a long archive name, its end (the pane's words
# and their key hint, "(Esc: stay)") is shown, the least wanted parts made
# shorter or left out first (the name, the records' count, the seconds of
# "reading"); "reading" stays.  The tree's pass and the replay list's held
# (FXT_VIEW_LOAD_PAUSE, FXT_VIEW_LIST_PAUSE, while a file exists).  Before,
# the line was cut at the terminal's edge (6 of these fail on main).
# The tree's header says "(so far)" where "(reading: the totals so far)"
# does not fit.  Driven in tmux; skipped without tmux, or when fxt-view was not built.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
plan 10
. "$abs_top_srcdir/tests/e2e/view-common.sh"

A=app.2026-11-28T23-50-01.fxt
"$GEN" --events 40 --order start --threads 2 -o "$TMPD/$A"
status() { screen | sed -n "$1p" | sed 's/ *$//'; }

for w in 80 60; do
  S=w$w
  : >"$TMPD/pause"
  : >"$TMPD/lpause"
  $T new-session -d -s "$S" -x $w -y 24 \
    "FXT_VIEW_LOAD_PAUSE=$TMPD/pause FXT_VIEW_LIST_PAUSE=$TMPD/lpause $VIEW $TMPD/$A; sleep 600" 9>&-
  until_shown "| reading" >/dev/null
  line=$(status 24)
  ok "$w columns, the tree: the status line ends with its words ($line)" \
    sh -c "echo '$line' | grep -q ' | line 1/[0-9]*, [0-9]* paths\$'"
  ok "$w columns, the tree: and says it reads" sh -c "echo '$line' | grep -q '| reading'"
  hdr=$(status 2)
  ok "$w columns, the tree's header: the totals so far ($hdr)" sh -c "echo '$hdr' | grep -q '(.*so far)\$'"
  keys 4 End
  until_shown "then End" 100 >/dev/null
  line=$(status 24)
  ok "$w columns, End in the list: the hint is shown ($line)" \
    sh -c "echo '$line' | grep -q 'then End (Esc: stay)\$'"
  ok "$w columns, the list: and says the pass reads" sh -c "echo '$line' | grep -q '^.*reading [0-9]*s |'"
  rm -f "$TMPD/pause" "$TMPD/lpause"
  keys q
done
finish
