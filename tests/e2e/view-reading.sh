#!/bin/sh
# fxt-view shows its first screen while its pass over the archive reads on
# (issue 28: a 700 MB archive opened in under 5 s): the pass held after
# its first slices (FXT_VIEW_LOAD_PAUSE, while a file exists), the tree
# is drawn with the totals so far and "reading" on the status line, keys
# are answered (move, another pane, a search, the replay list: read
# meanwhile on threads of its own), then the pass goes on and
# the tree is the whole one (as view-tmux.sh has it).  q while the pass
# reads exits 0 at once.  FXT_VIEW_KEYLOG says the first screen's, each
# key's and the pass's times.  Skipped without tmux or fxt-view.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
plan 12
S=v
. "$abs_top_srcdir/tests/e2e/view-common.sh"

"$GEN" --events 40 --order start --threads 2 -o "$TMPD/s.fxt"
: >"$TMPD/pause"
# start NAME: fxt-view on s.fxt, its pass held, in a detached 80x24
# session; its exit status in $TMPD/NAME.rc
start() {
  $T new-session -d -s "$1" -x 80 -y 24 \
    "FXT_VIEW_LOAD_PAUSE=$TMPD/pause FXT_VIEW_KEYLOG=$TMPD/$1.log $VIEW $TMPD/s.fxt; echo \$? > $TMPD/$1.rc; sleep 600" 9>&-
}
# after KEYS TEXT: sends the keys, waits for TEXT
after() { keys "$1"; until_shown "$2"; }

start v
until_shown "(reading: the totals so far)"
ok "the first screen while the pass reads" \
  sh -c "$T capture-pane -p -t v | sed -n 24p | grep -q '| reading, [0-9]* s |'"
ok "the tree so far: main, counted or on the way to a counted call" \
  sh -c "$T capture-pane -p -t v | sed -n '3,23p' | grep -q ' main\$'"
ok "a key while reading: the thread list" after 3 "slices"
ok "back to the tree, / searches what it has so far" after "1" "(reading: the totals so far)"
keys / m a i n Enter
until_shown "line 1/" >/dev/null
ok "the search answered while reading" sh -c "$T capture-pane -p -t v | sed -n 24p | grep -q 'reading.*line 1/'"
ok "the replay list asked for while the tree's pass is held: read meanwhile" after 4 "item 1 of"
keys 1
rm -f "$TMPD/pause"
ok "the pass ends: the whole tree" until_shown "records | line 1/4,"
scr=$(screen)
is "$(echo "$scr" | sed -n '3,6p' | cut -c42-)" \
'- main
  + cold
    hot
    rec [recursive]' "the tree as a pass read before the first screen has it"
is "$(echo "$scr" | sed -n 24p | cut -c1-20)" "s.fxt | 51 records |" "every record counted"
keys q
i=0
while [ ! -s "$TMPD/v.rc" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
ok "the key log: first screen, keys, the pass" sh -c "grep -q '^screen [0-9.]* ms' '$TMPD/v.log' &&
  grep -q '^key 3 [0-9.]* ms' '$TMPD/v.log' && grep -q '^pass [0-9.]* ms' '$TMPD/v.log'"

: >"$TMPD/pause"
S=early
start early
until_shown "(reading: the totals so far)" >/dev/null
keys q
i=0
while [ ! -s "$TMPD/early.rc" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
is "$(cat "$TMPD/early.rc" 2>/dev/null)" 0 "q while the pass reads: exit 0, at once"
ok "the pass still held then" test -e "$TMPD/pause"
rm -f "$TMPD/pause"

finish
