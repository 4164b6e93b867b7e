#!/bin/sh
# A plain archive of more than 1 MiB is read through a map of it
# (fxt/source.c), and an unmarked one is first looked through for late
# begins and ends (fxt/order.c's pass), over a map too: one map, the
# pass's handed to the reader when no thread of the pass still reads it
# (it was mapped twice).  The outputs: those of the same archive marked,
# and from a pipe.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
GEN=$abs_top_builddir/bench/gen_archive
TREE=$abs_top_builddir/fxt-tree
scratch
plan 4

"$GEN" --events 100000 --order start -o "$TMPD/u.fxt"
"$GEN" --events 100000 --order start --time-ordered -o "$TMPD/m.fxt"
is "$(FXT_THREADS=0 "$TREE" "$TMPD/u.fxt")" "$(FXT_THREADS=0 "$TREE" "$TMPD/m.fxt")" \
  "unmarked: the tree of the marked archive"
# shellcheck disable=SC2002 # a pipe, not the file
is "$(cat "$TMPD/u.fxt" | "$TREE" -F csv -)" "$("$TREE" -F csv "$TMPD/u.fxt")" \
  "from a pipe (copied into a file, mapped): the same"
if ! command -v strace > /dev/null 2>&1 || ! strace -f -o /dev/null true 2> /dev/null; then
  skip_rest "no strace"
fi
# maps FILE: how many maps of FILE's size fxt-tree made, on one thread.
maps() {
  FXT_THREADS=0 strace -f -e trace=mmap -o "$TMPD/trace" "$TREE" "$1" > /dev/null
  grep -c "mmap(NULL, $(wc -c < "$1"), PROT_READ, MAP_PRIVATE, " "$TMPD/trace"
}
is "$(maps "$TMPD/u.fxt")" 1 "unmarked ($(wc -c < "$TMPD/u.fxt") bytes): mapped once"
is "$(maps "$TMPD/m.fxt")" 1 "marked: mapped once"
finish
