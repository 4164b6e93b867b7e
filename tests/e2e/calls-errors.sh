#!/bin/sh
# fxt-tree and fxt-replay on bad input and bad options: one line naming
# the file (or the option) and the problem, exit status 2, no crash;
# fxt-replay prints what came before damage, then says where it is.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
TREE=$abs_top_builddir/fxt-tree
REPLAY=$abs_top_builddir/fxt-replay
MK=$HELPERS/mkarchives
GEN=$abs_top_builddir/bench/gen_archive
scratch
plan 24

"$MK" "$TMPD" >/dev/null
"$GEN" --events 40 --order start -o "$TMPD/s40.fxt"
mkdir "$TMPD/dir"

# check NAME WANT-STDERR CMD...: exit 2 and exactly that.
check() {
  name=$1; want=$2; shift 2
  err=$("$@" 2>&1 >/dev/null); rc=$?
  is "$rc $err" "2 $want" "$name"
}

for t in fxt-tree fxt-replay; do
  T=$abs_top_builddir/$t
  check "$t: missing file" "$t: $TMPD/nope.fxt: No such file or directory" "$T" "$TMPD/nope.fxt"
  check "$t: a directory" "$t: $TMPD/dir: Is a directory" "$T" "$TMPD/dir"
  check "$t: empty file" "$t: $TMPD/empty.fxt: empty file, not an FXT archive" \
    "$T" "$TMPD/empty.fxt"
  check "$t: not FXT" \
    "$t: $TMPD/bad-nomagic.fxt: not an FXT archive (no magic record at offset 0)" \
    "$T" "$TMPD/bad-nomagic.fxt"
  check "$t: truncated" "$t: $TMPD/bad-truncated.fxt: record runs past the end of the input (header says 2 words, 8 bytes left) at byte 704" \
    "$T" "$TMPD/bad-truncated.fxt"
  check "$t: no archive" "$t: missing ARCHIVE
Try '$t --help'." "$T"
  check "$t: --tid not a number" "$t: --tid: not a list of ids: 'x'
Try '$t --help'." "$T" --tid x "$TMPD/s40.fxt"
  check "$t: --depth 0" "$t: --depth: not a count above 0: '0'
Try '$t --help'." "$T" --depth 0 "$TMPD/s40.fxt"
done
check "fxt-tree: --focus on no call" "fxt-tree: $TMPD/s40.fxt: no call of a function named 'nosuch'" \
  "$TREE" --focus nosuch "$TMPD/s40.fxt"
check "fxt-tree: --min-share past 100" "fxt-tree: --min-share: not a percentage from 0 to 100: '200%'
Try 'fxt-tree --help'." "$TREE" --min-share 200% "$TMPD/s40.fxt"
check "fxt-tree: --by unknown" "fxt-tree: --by: unknown key 'cpu'
Try 'fxt-tree --help'." "$TREE" --by cpu "$TMPD/s40.fxt"
check "fxt-tree: --format unknown" "fxt-tree: --format: unknown format 'xml'
Try 'fxt-tree --help'." "$TREE" --format xml "$TMPD/s40.fxt"
check "fxt-replay: --since not a time" "fxt-replay: --since: not a time (ns, or a number with a unit): '1h'
Try 'fxt-replay --help'." "$REPLAY" --since 1h "$TMPD/s40.fxt"
check "fxt-replay: --match not a regex" "fxt-replay: --match '(': Unmatched ( or \\(
Try 'fxt-replay --help'." "$REPLAY" --match '(' "$TMPD/s40.fxt"
"$REPLAY" "$TMPD/bad-truncated.fxt" >"$TMPD/trunc.out" 2>/dev/null
ok "fxt-replay: what came before the damage is printed" test -s "$TMPD/trunc.out"
"$TREE" "$TMPD/extreme.fxt" >/dev/null 2>"$TMPD/x.err"; rc=$?
"$REPLAY" "$TMPD/extreme.fxt" >/dev/null 2>>"$TMPD/x.err"; rc=$rc/$?
is "$rc/$(wc -c <"$TMPD/x.err")" "0/0/0" "the whole 64-bit clock, control bytes in names: no error"
finish
