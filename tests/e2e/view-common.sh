# Sourced by the replay list's tests (view-list.sh, view-late.sh,
# view-packed.sh), after their plan: the programs (VIEW, REPLAY, GEN), the
# rest skipped without fxt-view (no ncurses) or tmux, the scratch folder,
# a tmux server of their own ($T, killed at the end), the session $S (v
# unless set), and helpers that compare the screen with fxt-replay's
# lines, which each test writes to $TMPD/replay.txt.
VIEW=$abs_top_builddir/fxt-view
REPLAY=$abs_top_builddir/fxt-replay
GEN=$abs_top_builddir/bench/gen_archive
[ -x "$VIEW" ] || skip_rest "fxt-view was not built (no ncurses)"
command -v tmux >/dev/null 2>&1 || skip_rest "tmux is not installed"
scratch
T="tmux -S $TMPD/tmux.sock"
S=${S:-v}
trap '$T kill-server 2>/dev/null; [ -n "$FXT_KEEP_TMPD" ] || rm -rf "$TMPD"' EXIT
screen() { $T capture-pane -p -t "$S"; }
# until_shown TEXT [TENTHS]: waits (TENTHS of a second, 180 s by default:
# the index reads the whole archive, slowly under the sanitizers and load)
# for TEXT on the screen.  (CI once found view-list.sh's "indexing 93%"
# after 60 s, and view-late.sh's "indexing 87%" after 180 s: the index
# ended between that screen and the frame's wait for a key, which then had
# no timeout; view-idle.sh.)
until_shown() {
  i=0
  while [ $i -lt "${2:-1800}" ]; do
    screen | grep -qF -- "$1" && return 0
    sleep 0.1; i=$((i + 1))
  done
  diag "not shown: $1"; screen | sed 's/^/# /'
  return 1
}
keys() { $T send-keys -t "$S" "$@"; }
# the list's lines on the screen (items, rows 3-23)
shown() { screen | sed -n '3,23p' | sed 's/ *$//'; }
# lines A..B of fxt-replay's
lines() { sed -n "$1,$2p" "$TMPD/replay.txt"; }
