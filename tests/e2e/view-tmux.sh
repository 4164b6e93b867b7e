#!/bin/sh
# fxt-view driven in tmux (an 80x24 terminal: send-keys, capture-pane) on
# gen_archive's known tree (main -> cold -> leaf, hot, rec; two threads):
# the tree shows, folds and unfolds (Enter, + and -), / finds a function,
# t jumps to its thread's timeline, the timeline shows a thread and its
# bars and goes to the next, zooms; the replay list in time order; the drops on the
# status line; colours only where the terminal has them; a resize; ? and its keys; q
# exits 0.  Bad input: one line, exit 2, in a terminal or not.  Skipped
# without tmux, or when fxt-view was not built (no ncurses).
. "$abs_top_srcdir/tests/lib/test_subr.sh"
VIEW=$abs_top_builddir/fxt-view
GEN=$abs_top_builddir/bench/gen_archive
MK=$HELPERS/mkarchives
plan 23
[ -x "$VIEW" ] || skip_rest "fxt-view was not built (no ncurses)"
command -v tmux >/dev/null 2>&1 || skip_rest "tmux is not installed"
scratch

"$GEN" --events 40 --order start --threads 2 -o "$TMPD/s.fxt"
"$MK" "$TMPD" >/dev/null

T="tmux -S $TMPD/tmux.sock"
# start NAME CMD: a detached 80x24 session running CMD, then its exit
# status in $TMPD/NAME.rc.
start() {
  $T new-session -d -s "$1" -x 80 -y 24 "$2; echo \$? > $TMPD/$1.rc; sleep 600" 9>&-
}
screen() { $T capture-pane -p -t "$1"; }
# until NAME TEXT: waits (up to 10 s) for TEXT on NAME's screen.
until_shown() {
  i=0
  while [ $i -lt 100 ]; do
    screen "$1" | grep -qF -- "$2" && return 0
    sleep 0.1; i=$((i + 1))
  done
  diag "not shown: $2"; screen "$1" | sed 's/^/# /'
  return 1
}
# keys NAME KEY...: sends them, then waits for the screen to settle.
keys() {
  s=$1; shift
  $T send-keys -t "$s" "$@"
  sleep 0.3
}
trap '$T kill-server 2>/dev/null; [ -n "$FXT_KEEP_TMPD" ] || rm -rf "$TMPD"' EXIT

start v "$VIEW $TMPD/s.fxt"
until_shown v "call path"
scr=$(screen v)
# names: from column 42, after calls, total, self and share
is "$(echo "$scr" | sed -n '3,6p' | cut -c42-)" \
'- main
  + cold
    hot
    rec [recursive]' "the tree: main unfolded, cold folded (leaf hidden), recursion marked"
is "$(echo "$scr" | sed -n 24p | cut -c1-30)" "s.fxt | 51 records | line 1/4," \
  "the status line: the archive, its records, on the 24th line"
ok "80 columns: no line longer" test "$(echo "$scr" | awk '{ if (length > m) m = length } END { print m }')" -le 80

keys v Down Enter
is "$(screen v | sed -n '4,5p' | cut -c42-)" '  - cold
      leaf' "Enter unfolds cold: leaf below it"
keys v Enter
ok "Enter again folds it" sh -c "! $T capture-pane -p -t v | grep -q leaf"
keys v -
is "$(screen v | grep '[0-9]% ' | cut -c42-)" '+ main' "- folds all: main alone"
keys v +
is "$(screen v | grep -c '[0-9]% ')" 5 "+ unfolds all: five call paths"
keys v - / l e a f Enter
is "$(screen v | sed -n 24p | grep -o 'line [0-9]*/[0-9]*')" "line 3/5" \
  "/leaf: leaf found, the path to it unfolded, the line selected"
ok "/leaf: leaf on the screen" sh -c "$T capture-pane -p -t v | grep -q '^ *10 .*leaf$'"

keys v t
until_shown v "thread 1000"
scr=$(screen v)
ok "t: leaf on a thread's timeline" sh -c "echo '$scr' | grep -q '^ 3 .*leaf'"
keys v 0
scr=$(screen v)
# leaf takes the most time on the second thread (gen_archive's numbers)
is "$(echo "$scr" | sed -n 2p | cut -c1-33)" "thread 100001 (pid 1000) 2/2  fro" \
  "the timeline: thread, pid, which of the threads; 0: the whole trace"
is "$(echo "$scr" | sed -n 4p | cut -c1-7)" " 1 main" "depth 1: main, as a bar named"
ok "depth 2: hot and cold" sh -c "echo '$scr' | sed -n 5p | grep -q 'hot.*cold'"
keys v Up
until_shown v "thread 100000 (pid 1000) 1/2" >/dev/null
ok "Up: the other thread" sh -c "$T capture-pane -p -t v | grep -q 'thread 100000'"
before=$(screen v | sed -n 2p | sed 's/.*, \(.*\) wide.*/\1/')
keys v z
after=$(screen v | sed -n 2p | sed 's/.*, \(.*\) wide.*/\1/')
ok "z zooms in: $before -> $after wide" test "$before" != "$after"

keys v 4
until_shown v "main() {" >/dev/null
is "$(screen v | sed -n '2,4p' | sed 's/.*call (/call (/; s/^ *[0-9.]* *\([0-9]*\) | /\1 /')" 'call (time order)
100000 main() {
100001 main() {' "4: the replay list in time order: both threads' main first"

# Colours: the bars' on a terminal that has them (tmux's own TERM), none
# on one that has not (vt100: reverse video only).
keys v 2
ok "colours where the terminal has them" sh -c "$T capture-pane -e -p -t v | grep -q '\[[0-9;]*4[0-7]m'"

$T resize-window -t v -x 60 -y 20
sleep 0.3
scr=$(screen v)
ok "resized to 60x20: redrawn to fit" test "$(echo "$scr" | sed -n 20p | cut -c1-5)" = "s.fxt"

keys v '?'
screen v >"$TMPD/help.scr"
keys v x
screen v >"$TMPD/back.scr"
ok "? shows the keys, a key returns" sh -c "grep -q '^fxt view: keys' '$TMPD/help.scr' &&
  grep -q '^ fxt view  1 tree' '$TMPD/back.scr'"
keys v q
sleep 0.3
is "$(cat "$TMPD/v.rc" 2>/dev/null)" 0 "q exits 0"

start mono "TERM=vt100 $VIEW $TMPD/s.fxt"
until_shown mono "call path" >/dev/null
keys mono 2
ok "no colours on a vt100" sh -c "! $T capture-pane -e -p -t mono | grep -q '\[[0-9;]*[34][0-7]m'"
keys mono q

start drops "$VIEW $TMPD/valid.fxt"
until_shown drops "DROPPED" >/dev/null
ok "drops on the status line" sh -c "$T capture-pane -p -t drops | sed -n 24p | grep -q '| 12 DROPPED (1 thr) |'"
ok "full buffers on the status line" sh -c "$T capture-pane -p -t drops | sed -n 24p | grep -q '| BUFFER FULL 1x |'"
keys drops q

finish
