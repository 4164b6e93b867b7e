#!/bin/sh
# fxt-view on bad input: no archive, a missing file, an empty file, not an
# FXT archive, a truncated one, bad options (one line, exit 2, no
# terminal needed to say so); standard output or input not a terminal:
# one line, exit 2, nothing painted; --load-only prints what it holds.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
VIEW=$abs_top_builddir/fxt-view
GEN=$abs_top_builddir/bench/gen_archive
MK=$HELPERS/mkarchives
plan 12
[ -x "$VIEW" ] || skip_rest "fxt-view was not built (no ncurses)"
scratch
"$MK" "$TMPD" >/dev/null
"$GEN" --events 40 --order start -o "$TMPD/s.fxt"

# check NAME WANT-STDERR CMD...: exit 2, exactly that on standard error,
# nothing on standard output.
check() {
  name=$1; want=$2; shift 2
  err=$("$@" 2>&1 >"$TMPD/out"); rc=$?
  is "$rc $err $(wc -c <"$TMPD/out")" "2 $want 0" "$name"
}

check "no archive" "fxt-view: missing ARCHIVE
Try 'fxt-view --help'." "$VIEW"
check "missing file" "fxt-view: $TMPD/nope.fxt: No such file or directory" \
  "$VIEW" --load-only "$TMPD/nope.fxt"
check "empty file" "fxt-view: $TMPD/empty.fxt: empty file, not an FXT archive" \
  "$VIEW" --load-only "$TMPD/empty.fxt"
check "not FXT" "fxt-view: $TMPD/bad-nomagic.fxt: not an FXT archive (no magic record at offset 0)" \
  "$VIEW" --load-only "$TMPD/bad-nomagic.fxt"
check "truncated" "fxt-view: $TMPD/bad-truncated.fxt: record runs past the end of the input (header says 2 words, 8 bytes left) at byte 704" \
  "$VIEW" --load-only "$TMPD/bad-truncated.fxt"
check "--by unknown" "fxt-view: --by: unknown key 'cpu'
Try 'fxt-view --help'." "$VIEW" --by cpu "$TMPD/s.fxt"
check "output not a terminal" \
  "fxt-view: standard output is not a terminal: fxt-view is interactive (fxt-tree and fxt-replay print text)" \
  "$VIEW" "$TMPD/s.fxt"
# script(1) gives it a terminal for its output (bsdutils: every Debian system has it)
if command -v script >/dev/null 2>&1; then
  err=$(script -qc "$VIEW $TMPD/s.fxt </dev/null" /dev/null 2>&1 | tr -d '\r')
  is "$err" "fxt-view: standard input is not a terminal: fxt-view is interactive (fxt-tree and fxt-replay print text)" \
    "input not a terminal (output one): one line"
else
  skip "script(1) is not installed"
fi
is "$("$VIEW" --load-only "$TMPD/s.fxt" | sed -n 1p)" \
  "$TMPD/s.fxt: 51 records, 40 slices, 6 call paths, 1 thread, 40 timeline bars" \
  "--load-only: what the view holds"
is "$("$VIEW" --load-only "$TMPD/valid.fxt" | sed -n 2p)" "12 records dropped (on 1 thread)" \
  "--load-only: the drops"
is "$("$VIEW" --load-only "$TMPD/valid.fxt" | sed -n 3p)" \
  "a trace buffer filled up 1 time: records were likely dropped, the calls may be partial" "--load-only: another writer's full buffer"
"$VIEW" --help | grep -q '^Usage: fxt-view'
ok "--help" test $? -eq 0
finish
